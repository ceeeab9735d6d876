//! A wake underway: what is known of it so far, from its request to its verdict.
//!
//! Its bounds (`requested`, `floor`, `queued`) are the evidence that dates it, tightened as
//! more arrives; the machine owns at most one, and keeps it boxed, since most revisions
//! of a fleet are not waking.

use chrono::{DateTime, Utc};

use super::{At, Ctx};
use scaling_facts_api::{Failure, WakeKind};

/// A wake's number within its revision's machine, counted from 1 (0: none). A revision
/// wakes far fewer than four billion times in a process's life, and a fleet holds a
/// machine for every revision, so it is kept small.
pub type WakeId = u32;

#[derive(Debug, Clone)]
pub struct Wake {
    pub id: WakeId,
    pub kind: WakeKind,
    pub requested: At,
    /// Pods created before this second belong to an earlier wake.
    pub floor: i64,
    /// The `Queued` transition's second: the wake's identity when known.
    pub queued: Option<i64>,
    /// Which streams rose for this wake and fell again, and when the first fell.
    pub fell: [bool; 2],
    pub first_fall: Option<At>,
    /// While a watch was down and no stream had fallen for it, its last pod went away
    /// before it was ever seen running (the removal's arrival bounds when): the pods show
    /// its end before the PA's and the Deployment's backlogs can.
    pub pods_fell: Option<At>,
    /// Set once recorded as failed; the wake stays until Knative gives up.
    pub failed: Option<Failure>,
    pub deadline_at: DateTime<Utc>,
    /// When every stream wanted zero: an abort, once the grace has passed.
    pub ending: Option<At>,
    /// Something that only a wake makes (a `Queued` transition, a pod of its own) was
    /// seen. A wake opened from a list or a replay without it is one stream showing an
    /// older state than another, and is not recorded when it ends.
    pub evidence: bool,
    /// The PA's rise for this wake was streamed, not found by a list.
    pub pa_streamed: bool,
    /// See [`Machine::evaluate`]: an abort that needs no grace.
    pub certain_abort: bool,
    /// Opened by its first pod, seen as it happened at this time.
    pub pod_seen: Option<At>,
    /// Restored from the store, but the PA has queued anew since (at this time): it
    /// ended while this process was down.
    pub superseded: Option<At>,
    /// It began after this: see [`Machine::began_after`].
    pub after: Option<DateTime<Utc>>,
    /// The PA's word, from a list, that it serves (since this time), waiting for the
    /// pods to bound its start; if it ends first, it served then.
    pub pa_served: Option<At>,
    /// The last reason its pods showed for not serving (a crash loop, a pull error, no
    /// node): why Knative gave up, when its `TimedOut` arrives after the pods are gone.
    pub trouble: Option<Failure>,
    /// What opened it: its request, were it a wake rather than the initial start.
    pub opened: At,
    /// Knative's `TimedOut`, shown while a watch was down (when the give-up waits for the
    /// pods' word) and replaced since by the PA's backlog: still its give-up.
    pub gave_up_seen: Option<(DateTime<Utc>, At)>,
    /// The floor before [`Wake::begins_after_pods_of`] raised it, and the floor it raised
    /// it to: the earlier wake's pods that justified it may turn out to be this one's.
    pub pods_bump: Option<(i64, i64)>,
}

impl Wake {
    /// When its streams first fell: a replay's undated fall is dated better by the
    /// removal of a pod of it ([`Wake::pods_fell`]).
    pub fn fall(&self) -> Option<At> {
        let pods = self
            .pods_fell
            .filter(|_| self.first_fall.is_some_and(|f| f.undated));
        (self.first_fall).map(|f| pods.map_or(f, |p| f.earliest(p)))
    }

    /// A start no earlier than the end it led to is an arrival that came late (a list, a
    /// catch-up burst, a lagging stream): when the wake's streams were last seen at zero
    /// before that end, it began after then, which this returns.
    pub(super) fn began_after_if_late(&self, end: At) -> Option<DateTime<Utc>> {
        self.after
            .filter(|a| self.requested.wall >= end.wall && *a <= end.wall && self.queued.is_none())
    }

    /// A wake requested at `requested`, nothing else known of it yet.
    pub fn new(id: WakeId, kind: WakeKind, requested: At, ctx: &Ctx) -> Self {
        Self {
            id,
            kind,
            requested,
            floor: requested.second() - 1,
            queued: None,
            fell: [false; 2],
            first_fall: None,
            pods_fell: None,
            failed: None,
            deadline_at: requested.wall + ctx.activation_timeout,
            ending: None,
            evidence: false,
            pa_streamed: false,
            certain_abort: false,
            pod_seen: None,
            superseded: None,
            opened: requested,
            after: None,
            pa_served: None,
            trouble: None,
            gave_up_seen: None,
            pods_bump: None,
        }
    }

    /// The earlier wake's first pod was made in second `made` (None: it has none): a start
    /// only a backlog's arrival bounds began after that scale-up (see
    /// `Machine::first_pods_claimed`). Told again each time, from the earlier wake as it
    /// stands: the last raise is undone first.
    pub fn begins_after_pods_of(&mut self, made: Option<i64>) {
        self.forget_pods_bump();
        let Some(made) = made else {
            return;
        };
        let raised = self.floor.max((made + 2).min(self.requested.second()));
        if !self.requested.exact && raised != self.floor {
            self.pods_bump = Some((self.floor, raised));
            self.floor = raised;
        }
    }

    /// A stream fell for it at `at`: its first fall is the earliest dated, not the first
    /// to arrive (a backlog's Deployment fall is known only by its arrival, the PA's,
    /// arriving after it, by its condition).
    pub fn fell_at(&mut self, at: At) {
        self.first_fall = Some(self.first_fall.map_or(at, |f| f.earliest(at)));
    }

    /// Undoes [`Wake::begins_after_pods_of`], unless something moved the floor since.
    pub fn forget_pods_bump(&mut self) {
        if let Some((before, raised)) = self.pods_bump.take()
            && self.floor == raised
        {
            self.floor = before;
        }
    }

    pub fn start_second(&self) -> i64 {
        self.queued.unwrap_or(self.requested.second())
    }

    /// The second by which it began: its start, or, for one opened by an arrival that
    /// does not date it (a backlog's rise) and taken back since to the rest it followed,
    /// that arrival, which its own scale-up's pods may come as late as.
    pub fn began_by(&self) -> i64 {
        if self.opened.undated && self.queued.is_none() {
            self.opened.second().max(self.start_second())
        } else {
            self.start_second()
        }
    }

    /// Whether an end at `end` says nothing of how long it lasted: known only from above
    /// (a replayed fall), with no reason its pods showed to say it failed. Past the
    /// deadline, such an end is no give-up by Knative without Knative's word.
    pub fn end_unproven(&self, end: At) -> bool {
        end.undated && self.trouble.is_none()
    }

    /// The earliest it can have begun: its request seen as it happened, else the start
    /// of the second its evidence floor allows.
    pub fn lower_bound(&self) -> DateTime<Utc> {
        if self.requested.exact {
            self.requested.wall
        } else {
            DateTime::from_timestamp(self.floor, 0).unwrap_or(self.requested.wall)
        }
    }
}
