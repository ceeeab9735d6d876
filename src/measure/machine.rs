//! The per-revision wake state machine: the revision's Deployment, PodAutoscaler and pods
//! go in, finished wakes come out.
//!
//! Each kind arrives on its own watch, ordered within itself but in no common order with
//! the others (docs/knative.md, "What a watcher must tolerate"). So the machine decides from evidence that one object orders
//! by itself, never from which kind arrived first:
//!
//! - **A rise** is a Deployment's `spec.replicas` or a PodAutoscaler's `desiredScale`
//!   going from a known 0 to more, seen within that object's own stream. A value first
//!   seen (status absent on create, a fresh list) is unknown, and a rise from unknown is
//!   not a wake. Each stream rises once per wake: the first rise of either opens the wake,
//!   the other stream's rise joins it, and only a stream that rose *and fell* for a wake
//!   and rises again starts the next one ([`Machine::evaluate`]).
//! - **A wake underway** without a rise (after a restart or a relist) needs evidence that
//!   belongs to it: a `Queued` condition or a pending pod newer than the last wake.
//! - **Evidence belongs to a wake** only if its whole-second timestamp says so: a pod
//!   created at or after the wake began, an `Active` condition that changed after the
//!   wake's start second. A `TimedOut` left from an earlier wake says nothing about this
//!   one.
//! - **Served** when a pod of the wake is ready (or the PA turns `Active=True` for it);
//!   **failed** on the pods' evidence or the PA's `TimedOut`; **aborted** when every stream
//!   wants zero again and stays so for [`ABORT_GRACE`].
//!
//! Every change is dated when it is ingested ([`dating`]): by its arrival when it was
//! streamed as it happened, else by the object's whole-second timestamps, and the wake
//! is then second-precision with its duration an upper bound.

pub mod dating;
mod ending;
mod evidence;
mod ingest;
mod initial;
mod judging;
mod late;
mod rest;
mod restore;
mod rising;
mod summary;
mod underway;
mod unseen;

pub use summary::Summary;

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

pub use dating::{At, Side};
use evidence::{Autoscaler, Pod};
use underway::{Wake, WakeId};

use super::observe::{DeploymentSnap, Stamp};
use scaling_facts_api::Failure;
use scaling_facts_api::{Outcome, PhaseDurations, Precision, WakeKind};

/// Tunables of the classification.
#[derive(Debug, Clone, Copy)]
pub struct Thresholds {
    /// An image pull failing this long fails the wake.
    pub image_pull_failure_after: Duration,
    /// A pod unschedulable this long fails the wake.
    pub unschedulable_failure_after: Duration,
    /// A streamed event more than this behind its object timestamp is dated by the object.
    pub late_event_tolerance: Duration,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            image_pull_failure_after: Duration::from_secs(60),
            unschedulable_failure_after: Duration::from_secs(300),
            late_event_tolerance: Duration::from_secs(2),
        }
    }
}

/// What the machine needs to know about the revision's settings.
#[derive(Debug, Clone, Copy)]
pub struct Ctx {
    pub thresholds: Thresholds,
    /// Progress deadline + 30 s: when Knative gives up on a wake.
    pub activation_timeout: Duration,
    /// Its settings create the revision at zero (`initial-scale: 0`): no initial start.
    pub born_at_zero: bool,
    /// A watch of the revision's objects is down: what it missed is still to come, so
    /// no wake is judged aborted yet.
    pub behind: bool,
    /// The PodAutoscalers' watch is down: the PA's state held may be older than the
    /// other streams' news, so it proves nothing against them.
    pub pa_behind: bool,
    /// Since when the service has watched: a revision created after started in its
    /// sight, or while a process of it was down or cut off from the API server.
    pub watched_since: Option<DateTime<Utc>>,
}

impl Ctx {
    /// When a wake began that Knative gave up on at `timed_out` (its `TimedOut`
    /// transition): it counts the activation timeout from the wake's start.
    pub fn began_before_timeout(&self, timed_out: DateTime<Utc>) -> DateTime<Utc> {
        timed_out - chrono::Duration::from_std(self.activation_timeout).unwrap_or_default()
    }
}

