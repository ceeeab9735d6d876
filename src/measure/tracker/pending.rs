//! What a revision's objects say before its Revision object is in.
//!
//! Watches keep no common order, and after an outage each kind's backlog comes back on its
//! own schedule: the revisions' watch may be the last, seconds after the pods' and the
//! PodAutoscalers' have replayed a whole wake, pods created, ready and deleted. A revision
//! is measured only once its Revision is in (its name, creation and annotations), and a
//! machine fed those objects meanwhile would keep only where they ended: a pod that served
//! and went is gone from it before the first evaluation could see it serve. So until the
//! Revision arrives its observations wait here, each with its stamp, and are then fed to
//! the machine in their order, evaluated one by one as if the Revision had been there.
//! Dating is the stamps', so waiting changes no time, and each is judged knowing the
//! watches that were down when it arrived (a backlog still to come then holds a verdict).
//!
//! A revision whose Revision never comes (a watch that cannot list them) keeps at most
//! [`MAX_PENDING`]; older observations are then taken in without evaluation, as before.

use super::{Output, Tracker, rev_entry};
use crate::measure::machine::{Machine, Thresholds};
use crate::measure::observe::{Observation, Stamp};

/// The most observations kept for one revision whose Revision is not in.
pub const MAX_PENDING: usize = 256;

impl Tracker {
    /// Takes in an observation of a revision's Deployment, PodAutoscaler or pods, or keeps
    /// it while the Revision is not in. Returns the revision to evaluate; None when kept.
    pub(super) fn take_in(&mut self, obs: Observation, stamp: Stamp) -> Option<String> {
        let uid = obs.revision_uid()?.to_owned();
        let t = self.settings.thresholds;
        // A pod gone of a revision never seen: nothing to remove, nothing to keep.
        if matches!(obs, Observation::PodGone { .. }) && !self.revisions.contains_key(uid.as_str())
        {
            return Some(uid);
        }
        let rev = rev_entry(&mut self.revisions, &uid);
        if rev.machine.created().is_some() {
            ingest(&mut rev.machine, obs, stamp, &t);
            return Some(uid);
        }
        let then = self.behind.then(stamp.mono);
        let pending = rev.pending.get_or_insert_default();
        if pending.len() >= MAX_PENDING {
            let (oldest, at, _) = pending.remove(0);
            ingest(&mut rev.machine, oldest, at, &t);
        }
        pending.push((obs, stamp, then));
        None
    }

    /// The Revision of `uid` is in: what waited for it is fed in order, each evaluated
    /// at its own stamp.
    pub(super) fn replay_pending(&mut self, uid: &str, out: &mut Output) {
        let t = self.settings.thresholds;
        let Some(pending) = self.revisions.get_mut(uid).and_then(|r| r.pending.take()) else {
            return;
        };
        for (obs, stamp, then) in *pending {
            let Some(rev) = self.revisions.get_mut(uid) else {
                return;
            };
            ingest(&mut rev.machine, obs, stamp, &t);
            if self.synced && !self.defer(uid, stamp) {
                self.then = Some(then);
                self.evaluate(uid, stamp, out);
                self.then = None;
            }
        }
    }
}

fn ingest(machine: &mut Machine, obs: Observation, stamp: Stamp, t: &Thresholds) {
    match obs {
        Observation::Deployment { dep, .. } => machine.set_deployment(dep, stamp),
        Observation::Autoscaler { pa, .. } => machine.set_pa(pa, stamp, t),
        Observation::Pod { pod, .. } => machine.set_pod(pod, stamp, t),
        Observation::PodGone { name, .. } => machine.remove_pod(&name, stamp),
        _ => {}
    }
}
