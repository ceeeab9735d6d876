//! The first sync, and the wakes underway as the store keeps them.
//!
//! A restarted process continues the wakes its predecessor had underway only once every
//! list is in: before, a revision's objects are not all known, and a wake continued on
//! part of them would be judged on half the evidence. Until then the stored rows stand
//! as they were, so a process killed again loses none of them.

use std::sync::Arc;

use super::{Output, Tracker, history};
use crate::measure::observe::Stamp;
use crate::measure::wake::{OpenChange, OpenWake, Underway};

impl Tracker {
    /// Every observation so far reflects the cluster: evaluate every revision once.
    pub fn mark_synced(&mut self, stamp: Stamp) -> Output {
        self.remember(|| history::Fed::Synced(stamp));
        self.synced = true;
        let mut out = Output::default();
        if self.watching_since.is_none() {
            self.watching_since = Some(stamp.wall);
            out.watching_since = Some(stamp.wall);
        }
        let restored = std::mem::take(&mut self.restored_open);
        for wakes in restored.chunk_by(|a, b| a.revision_uid == b.revision_uid) {
            if !self.continue_open(wakes, stamp) {
                out.open.push(OpenChange::of(&wakes[0].revision_uid, &[]));
            }
        }
        for rev in self.revisions.values_mut() {
            rev.machine.listed();
        }
        let uids: Vec<Arc<str>> = self.revisions.keys().cloned().collect();
        for uid in uids {
            self.evaluate(&uid, stamp, &mut out);
        }
        let keys: Vec<_> = self.services.keys().cloned().collect();
        self.dirty.extend(keys.iter().cloned());
        self.dirty_reports.extend(keys);
        out
    }

    /// Continues the wakes the last process had underway for one revision (its rows,
    /// oldest first); false when the revision is gone.
    pub(super) fn continue_open(&mut self, wakes: &[OpenWake], stamp: Stamp) -> bool {
        let Some(uid) = wakes.first().map(|o| o.revision_uid.as_str()) else {
            return true;
        };
        let Some(rev) = self.revisions.get(uid) else {
            return false;
        };
        let ctx = self.ctx(&self.knobs(rev), stamp);
        let rev = self.revisions.get_mut(uid).expect("looked up above");
        let underway: Vec<Underway> = wakes.iter().map(OpenWake::underway).collect();
        rev.machine.restore_open(underway.clone(), stamp, &ctx);
        rev.stored_open = underway;
        true
    }

    pub fn is_synced(&self) -> bool {
        self.synced
    }

    /// Every wake underway as the store should hold it: the machines' own, and before the
    /// sync the stored ones still waiting to be continued. After any output is written,
    /// the store's wakes underway are these, so a process killed then loses none.
    pub fn open_wakes(&self) -> Vec<OpenWake> {
        let mut open: Vec<OpenWake> = (self.revisions.iter())
            .flat_map(|(uid, r)| {
                (r.machine.open_wakes().into_iter()).map(|u| OpenWake::new(uid, u))
            })
            .collect();
        open.extend(
            self.restored_open
                .iter()
                .filter(|o| !open.iter().any(|m| m.revision_uid == o.revision_uid))
                .cloned()
                .collect::<Vec<_>>(),
        );
        open.sort_by(|a, b| a.revision_uid.cmp(&b.revision_uid));
        open
    }
}
