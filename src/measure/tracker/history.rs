//! The store's history merged into a tracker that may already be measuring.
//!
//! The service starts without its store: the watchers and the book come first, and the
//! wakes recorded before (with the wakes then underway) arrive whenever the store answers.
//! Before the initial lists sync this is the ordinary restore. After, it is a merge: a wake
//! this process recorded and the store also holds counts once (same revision UID and start
//! second), statistics take wakes in any order, and a wake the last process had underway
//! is continued only if this process has not measured one of its own since.

use std::collections::{HashMap, HashSet};

use chrono::Duration;

use super::{Output, Tracker};
use crate::measure::observe::Stamp;
use crate::measure::wake::{OpenChange, OpenWake};
use scaling_facts_api::WakeRecord;

impl Tracker {
    /// Merges the recorded wakes and the wakes underway that the store (and the spool)
    /// hold. Call once; later calls merge again, deduplicated by key.
    pub fn merge_history(
        &mut self,
        wakes: &[WakeRecord],
        open: &[OpenWake],
        stamp: Stamp,
    ) -> Output {
        let mut out = Output::default();
        let mut seen: HashSet<(&str, i64)> = HashSet::new();
        let mut by_revision: HashMap<&str, Vec<&WakeRecord>> = HashMap::new();
        for w in wakes {
            let key = (w.revision_uid.as_str(), w.start_second);
            if self
                .live_keys
                .contains(&(w.revision_uid.clone(), w.start_second))
                || !seen.insert(key)
            {
                continue;
            }
            by_revision.entry(&w.revision_uid).or_default().push(w);
        }
        for (uid, group) in by_revision {
            let rev = self.revisions.entry(uid.to_owned()).or_default();
            if rev.name.is_empty()
                && let Some(w) = group.first()
            {
                rev.name = w.revision.clone();
            }
            rev.stats
                .record_all(group.iter().copied(), &self.settings.window, stamp.wall);
            for w in &group {
                let end = w
                    .serving_at
                    .unwrap_or(w.requested_at + Duration::milliseconds(w.duration_ms as i64));
                rev.machine.restore(w.start_second, w.outcome, end);
            }
            if !rev.service.is_empty() {
                let key = rev.service_key();
                self.dirty.insert(key.clone());
                self.dirty_reports.insert(key);
            }
        }
        if self.synced {
            self.continue_late(open, stamp, &mut out);
        } else {
            self.restored_open = open.to_vec();
        }
        self.history_merged = true;
        self.live_keys.clear();
        out
    }

    pub fn history_merged(&self) -> bool {
        self.history_merged
    }

    /// Wakes underway that arrive after the lists synced. The machine has judged every
    /// revision from the lists by now; a stored wake underway continues only where the
    /// machine found none of its own, else its row is closed (the machine's own wake, if
    /// any, replaced it already).
    fn continue_late(&mut self, open: &[OpenWake], stamp: Stamp, out: &mut Output) {
        for o in open {
            let measured_since = self
                .live_keys
                .iter()
                .any(|(uid, s)| *uid == o.revision_uid && *s >= o.start_second - 1);
            let Some(rev) = self.revisions.get(&o.revision_uid) else {
                out.open.push(OpenChange::Closed {
                    revision_uid: o.revision_uid.clone(),
                });
                continue;
            };
            if rev.machine.open_wake().is_some() {
                continue;
            }
            if measured_since {
                out.open.push(OpenChange::Closed {
                    revision_uid: o.revision_uid.clone(),
                });
                continue;
            }
            let ctx = self.ctx(&self.knobs(rev));
            let rev = self
                .revisions
                .get_mut(&o.revision_uid)
                .expect("looked up above");
            rev.machine
                .restore_open(o.kind, o.requested_at, o.start_second, stamp, &ctx);
            self.evaluate(&o.revision_uid, stamp, out);
        }
    }
}
