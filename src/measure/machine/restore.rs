//! What the store knew before this process started: recorded wakes (their keys refuse
//! duplicates) and the wake underway, continued once the lists are in.

use chrono::{DateTime, Utc};

use super::dating::At;
use super::evidence::Autoscaler;
use super::{Closed, Ctx, Machine, remember};
use crate::measure::observe::Stamp;
use crate::measure::wake::{Outcome, WakeKind};

impl Machine {
    /// A wake the store already holds.
    pub fn restore(&mut self, start_second: i64, outcome: Outcome, end: DateTime<Utc>) {
        remember(&mut self.recorded, start_second);
        if outcome == Outcome::Served {
            self.served_before = true;
            self.last_recorded_serving = self.last_recorded_serving.max(Some(end));
        }
        if self.last.is_none_or(|l| l.start_second < start_second) {
            self.next_id += 1;
            self.last = Some(Closed {
                id: self.next_id,
                start_second,
                end_second: end.timestamp(),
                closed: None,
            });
        }
    }

    /// A wake the previous process had underway; continued once the lists are in.
    pub fn restore_open(
        &mut self,
        kind: WakeKind,
        requested_at: DateTime<Utc>,
        start_second: i64,
        now: Stamp,
        ctx: &Ctx,
    ) {
        if self.wake.is_some() {
            return;
        }
        self.open_as(kind, At::back_from(now, requested_at), ctx);
        let id = self.next_id;
        if let Some(w) = self.wake.as_mut() {
            w.queued = Some(start_second);
            w.floor = w.floor.min(start_second - 1);
            w.evidence = true;
        }
        // The lists are fresh: whatever wants pods now rose for it before the restart,
        // and whatever is back at zero already rose and fell for it.
        let levels = [
            self.deployment.map(|d| d.replicas),
            self.pa.as_ref().and_then(Autoscaler::desired),
        ];
        for (s, level) in levels.into_iter().enumerate() {
            let Some(level) = level else { continue };
            self.claimed[s] = id;
            if level == 0
                && let Some(w) = self.wake.as_mut()
            {
                w.fell[s] = true;
            }
        }
    }

    /// The wake underway, unless it was already recorded as failed.
    pub fn open_wake(&self) -> Option<(WakeKind, DateTime<Utc>, i64)> {
        let w = self.wake.as_ref().filter(|w| w.failed.is_none())?;
        Some((w.kind, w.requested.wall, w.start_second()))
    }
}
