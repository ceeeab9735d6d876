//! Relists are taken whole: the objects of a list are ingested as they come, but the
//! revisions they touch are evaluated once the list is complete.
//!
//! A list is one snapshot of every object of its kind. Evaluated object by object, a
//! revision would be judged on part of it: the first of three listed pods, seen ready
//! with a whole-second stamp a second later than its siblings', would end the wake before
//! the siblings that date it better arrive. Every change is still dated by the
//! observation that brought it (see `machine::dating`), so waiting changes no time, only
//! what is known when the machine decides. Streamed events are evaluated at once as
//! always; a list cut short by an error ends its deferral like a completed one.

use super::{Output, Tracker, history};
use crate::measure::observe::Stamp;

impl Tracker {
    /// A watcher of `kind` began a (re)list.
    pub fn list_begins(&mut self, kind: &'static str) {
        self.remember(|| history::Fed::ListBegins(kind));
        self.listing.insert(kind);
    }

    /// The list of `kind` is complete, or was cut short: once no list is underway, the
    /// revisions listed objects touched are evaluated.
    pub fn list_ends(&mut self, kind: &'static str, stamp: Stamp) -> Output {
        self.remember(|| history::Fed::ListEnds(kind, stamp));
        let mut out = Output::default();
        self.listing.remove(kind);
        if !self.listing.is_empty() || !self.synced {
            return out;
        }
        for uid in std::mem::take(&mut self.deferred) {
            self.evaluate(&uid, stamp, &mut out);
        }
        out
    }

    /// Whether a listed observation of this revision waits for its list to end.
    pub(super) fn defer(&mut self, uid: &str, stamp: Stamp) -> bool {
        if stamp.via != crate::measure::observe::Via::Listed || self.listing.is_empty() {
            return false;
        }
        if !self.deferred.contains(uid) {
            self.deferred.insert(uid.to_owned());
        }
        true
    }
}
