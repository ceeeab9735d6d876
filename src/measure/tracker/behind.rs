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

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use super::{Output, Tracker, history};
use crate::measure::observe::Stamp;

/// How long a watch that failed holds the judging of wakes back.
pub const MAX_BEHIND: Duration = Duration::from_secs(120);

/// The kinds whose evidence says how a wake ended (a pod ready or failing, the PA active
/// or given up): their watches hold judgement while down. A Deployment says only that
/// pods are wanted, and a revision's objects wait for its Revision anyway.
const MEASURED: [&str; 2] = [PODAUTOSCALERS, "pods"];
/// The PodAutoscalers' kind: while its watch is down, the PA's state the machine holds
/// may be older than the other streams'.
pub const PODAUTOSCALERS: &str = "podautoscalers";

/// How many past outages are remembered for observations evaluated late.
const REMEMBERED: usize = 16;

#[derive(Debug, Default)]
pub struct Behind {
    /// Each kind down, since when.
    down: BTreeMap<&'static str, Instant>,
    /// Recent outages that are over, each kind's from its watch down to its watch back:
    /// observations that waited for their Revision ([`super::pending`]) are evaluated at
    /// their own stamps, and were behind if a watch was down then.
    past: VecDeque<(&'static str, Instant, Instant)>,
}

impl Behind {
    /// Whether some watch that measures revisions is (or, for a stamp of the past, was)
    /// down at `now`, and not for too long.
    pub fn any(&self, now: Instant) -> bool {
        MEASURED.iter().any(|kind| self.kind(kind, now))
    }

    /// Whether the watch of `kind` is (or was) down at `now`, and not for too long.
    pub fn kind(&self, kind: &str, now: Instant) -> bool {
        let held =
            |since: Instant| since <= now && now.saturating_duration_since(since) < MAX_BEHIND;
        self.down.get(kind).is_some_and(|since| held(*since))
            || self
                .past
                .iter()
                .any(|(k, since, back)| *k == kind && now < *back && held(*since))
    }
}

impl Tracker {
    /// The watch of `kind` failed: what it would have shown is on its way.
    pub fn watch_down(&mut self, kind: &'static str, stamp: Stamp) {
        self.remember(|| history::Fed::Down(kind, stamp));
        if MEASURED.contains(&kind) {
            self.behind.down.entry(kind).or_insert(stamp.mono);
        }
    }

    /// The watch of `kind` is back with its backlog (or its relist is complete). Once no
    /// watch is down, the wakes held back are judged.
    pub fn watch_back(&mut self, kind: &'static str, stamp: Stamp) -> Output {
        self.remember(|| history::Fed::Back(kind, stamp));
        let Some(since) = self.behind.down.remove(kind) else {
            return Output::default();
        };
        let past = &mut self.behind.past;
        past.push_back((kind, since, stamp.mono));
        if past.len() > REMEMBERED {
            past.pop_front();
        }
        if !self.behind.down.is_empty() {
            return Output::default();
        }
        self.evaluate_waking(stamp)
    }
}
