//! A follower's own wake records, kept until it sees the writer's row for each.
//!
//! With a Lease, a replica that does not hold it measures every wake but stores none. Each
//! wake it measured waits here until the rows it follows ([`super::follow`]) include the
//! same wake ([`one_wake`]); if this replica takes the Lease first, what is still here is
//! stored then (each once, whoever stored it meanwhile). So a wake the last writer measured
//! but never stored (it was killed first, or frozen) is stored by the next.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::measure::tracker::one_wake;
use crate::telemetry::metrics::Metrics;
use scaling_facts_api::WakeRecord;

/// The most wakes kept; past it the oldest go (with a warning): a writer that missed that
/// many is not missing a few.
const MAX_HELD: usize = 100_000;
/// How long a wake is kept. Longer than any failover (a follower that outlives its writer
/// takes the Lease within its duration) and than a store outage the writer rides out in its
/// own spool; past it the writer measured the wake otherwise (another kind, or not at all),
/// and a warning says so.
const HOLD_FOR: Duration = Duration::from_secs(600);

pub struct Held {
    wakes: Mutex<Vec<(Instant, WakeRecord)>>,
    metrics: Arc<Metrics>,
}

impl Held {
    pub fn new(metrics: Arc<Metrics>) -> Self {
        Self {
            wakes: Mutex::default(),
            metrics,
        }
    }

    fn wakes(&self) -> MutexGuard<'_, Vec<(Instant, WakeRecord)>> {
        self.wakes.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn hold(&self, w: WakeRecord) {
        let mut held = self.wakes();
        if held.len() >= MAX_HELD {
            let (_, gone) = held.remove(0);
            tracing::warn!(revision = %gone.revision, start_second = gone.start_second, "the writer has not stored this wake this replica measured, and too many are waiting: forgotten");
        }
        held.push((Instant::now(), w));
        self.metrics.wakes_held.set(held.len() as i64);
    }

    /// The store holds these rows: this replica's own records of the same wakes are no
    /// longer needed. Wakes kept past [`HOLD_FOR`] go too, with a warning.
    pub fn confirm(&self, stored: &[WakeRecord]) {
        let mut held = self.wakes();
        if held.is_empty() {
            return;
        }
        held.retain(|(since, h)| {
            if since.elapsed() > HOLD_FOR {
                tracing::warn!(revision = %h.revision, start_second = h.start_second, kind = %h.kind, outcome = %h.outcome, "the writer never stored this wake as this replica measured it: forgotten");
                return false;
            }
            !stored.iter().any(|s| one_wake(h, s))
        });
        self.metrics.wakes_held.set(held.len() as i64);
    }

    /// Everything kept, oldest first, to store now.
    pub fn take(&self) -> Vec<WakeRecord> {
        let mut held = self.wakes();
        self.metrics.wakes_held.set(0);
        std::mem::take(&mut *held)
            .into_iter()
            .map(|(_, w)| w)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Duration as Delta};
    use scaling_facts_api::{Outcome, PhaseDurations, Precision, WakeKind};

    fn wake(uid: &str, ms: i64, precision: Precision) -> WakeRecord {
        let requested_at = DateTime::from_timestamp_millis(1_800_000_000_000 + ms).unwrap();
        WakeRecord {
            release: "shop.prod".into(),
            revision: "shop-00001".into(),
            revision_uid: uid.into(),
            kind: WakeKind::Wake,
            outcome: Outcome::Served,
            requested_at,
            start_second: requested_at.timestamp(),
            serving_at: Some(requested_at + Delta::milliseconds(900)),
            duration_ms: 900,
            phases: PhaseDurations::default(),
            precision,
            failure_reason: None,
            failure_message: None,
            caused_by: None,
        }
    }

    #[test]
    fn a_held_wake_goes_when_the_writer_stored_it_under_any_second() {
        let metrics = Arc::new(Metrics::new());
        let held = Held::new(metrics.clone());
        held.hold(wake("a", 999, Precision::Ms));
        held.hold(wake("a", 60_000, Precision::Ms));
        held.hold(wake("b", 999, Precision::Ms));
        assert_eq!(metrics.wakes_held.get(), 3);
        // The writer's record of the first: 4 ms later by its clock, the next second.
        held.confirm(&[wake("a", 1_003, Precision::Ms)]);
        assert_eq!(metrics.wakes_held.get(), 2);
        // A record to the second, a second and a half later: the same wake of `b`.
        held.confirm(&[wake("b", 2_500, Precision::S)]);
        let left = held.take();
        assert_eq!(left, [wake("a", 60_000, Precision::Ms)]);
        assert_eq!(metrics.wakes_held.get(), 0);
    }
}
