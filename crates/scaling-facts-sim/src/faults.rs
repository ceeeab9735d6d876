//! Fault injection for the simulated API server: what a real control plane does to its
//! clients on a bad day.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::sync::watch;

/// Faults to apply, set in-process or over the admin endpoint.
#[derive(Debug)]
pub struct Faults {
    /// Bumped to end every open watch.
    drop_generation: watch::Sender<u64>,
    /// The next this-many watch requests are answered with `410 Gone`.
    gone_next: AtomicU32,
    /// Added before every API response.
    delay_ms: AtomicU64,
    /// New connections are dropped until then.
    refuse_until: Mutex<Option<Instant>>,
    /// The next this-many writes (create, replace, patch, delete) fail with `500`.
    fail_writes: AtomicU32,
    /// Every API request is answered `503` until then.
    unavailable_until: Mutex<Option<Instant>>,
}

impl Default for Faults {
    fn default() -> Self {
        Self {
            drop_generation: watch::Sender::new(0),
            gone_next: AtomicU32::new(0),
            delay_ms: AtomicU64::new(0),
            refuse_until: Mutex::new(None),
            fail_writes: AtomicU32::new(0),
            unavailable_until: Mutex::new(None),
        }
    }
}

/// A fault, as the admin endpoint takes it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "fault", rename_all = "snake_case")]
pub enum Fault {
    /// End every open watch now.
    DropWatches,
    /// Answer the next `count` watches with 410 Gone.
    GoneNext { count: u32 },
    /// Restart the API server: history lost, versions jump, watches dropped.
    Restart,
    /// Delay every response by `ms` (0 to stop).
    Delay { ms: u64 },
    /// Refuse new connections for `ms`.
    Refuse { ms: u64 },
    /// Answer the next `count` writes with 500, as an API server does while etcd elects a
    /// new leader; reads still work.
    FailWrites { count: u32 },
    /// The API server is away for `ms`: every open watch ends now and every request is
    /// answered `503` until then. Nothing is forgotten: watches then resume from their
    /// versions and receive, at once, everything written meanwhile (a control-plane
    /// upgrade, an etcd election, a cut network).
    Unavailable { ms: u64 },
}

impl Faults {
    pub fn drop_watches(&self) {
        self.drop_generation.send_modify(|g| *g += 1);
    }

    pub fn watch_drops(&self) -> watch::Receiver<u64> {
        self.drop_generation.subscribe()
    }

    pub fn fail_writes(&self, count: u32) {
        self.fail_writes.store(count, Ordering::SeqCst);
    }

    /// Whether this write should fail, consuming one.
    pub fn take_write_failure(&self) -> bool {
        self.fail_writes
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }

    pub fn gone_next(&self, count: u32) {
        self.gone_next.store(count, Ordering::Release);
    }

    /// Whether this watch request should get 410, consuming one.
    pub fn take_gone(&self) -> bool {
        self.gone_next
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok()
    }

    pub fn set_delay(&self, ms: u64) {
        self.delay_ms.store(ms, Ordering::Release);
    }

    pub fn delay(&self) -> Duration {
        Duration::from_millis(self.delay_ms.load(Ordering::Acquire))
    }

    pub fn refuse_for(&self, d: Duration) {
        *self.refuse_until.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now() + d);
    }

    pub fn unavailable_for(&self, d: Duration) {
        *self
            .unavailable_until
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(Instant::now() + d);
        self.drop_watches();
    }

    /// Whether requests are answered `503` now.
    pub fn unavailable(&self) -> bool {
        self.unavailable_until
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some_and(|until| Instant::now() < until)
    }

    pub fn refusing(&self) -> bool {
        self.refuse_until
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some_and(|until| Instant::now() < until)
    }
}
