//! Where a revision stands, for the runtime read.

use chrono::{DateTime, Utc};

use super::Machine;
use super::evidence::Autoscaler;
use scaling_facts_api::{Failure, Phase};

/// What a revision looks like now, for the runtime read.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub phase: Phase,
    pub desired: u32,
    pub actual: u32,
    pub serving_since: Option<DateTime<Utc>>,
    pub wake: Option<(DateTime<Utc>, DateTime<Utc>)>,
    pub failure: Option<Failure>,
}

impl Machine {
    /// Where the revision stands, for the runtime read.
    pub fn summary(&self) -> Summary {
        // Counted, not collected: this runs after nearly every event.
        let serving = || self.pods.iter().filter(|p| p.snap.serving());
        let serving_count = serving().count();
        let serving_since = serving().filter_map(|p| p.snap.ready.as_ref()?.since).min();
        let pa = self.pa.as_ref();
        let desired = pa
            .and_then(Autoscaler::desired)
            .unwrap_or(self.deployment.map_or(0, |d| d.replicas));
        let actual = pa
            .and_then(Autoscaler::actual)
            .unwrap_or(serving_count as u32);
        let (phase, wake) = match &self.wake {
            Some(w) => {
                let (scheduled, running) = self.phases(w);
                let phase = if w.failed.is_some() {
                    Phase::Failed
                } else if running.is_some() {
                    Phase::Starting
                } else if scheduled.is_some() {
                    Phase::PullingImage
                } else {
                    Phase::Provisioning
                };
                (phase, Some((w.requested.wall, w.deadline_at)))
            }
            None if serving_count > 0 => (Phase::Serving, None),
            None if self.failure.is_some() => (Phase::Failed, None),
            None => (Phase::Idle, None),
        };
        Summary {
            phase,
            desired,
            actual,
            serving_since,
            wake,
            failure: self.failure.as_deref().cloned(),
        }
    }
}
