//! What the background parts of the service say about themselves: each watched kind, the
//! history load, and the write path. The engine and the writer update it when something
//! changes; `/health` and the metrics read it. Nothing here is on the hot read path.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

/// One watched kind, as the engine sees it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KindState {
    /// Listed at least once since start.
    pub listed: bool,
    /// Listed, and no error since the last event (or the error is old).
    pub healthy: bool,
    pub errors: u64,
    pub last_event: Option<DateTime<Utc>>,
}

/// The load of the store's history, which runs beside the watchers.
#[derive(Debug, Clone, PartialEq)]
pub enum HistoryState {
    /// Still trying; the last attempt's error, if one failed.
    Loading {
        error: Option<String>,
    },
    Loaded {
        wakes: u64,
    },
    /// The store answered with rows this service cannot read; measuring goes on without.
    Failed {
        error: String,
    },
}

/// The write path: what is measured but not yet stored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WriteState {
    /// Writes handed on (this process and the spool it found) and writes stored or set aside.
    pub appended: u64,
    pub stored: u64,
    pub spool_bytes: u64,
    pub rejected: u64,
    /// When the queue last went from empty to not empty; None while empty.
    pub behind_since: Option<Instant>,
    /// The store's error on the last write that failed, until one succeeds.
    pub store_error: Option<String>,
    /// The spool cannot be written: writes wait in memory.
    pub spool_error: Option<String>,
}

impl WriteState {
    pub fn queued(&self) -> u64 {
        self.appended.saturating_sub(self.stored)
    }

    /// How long writes have waited without the queue emptying.
    pub fn behind(&self, now: Instant) -> Duration {
        self.behind_since
            .map_or(Duration::ZERO, |since| now.duration_since(since))
    }
}

/// Shared by the engine, the writer and the API.
#[derive(Debug)]
pub struct Components {
    kinds: Mutex<BTreeMap<&'static str, KindState>>,
    history: Mutex<HistoryState>,
    writes: Mutex<WriteState>,
}

impl Default for Components {
    fn default() -> Self {
        Self {
            kinds: Mutex::default(),
            history: Mutex::new(HistoryState::Loading { error: None }),
            writes: Mutex::default(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Components {
    pub fn set_kind(&self, kind: &'static str, state: KindState) {
        lock(&self.kinds).insert(kind, state);
    }

    pub fn kinds(&self) -> BTreeMap<&'static str, KindState> {
        lock(&self.kinds).clone()
    }

    pub fn set_history(&self, state: HistoryState) {
        *lock(&self.history) = state;
    }

    pub fn history(&self) -> HistoryState {
        lock(&self.history).clone()
    }

    /// Changes the write state; keeps `behind_since` in step with the queue.
    pub fn update_writes(&self, f: impl FnOnce(&mut WriteState)) -> WriteState {
        let mut w = lock(&self.writes);
        f(&mut w);
        match (w.queued(), w.behind_since) {
            (0, _) => w.behind_since = None,
            (_, None) => w.behind_since = Some(Instant::now()),
            _ => {}
        }
        w.clone()
    }

    pub fn writes(&self) -> WriteState {
        lock(&self.writes).clone()
    }
}
