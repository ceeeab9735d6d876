//! The revision's last rest: taken for the store whenever it changes, and restored by a
//! new process before its lists come in.
//!
//! A running process sees a wake that went by unseen (every event of it lost to an
//! outage) by comparing a list with its memory: the Deployment's generation moved on, the
//! PA's `NoTraffic` is newer. A restarted process has no memory but what the store holds,
//! so the store holds that: without it, a wake lived while the API server was away and the
//! process was being rescheduled would leave nothing a fresh list could be compared with.

use super::evidence::Autoscaler;
use super::{Machine, Stream, Thresholds};
use crate::measure::observe::{Cond, CondStatus, DeploymentSnap, PaSnap, Stamp};
use crate::measure::wake::{PaRest, RestAt};

impl Machine {
    /// The rest to store, when it changed since the last call.
    pub fn take_rest(&mut self) -> Option<RestAt> {
        if !std::mem::take(&mut self.rest_changed) {
            return None;
        }
        // Each stream's part only when it shows the rest after the last wake: a state a
        // backlog replayed (the Deployment's has no date) may be older than that wake.
        let last = self.last();
        let deployment = self
            .deployment
            .filter(|d| d.replicas == 0)
            .filter(|_| last.is_none_or(|l| self.deployment_rest > l.id))
            .zip(self.zero_seen[Stream::Deployment as usize])
            .map(|(d, seen)| (d.generation, seen));
        let autoscaler = self
            .pa
            .as_ref()
            .filter(|p| p.desired() == Some(0))
            .and_then(|p| {
                let (timed_out, since) = match p.ended_since() {
                    [Some(since), _] => (false, since),
                    [None, Some(since)] => (true, since),
                    [None, None] => return None,
                };
                if last.is_some_and(|l| since.timestamp() < l.start_second) {
                    return None;
                }
                Some(PaRest {
                    timed_out,
                    initialized: p.snap.initialized,
                    since,
                    seen: self.zero_seen[Stream::Autoscaler as usize]?,
                })
            });
        // Seen created, nothing at rest yet and nothing recorded: that sight alone.
        let born = self.seen_born && last.is_none();
        (deployment.is_some() || autoscaler.is_some() || born).then_some(RestAt {
            deployment,
            autoscaler,
            // As the store knows that wake: by its record's start second, which may be
            // later than the earliest its evidence allows (a `Queued` after the revision's
            // creation names an initial start).
            after_start: last.map(|l| {
                l.start_second
                    .max(self.recorded.newest().unwrap_or(i64::MIN))
            }),
        })
    }

    /// The last process's rest when wakes were recorded after it (the process died before
    /// it saw the revision at rest again): its Deployment's generation still counts what
    /// came since. Each of those wakes rose and fell, two changes at the least; a first
    /// list at zero two changes further on is one more wake (or two scale changes
    /// inside one of them, which nothing listed tells apart).
    pub fn restore_rest_behind(&mut self, rest: RestAt, wakes_after: i64) {
        if let Some((generation, _)) = rest.deployment {
            self.rest_behind = Some(generation + 2 * wakes_after);
        }
    }

    /// The rest the last process stored, as if this process had seen it: taken before
    /// any object of the revision is in (and after its recorded wakes), so the lists
    /// compare with it. Versions are 0, so that whatever the lists show replaces it.
    pub fn restore_rest(&mut self, rest: RestAt, stamp: Stamp, t: &Thresholds) {
        if rest == RestAt::default() {
            self.seen_born = true;
            return;
        }
        if let Some((generation, seen)) = rest.deployment.filter(|_| self.deployment.is_none()) {
            self.deployment = Some(DeploymentSnap {
                version: 0,
                replicas: 0,
                generation,
            });
            self.zero_seen[Stream::Deployment as usize] = Some(seen);
            self.deployment_rest = self.next_id + 1;
            self.saw_zero(seen.timestamp());
        }
        if let Some(p) = rest.autoscaler.filter(|_| self.pa.is_none()) {
            let mut pa = Autoscaler::default();
            let reason = if p.timed_out { "TimedOut" } else { "NoTraffic" };
            pa.update(
                PaSnap {
                    version: 0,
                    desired: Some(0),
                    actual: Some(0),
                    active: Some(Cond {
                        status: CondStatus::False,
                        reason: Some(reason.into()),
                        message: None,
                        since: Some(p.since),
                    }),
                    initialized: p.initialized,
                    // (Not kept: the PA the lists bring has it.)
                    initialized_since: None,
                },
                stamp,
                t,
            );
            self.pa = Some(pa);
            self.zero_seen[Stream::Autoscaler as usize] = Some(p.seen);
            if !p.timed_out {
                self.saw_zero(p.seen.timestamp());
            }
        }
    }
}
