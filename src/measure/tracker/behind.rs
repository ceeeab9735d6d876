//! Which of the watches that measure revisions are down, so that no wake is judged over
//! while evidence that would say otherwise is known to be on its way.
//!
//! After an API-server outage each watch resumes from its last version on its own backoff,
//! and its backlog arrives whole, late, seconds apart from the others': the Deployment's
//! fall of a wake may come long before the pods that served it. The abort grace covers
//! watches that lag; a watch that failed and has not come back is lagging by definition.
//! So while one is down, a wake whose streams all want zero is not yet recorded as
//! aborted, nor a wake known only by its trace; once every watch is back (its backlog in,
//! or its relist complete) they are judged with everything the cluster had to say.
//! A watch down for longer than [`MAX_BEHIND`] no longer holds anything: a cluster that
//! cannot be read about one kind must not keep wakes open forever.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::{Output, Tracker, history};
use crate::measure::observe::Stamp;

/// How long a watch that failed holds the judging of wakes back.
pub const MAX_BEHIND: Duration = Duration::from_secs(120);

/// The kinds whose evidence says how a wake ended (a pod ready or failing, the PA active
/// or given up): their watches hold judgement while down. A Deployment says only that
/// pods are wanted, and a revision's objects wait for its Revision anyway.
const MEASURED: [&str; 2] = [PODAUTOSCALERS, "pods"];
/// The kinds of a revision's objects: while one's watch is down, what arrives of the
/// others is measured provisionally, then again once it is back ([`super::hold`]).
const OBJECTS: [&str; 3] = [PODAUTOSCALERS, "pods", "deployments"];
/// The PodAutoscalers' kind: while its watch is down, the PA's state the machine holds
/// may be older than the other streams'.
pub const PODAUTOSCALERS: &str = "podautoscalers";

/// Which measuring watches were down when an observation arrived: one that waits for its
/// Revision ([`super::pending`]) is evaluated later as it would have been then. Taken at
/// arrival, not looked up by stamp: a watch's backlog and its watch coming back may share
/// an instant, and only the order of arrival tells which came first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Then {
    pub any: bool,
    pub pa: bool,
}

#[derive(Debug, Default)]
pub struct Behind {
    /// Each kind down, since when.
    down: BTreeMap<&'static str, Instant>,
}

impl Behind {
    /// Whether some watch that measures revisions is down at `now`, and not for too long.
    pub fn any(&self, now: Instant) -> bool {
        MEASURED.iter().any(|kind| self.kind(kind, now))
    }

    /// Whether what arrives for revisions is measured provisionally ([`super::hold`]).
    pub fn holding(&self, now: Instant) -> bool {
        OBJECTS.iter().any(|kind| self.kind(kind, now))
    }

    /// Whether the watch of `kind` is down at `now`, and not for too long.
    pub fn kind(&self, kind: &str, now: Instant) -> bool {
        self.down.get(kind).is_some_and(|since| {
            *since <= now && now.saturating_duration_since(*since) < MAX_BEHIND
        })
    }

    /// The watches down at `now`, to evaluate later an observation that arrived then.
    pub fn then(&self, now: Instant) -> Then {
        Then {
            any: self.any(now),
            pa: self.kind(PODAUTOSCALERS, now),
        }
    }
}

impl Tracker {
    /// The watch of `kind` failed: what it would have shown is on its way.
    pub fn watch_down(&mut self, kind: &'static str, stamp: Stamp) {
        self.remember(|| history::Fed::Down(kind, stamp));
        if OBJECTS.contains(&kind) {
            self.behind.down.entry(kind).or_insert(stamp.mono);
        }
    }

    /// The watch of `kind` is back with its backlog (or its relist is complete). Once no
    /// watch of revisions' objects is down, what was measured provisionally is measured
    /// again; once no measuring watch is, the wakes held back are judged.
    pub fn watch_back(&mut self, kind: &'static str, stamp: Stamp) -> Output {
        self.remember(|| history::Fed::Back(kind, stamp));
        let mut out = Output::default();
        if self.behind.down.remove(kind).is_none() {
            return out;
        }
        self.release_held(stamp, &mut out);
        if !self.behind.any(stamp.mono) {
            out.extend(self.evaluate_waking(stamp));
        }
        self.gone_now(stamp, &mut out);
        out
    }

    /// Removes the revisions deleted while a watch of revisions' objects was down, once
    /// none is: what their backlogs bring (a Deployment's fall among it) judges their last
    /// wake first.
    pub(super) fn gone_now(&mut self, stamp: Stamp, out: &mut Output) {
        if self.gone_later.is_empty() || self.behind.holding(stamp.mono) {
            return;
        }
        for uid in std::mem::take(&mut self.gone_later) {
            self.revision_gone(&uid, stamp, out);
        }
    }
}