/// How long an apparent abort waits for lagging watches (a pod turning ready, a stream
/// that has not shown the rise yet) before it is recorded.
pub const ABORT_GRACE: Duration = Duration::from_millis(2_500);
/// A rise arriving this soon after the last wake closed, on a stream that had shown
/// neither that wake's rise nor a fall since, is that wake's rise arriving late.
const ECHO_WINDOW: Duration = Duration::from_secs(5);
/// How far apart the KPA's Deployment scale and PA status writes of one reconcile may be.
pub(crate) const KPA_WRITE_SPREAD_MS: i64 = 100;
/// How many recent start seconds a revision remembers to refuse duplicates.
const REMEMBERED_KEYS: usize = 16;
/// A pod created this soon after its revision is the revision's first.
const INITIAL_POD_WITHIN_SECONDS: i64 = 5;

/// A wake that just ended, without the release and revision names.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    pub kind: WakeKind,
    pub outcome: Outcome,
    pub requested_at: DateTime<Utc>,
    pub start_second: i64,
    pub serving_at: Option<DateTime<Utc>>,
    pub duration_ms: u64,
    pub phases: PhaseDurations,
    pub precision: Precision,
    pub failure: Option<Failure>,
}

/// The two streams whose scale says whether Knative wants pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Deployment = 0,
    Autoscaler = 1,
}

/// A rise or a fall of one stream, and whether it was streamed (ordered with the rest of
/// that stream) rather than found by a list.
#[derive(Debug, Clone, Copy)]
struct Edge {
    stream: Stream,
    rise: bool,
    at: At,
    streamed: bool,
    /// For a fall, the second the want it ends began, when the stream says (the PA's
    /// `Queued` or `Active` transition before it).
    period: Option<i64>,
    /// The PA's `Queued` and `TimedOut` seconds as they stood when the edge came: edges
    /// wait for the next evaluation (a whole sync's, at the first), and the PA may have
    /// moved on by then.
    pa: PaThen,
}

/// The PA's `Queued` and `TimedOut` seconds at one time.
#[derive(Debug, Clone, Copy, Default)]
struct PaThen {
    queued: Option<i64>,
    timed_out: Option<i64>,
}

impl PaThen {
    fn of(pa: Option<&Autoscaler>) -> Self {
        let second = |c: Option<(DateTime<Utc>, At)>| c.map(|(since, _)| since.timestamp());
        Self {
            queued: second(pa.and_then(Autoscaler::queued)),
            timed_out: second(pa.and_then(Autoscaler::timed_out)),
        }
    }
}

/// The last wake that ended, to tell its late evidence from a new wake.
#[derive(Debug, Clone, Copy)]
struct Closed {
    id: WakeId,
    start_second: i64,
    end_second: i64,
    /// The first second a next wake's pods can have been created in: after its end, or
    /// after its start when its end is only an upper bound ([`At::undated`]), or after
    /// its own floor when its start is such a bound too.
    next_floor: i64,
    /// It served: its pods stay for Knative's stable window, so no next wake starts
    /// within its end second.
    served: bool,
    /// When it closed, by arrival; None when restored from the store.
    closed: Option<Instant>,
    /// It was the revision's initial start (as far as this process saw it).
    initial: bool,
}

/// A wake known only from the `NoTraffic` it left behind.
#[derive(Debug, Clone, Copy)]
struct Unseen {
    /// It began after this: the condition its own replaced.
    after: DateTime<Utc>,
    /// Its end: its `NoTraffic`.
    end: At,
    /// When it was noticed, by arrival.
    noticed: Instant,
    /// The creation of its first pod, seen before the pod went: a later start bound
    /// than `after`.
    first_pod: Option<At>,
    /// Knative gave up on it: the PA showed a `TimedOut` newer than `after`.
    gave_up: bool,
    /// It came before a rise the Deployment shows now: pods not leaving are that rise's.
    before_rise: bool,
    /// Told only by a rise with the PA at rest since: a pod of it leaving must confirm it.
    pod_leaving: bool,
    /// How many times the Deployment's generation moved past the rest a list compared it
    /// with (0 when no list's Deployment showed it, only the PA's trace).
    changes: i64,
}

