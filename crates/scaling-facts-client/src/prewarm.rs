//! Prewarming the releases a caller depends on, so that a chain of cold releases costs
//! about the slowest start instead of the sum (ADR 0041 §7).
//!
//! A prewarm is a fire-and-forget request, guarded so that it can never pile up behind a
//! slow start: a cooldown per release, an in-flight flag kept in the same lock as the
//! cooldown's timestamp, a drop guard that clears the flag however the task ends (normal
//! return, error, panic, cancellation), and a kill switch checked when the prewarm is asked
//! for and again inside the task, right before anything is sent.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::caller::Transport;

#[derive(Debug, Default, Clone, Copy)]
struct WarmState {
    last_started: Option<Instant>,
    in_flight: bool,
}

type States = Arc<Mutex<HashMap<String, WarmState>>>;

fn lock(states: &States) -> std::sync::MutexGuard<'_, HashMap<String, WarmState>> {
    states.lock().unwrap_or_else(|e| e.into_inner())
}

/// Clears the in-flight flag when dropped: on every exit path of the prewarm task.
struct InFlightReset {
    states: States,
    release: String,
}

impl Drop for InFlightReset {
    fn drop(&mut self) {
        if let Some(s) = lock(&self.states).get_mut(&self.release) {
            s.in_flight = false;
        }
    }
}

/// Prewarms releases through a transport.
pub struct Prewarmer<T> {
    transport: Arc<T>,
    cooldown: Duration,
    states: States,
    kill: Arc<AtomicBool>,
}

impl<T: Transport + 'static> Prewarmer<T> {
    pub fn new(transport: Arc<T>, cooldown: Duration) -> Self {
        Self {
            transport,
            cooldown,
            states: Arc::default(),
            kill: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The kill switch: set, no prewarm is sent, even one already spawned.
    pub fn kill_switch(&self) -> Arc<AtomicBool> {
        self.kill.clone()
    }

    /// Whether a prewarm of `release` may start now; if so, it is marked started and in
    /// flight in the same critical section, so two callers cannot both win.
    pub fn should_warm(&self, release: &str) -> bool {
        if self.kill.load(Ordering::Acquire) {
            return false;
        }
        let now = Instant::now();
        let mut states = lock(&self.states);
        let s = states.entry(release.to_owned()).or_default();
        let cooling = s
            .last_started
            .is_some_and(|t| now.duration_since(t) < self.cooldown);
        if s.in_flight || cooling {
            return false;
        }
        s.last_started = Some(now);
        s.in_flight = true;
        true
    }

    pub fn in_flight(&self, release: &str) -> bool {
        lock(&self.states).get(release).is_some_and(|s| s.in_flight)
    }

    /// Starts a prewarm of each release that may be warmed, in parallel; returns the
    /// spawned tasks (callers need not wait for them).
    pub fn prewarm(&self, releases: &[String]) -> Vec<JoinHandle<()>> {
        releases
            .iter()
            .filter(|r| self.should_warm(r))
            .map(|release| {
                let reset = InFlightReset {
                    states: self.states.clone(),
                    release: release.clone(),
                };
                let transport = self.transport.clone();
                let kill = self.kill.clone();
                let release = release.clone();
                tokio::spawn(async move {
                    let _reset = reset;
                    // The switch may have been thrown between the spawn and now.
                    if kill.load(Ordering::Acquire) {
                        return;
                    }
                    if let Err(e) = transport.send(&release, None).await {
                        tracing::debug!(%release, ?e, "prewarm did not reach the release");
                    }
                })
            })
            .collect()
    }
}