/// What pods already removed said, kept for the wake they were made for: a backlog may
/// bring a pod's whole life before the streams that open, end and date that wake.
#[derive(Debug, Clone, Default)]
struct Gone {
    /// The last that showed why it did not serve, by its creation second.
    trouble: Option<(i64, Failure)>,
    /// The last that served while no recorded wake explained it: its creation and when it
    /// turned ready (of its period's pods, the first made and the first ready).
    served: Option<(At, At)>,
    /// When that period's pods were asked to go, as the last of them removed showed.
    served_until: Option<DateTime<Utc>>,
    /// The last that never served (seen in every state it had, or never running): its
    /// creation and when it was asked to go. A backlog of pods may bring its whole life
    /// before the rise it was made for, whose start and end it then dates.
    unserved: Option<(DateTime<Utc>, dating::At)>,
}

/// One revision's wake state.
#[derive(Debug, Clone, Default)]
pub struct Machine {
    deployment: Option<DeploymentSnap>,
    pa: Option<Autoscaler>,
    /// When each stream was last seen wanting zero pods: a wake's rises came after.
    zero_seen: [Option<DateTime<Utc>>; 2],
    pods: Vec<Pod>,
    /// Rises and falls seen since the last evaluation, in arrival order.
    edges: Vec<Edge>,
    /// The wake each stream last rose for, and the wake that was current when it last fell.
    claimed: [WakeId; 2],
    fell_during: [WakeId; 2],
    next_id: WakeId,
    /// The first wake opened after the Deployment was last seen at zero as it was (live
    /// or listed, not replayed), 0 if never: a rise its stream replays later is of that
    /// wake or a later one.
    deployment_rest: WakeId,
    wake: Option<Box<Wake>>,
    /// A whole wake that rose and fell unseen, noticed while none was open (see
    /// [`Machine::missed_pa_wake`]); recorded once the lists had time to show its pods.
    unseen: Option<Box<Unseen>>,
    // Boxed, as are the others below that only a revision that woke (or was seen being
    // created) has: a fleet is mostly revisions that never did.
    last: Option<Box<Closed>>,
    /// The last failure, shown as `unavailable` until a new wake starts.
    failure: Option<Box<Failure>>,
    /// A pod of this revision served: its initial start is over.
    served_before: bool,
    /// The second it was first seen wanting zero pods before ever serving: its first
    /// rise is a wake, and a pod created after it belongs to one.
    seen_at_zero: Option<i64>,
    /// Its Deployment was seen as created (generation 1) with replicas: an initial start.
    born_at_scale: bool,
    /// The first wake this machine opened (id 1) was the revision's initial start.
    first_initial: bool,
    /// This process, or one before it, saw the revision created: its initial start is
    /// this service's to record ([`initial`]).
    seen_born: bool,
    /// Its settings made it start at zero: it has no initial start, every rise is a wake.
    born_at_zero: bool,
    /// The Deployment was seen (or restored from the store) before the state it shows
    /// now: whoever saw that earlier state judged what went before it ([`initial`]).
    deployment_seen_before: bool,
    /// `serving_at` of the last served wake recorded, so a restart does not record it again.
    last_recorded_serving: Option<DateTime<Utc>>,
    /// The start seconds of the last wakes recorded, not to record one twice.
    recorded: Recorded,
    created: Option<DateTime<Utc>>,
    /// The revision's creation, seen as it happened.
    created_live: Option<Box<At>>,
    /// What the pods removed said that a later verdict may need ([`Gone`]).
    gone: Option<Box<Gone>>,
    /// Wakes that ended while a watch was down, oldest first, waiting for their verdict
    /// ([`judging`]). Boxed: most revisions never have one.
    #[allow(clippy::box_collection)]
    unjudged: Option<Box<VecDeque<judging::Unjudged>>>,
    /// A watch of the revision's objects is down (as of the last evaluation).
    behind: bool,
    /// What it was last seen at rest in changed: the store is to keep the new one.
    rest_changed: bool,
    /// The generation the Deployment reached at the least, back at zero, after the wakes
    /// recorded since the store's last rest ([`Machine::restore_rest_behind`]).
    rest_behind: Option<i64>,
    /// A wake the PA's replay began before the open one ([`late`]): its `Queued`.
    late: Option<Box<At>>,
}

impl Machine {
    /// The revision's creation; None until its Revision object is in, which a
    /// revision's measuring waits for.
    pub fn created(&self) -> Option<DateTime<Utc>> {
        self.created
    }

    /// The last wake that ended.
    fn last(&self) -> Option<Closed> {
        self.last.as_deref().copied()
    }

    /// Applies what is known at `now`; returns every wake that ended, in order.
    pub fn evaluate(&mut self, now: Stamp, ctx: &Ctx) -> Vec<Finished> {
        let mut out = Vec::new();
        self.behind = ctx.behind;
        if ctx.born_at_zero {
            self.born_at_zero = true;
            self.saw_zero(now.wall.timestamp());
        }
        // Falls owed to no wake, seen while none was open: a wake found underway from its
        // evidence below (at the sync, say) may have ended with one of them.
        let mut quiet_falls: [Option<At>; 2] = [None; 2];
        for edge in std::mem::take(&mut self.edges) {
            let s = edge.stream as usize;
            if edge.rise {
                quiet_falls[s] = None;
                self.rise(
                    (edge.stream, edge.at, edge.streamed),
                    edge.pa,
                    now,
                    ctx,
                    &mut out,
                );
                if let Some(w) = self.wake.as_mut().filter(|w| self.claimed[s] == w.id)
                    && edge.stream == Stream::Autoscaler
                {
                    w.pa_streamed = edge.streamed;
                }
            } else {
                let claimed = self.claimed[s];
                // A fall ends the period of the wake the stream last rose for, if it has
                // not fallen since: a stream behind the others shows an older wake's fall
                // after a newer wake opened, or even closed.
                let owed = self.owed(edge.stream);
                if self.wake.is_none() && !owed {
                    quiet_falls[s] = Some(edge.at);
                }
                // A replayed fall its object dates before the open wake began (a catch-up
                // burst arriving after a live rise) is an earlier wake's, not this one's end.
                // So is a replayed Deployment fall, which has no date of its own, while the
                // PA, which rose for the open wake, still wants pods for it: the PA's own
                // ordered stream would have shown this wake's end first (unless its watch
                // is down, its backlog still to come).
                let pa_holds = |w: &Wake| {
                    !ctx.pa_behind
                        && edge.stream == Stream::Deployment
                        && self.claimed[Stream::Autoscaler as usize] == w.id
                        && self.stream_wants(Stream::Autoscaler)
                };
                let began_before = |lower: i64| {
                    !edge.at.exact
                        && (edge.at.second() < lower || edge.period.is_some_and(|p| p < lower))
                };
                let before_open = self.wake.as_ref().is_some_and(|w| {
                    // (Its own `Queued` second may precede its arrival's.)
                    began_before(w.lower_bound().timestamp().min(w.start_second()))
                        || !edge.at.exact && pa_holds(w)
                });
                // With none open, one dated before the last wake began is older still.
                let before_last = self.wake.is_none()
                    && self.last().is_some_and(|l| began_before(l.start_second));
                let current = self
                    .wake
                    .as_ref()
                    .map(|w| w.id)
                    .or(self.last().map(|l| l.id));
                // A replayed fall of a stream that never rose for the current wake, nor
                // for any since its last fall: it ends the want the stream showed from its
                // first (replayed) state, older than that wake.
                let older =
                    edge.streamed && edge.at.undated && current.is_some_and(|c| claimed < c);
                self.fell_during[s] = if owed || before_open || before_last || older {
                    claimed
                } else {
                    current.unwrap_or(0)
                };
                let during = self.wake.as_ref().map(|w| w.id) == Some(self.fell_during[s]);
                if let Some(w) = self
                    .wake
                    .as_mut()
                    .filter(|_| during && !owed && !before_open)
                {
                    // A stream whose want a list showed, owed to no earlier wake: its
                    // fall is this wake's, and may be the first to end it.
                    w.fell_at(edge.at);
                }
                if let Some(w) = self
                    .wake
                    .as_mut()
                    .filter(|w| claimed == w.id && !before_open)
                {
                    w.fell[s] = true;
                    w.fell_at(edge.at);
                    // The PA's own stream showed this wake rise and fall with no
                    // `Active=True` between: nothing served, whatever other streams show.
                    w.certain_abort |=
                        edge.stream == Stream::Autoscaler && edge.streamed && w.pa_streamed;
                }
            }
        }
        self.judge(&mut out);
        self.settle_late(ctx, &mut out);
        self.settle(now, ctx, quiet_falls, &mut out);
        self.judge(&mut out);
        out
    }

    fn wants(&self) -> bool {
        self.stream_wants(Stream::Deployment)
            || self.stream_wants(Stream::Autoscaler)
            // A PA whose status is not written yet wants pods once it queues.
            || self
                .pa
                .as_ref()
                .is_some_and(|p| p.desired().is_none() && p.queued().is_some())
    }

    /// Whether the stream shows pods wanted now.
    fn stream_wants(&self, s: Stream) -> bool {
        match s {
            Stream::Deployment => self.deployment.is_some_and(|d| d.replicas > 0),
            Stream::Autoscaler => self
                .pa
                .as_ref()
                .and_then(Autoscaler::desired)
                .is_some_and(|d| d > 0),
        }
    }

    /// Whether the stream rose for a wake and has not shown the fall that ends it.
    fn owed(&self, s: Stream) -> bool {
        let claimed = self.claimed[s as usize];
        claimed != 0 && self.fell_during[s as usize] != claimed
    }

    /// Why the last pod removed that was made in `seconds` did not serve.
    fn trouble_gone(&self, seconds: std::ops::RangeInclusive<i64>) -> Option<Failure> {
        (self.gone.as_deref())
            .and_then(|g| g.trouble.as_ref())
            .filter(|(created, _)| seconds.contains(created))
            .map(|(_, f)| f.clone())
    }

    /// Forgets the reason of the last pod gone when it was made in `seconds`: it was the
    /// reason of the wake just ended there.
    fn forget_gone_trouble(&mut self, seconds: std::ops::RangeInclusive<i64>) {
        if let Some(g) = self.gone.as_deref_mut()
            && g.trouble.as_ref().is_some_and(|t| seconds.contains(&t.0))
        {
            g.trouble = None;
        }
    }

    /// Whether a wake is open, or one seen only by its trace or one ended while a watch
    /// was down waits to be recorded, so time passing (or a watch back) can end it.
    pub fn waking(&self) -> bool {
        self.wake.is_some() || self.unseen.is_some() || self.oldest_unjudged().is_some()
    }
}

/// The last [`REMEMBERED_KEYS`] start seconds recorded; boxed, as most revisions of a
/// fleet never record one.
#[derive(Debug, Clone, Default)]
#[allow(clippy::box_collection)]
struct Recorded(Option<Box<VecDeque<i64>>>);

impl Recorded {
    fn contains(&self, second: &i64) -> bool {
        self.iter().any(|s| s == second)
    }

    fn iter(&self) -> impl Iterator<Item = &i64> {
        self.0.iter().flat_map(|keys| keys.iter())
    }

    /// The newest start second recorded.
    fn newest(&self) -> Option<i64> {
        self.iter().copied().max()
    }
}

fn remember(keys: &mut Recorded, second: i64) {
    let keys = keys.0.get_or_insert_default();
    keys.push_back(second);
    while keys.len() > REMEMBERED_KEYS {
        keys.pop_front();
    }
}

#[cfg(test)]
mod tests;
