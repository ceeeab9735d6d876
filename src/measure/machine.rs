//! The per-revision wake state machine: the revision's Deployment, PodAutoscaler and pods
//! go in, finished wakes come out.
//!
//! Each kind arrives on its own watch, ordered within itself but in no common order with
//! the others (FACTS.md §f). So the machine decides from evidence that one object orders
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
mod evidence;

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

pub use dating::{At, Side};
use evidence::{Autoscaler, Pod, classify};

use super::observe::{CondStatus, DeploymentSnap, PaSnap, PodSnap, Stamp, Via};
use super::view::{Failure, Phase};
use super::wake::{Outcome, PhaseDurations, Precision, WakeKind};

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
}

/// How long an apparent abort waits for lagging watches (a pod turning ready, a stream
/// that has not shown the rise yet) before it is recorded.
pub const ABORT_GRACE: Duration = Duration::from_millis(2_500);
/// A rise arriving this soon after the last wake closed, on a stream that had shown
/// neither that wake's rise nor a fall since, is that wake's rise arriving late.
const ECHO_WINDOW: Duration = Duration::from_secs(5);
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

/// What a revision looks like now, for the runtime read.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub phase: Phase,
    pub desired: u32,
    pub actual: u32,
    pub serving_since: Option<DateTime<Utc>>,
    pub wake: Option<(DateTime<Utc>, DateTime<Utc>)>,
    pub failure: Option<Failure>,
}

/// The two streams whose scale says whether Knative wants pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Deployment = 0,
    Autoscaler = 1,
}

#[derive(Debug, Clone)]
struct Wake {
    id: u64,
    kind: WakeKind,
    requested: At,
    /// Pods created before this second belong to an earlier wake.
    floor: i64,
    /// The `Queued` transition's second: the wake's identity when known.
    queued: Option<i64>,
    /// Which streams rose for this wake and fell again, and when the first fell.
    fell: [bool; 2],
    first_fall: Option<At>,
    /// Set once recorded as failed; the wake stays until Knative gives up.
    failed: Option<Failure>,
    deadline_at: DateTime<Utc>,
    /// When every stream wanted zero: an abort, once the grace has passed.
    ending: Option<At>,
    /// Something that only a wake makes (a `Queued` transition, a pod of its own) was
    /// seen. A wake opened from a list or a replay without it is one stream showing an
    /// older state than another, and is not recorded when it ends.
    evidence: bool,
    /// The PA's rise for this wake was streamed, not found by a list.
    pa_streamed: bool,
    /// See [`Machine::evaluate`]: an abort that needs no grace.
    certain_abort: bool,
}

impl Wake {
    fn start_second(&self) -> i64 {
        self.queued.unwrap_or(self.requested.second())
    }
}

/// A rise or a fall of one stream, and whether it was streamed (ordered with the rest of
/// that stream) rather than found by a list.
#[derive(Debug, Clone, Copy)]
struct Edge {
    stream: Stream,
    rise: bool,
    at: At,
    streamed: bool,
}

/// The last wake that ended, to tell its late evidence from a new wake.
#[derive(Debug, Clone, Copy)]
struct Closed {
    id: u64,
    start_second: i64,
    end_second: i64,
    /// When it closed, by arrival; None when restored from the store.
    closed: Option<Instant>,
}

/// One revision's wake state.
#[derive(Debug, Clone, Default)]
pub struct Machine {
    deployment: Option<DeploymentSnap>,
    pa: Option<Autoscaler>,
    pods: Vec<Pod>,
    /// Rises and falls seen since the last evaluation, in arrival order.
    edges: Vec<Edge>,
    /// The wake each stream last rose for, and the wake that was current when it last fell.
    claimed: [u64; 2],
    fell_during: [u64; 2],
    next_id: u64,
    wake: Option<Box<Wake>>,
    last: Option<Closed>,
    /// The last failure, shown as `unavailable` until a new wake starts.
    failure: Option<Failure>,
    /// A pod of this revision served: its initial start is over.
    served_before: bool,
    /// Seen wanting zero pods before ever serving: its first rise is a wake.
    seen_at_zero: bool,
    /// Its Deployment was seen as created (generation 1) with replicas: an initial start.
    born_at_scale: bool,
    /// `serving_at` of the last served wake recorded, so a restart does not record it again.
    last_recorded_serving: Option<DateTime<Utc>>,
    recorded: VecDeque<i64>,
    created: Option<DateTime<Utc>>,
    /// The revision's creation, seen as it happened.
    created_live: Option<At>,
}

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

    /// The Revision object was seen.
    pub fn revision_seen(&mut self, created: DateTime<Utc>, stamp: Stamp, t: &Thresholds) {
        if self.created.is_none() {
            let at = At::date(stamp, Some(created), Side::Start, t.late_event_tolerance);
            self.created_live = at.exact.then_some(at);
        }
        self.created = Some(created);
    }

    pub fn set_deployment(&mut self, dep: DeploymentSnap, stamp: Stamp) {
        let prev = self.deployment;
        if prev.is_some_and(|p| dep.version != 0 && dep.version <= p.version) {
            return; // a replay of what this stream already showed
        }
        match prev.map(|p| p.replicas) {
            Some(0) if dep.replicas > 0 => self.edge(Stream::Deployment, true, stamp),
            Some(n) if n > 0 && dep.replicas == 0 => self.edge(Stream::Deployment, false, stamp),
            None if dep.generation == 1 && dep.replicas > 0 => self.born_at_scale = true,
            _ => {}
        }
        if dep.replicas == 0 && !self.served_before {
            self.seen_at_zero = true;
        }
        self.deployment = Some(dep);
    }

    pub fn set_pa(&mut self, snap: PaSnap, stamp: Stamp, t: &Thresholds) {
        if self
            .pa
            .as_ref()
            .is_some_and(|p| snap.version != 0 && snap.version <= p.snap.version)
        {
            return; // a replay of what this stream already showed
        }
        let mut pa = self.pa.take().unwrap_or_default();
        let before = pa.desired();
        pa.update(snap, stamp, t);
        match (before, pa.desired()) {
            (Some(0), Some(n)) if n > 0 => {
                let at = pa.queued.map_or(At::arrival(stamp), |(_, at)| at);
                self.edges.push(Edge {
                    stream: Stream::Autoscaler,
                    rise: true,
                    at,
                    streamed: stamp.via != Via::Listed,
                });
            }
            (Some(b), Some(0)) if b > 0 => self.edge(Stream::Autoscaler, false, stamp),
            _ => {}
        }
        let idle = pa
            .snap
            .active
            .as_ref()
            .is_some_and(|c| c.reason_is("NoTraffic"));
        if pa.desired() == Some(0) && idle && !self.served_before {
            self.seen_at_zero = true;
        }
        self.pa = Some(pa);
    }

    pub fn set_pod(&mut self, snap: PodSnap, stamp: Stamp, t: &Thresholds) {
        match self.pods.iter_mut().find(|p| p.snap.name == snap.name) {
            Some(p) if snap.version != 0 && snap.version <= p.snap.version => {}
            // A name can come back: another pod, created later, whose old namesake's
            // deletion fell in a watch gap. It inherits nothing.
            Some(p) if p.snap.created != snap.created => *p = Pod::new(snap, stamp, t),
            Some(p) => p.update(snap, stamp, t),
            None => self.pods.push(Pod::new(snap, stamp, t)),
        }
    }

    pub fn remove_pod(&mut self, name: &str) {
        self.pods.retain(|p| p.snap.name != name);
    }

    fn edge(&mut self, stream: Stream, rise: bool, stamp: Stamp) {
        self.edges.push(Edge {
            stream,
            rise,
            at: At::arrival(stamp),
            streamed: stamp.via != Via::Listed,
        });
    }

    /// Applies what is known at `now`; returns every wake that ended, in order.
    pub fn evaluate(&mut self, now: Stamp, ctx: &Ctx) -> Vec<Finished> {
        let mut out = Vec::new();
        for edge in std::mem::take(&mut self.edges) {
            let s = edge.stream as usize;
            if edge.rise {
                self.rise(edge.stream, edge.at, now, ctx, &mut out);
                if let Some(w) = self.wake.as_mut().filter(|w| self.claimed[s] == w.id)
                    && edge.stream == Stream::Autoscaler
                {
                    w.pa_streamed = edge.streamed;
                }
            } else {
                let current = self.wake.as_ref().map(|w| w.id).or(self.last.map(|l| l.id));
                self.fell_during[s] = current.unwrap_or(0);
                let claimed = self.claimed[s];
                if let Some(w) = self.wake.as_mut().filter(|w| claimed == w.id) {
                    w.fell[s] = true;
                    w.first_fall.get_or_insert(edge.at);
                    // The PA's own stream showed this wake rise and fall with no
                    // `Active=True` between: nothing served, whatever other streams show.
                    w.certain_abort |=
                        edge.stream == Stream::Autoscaler && edge.streamed && w.pa_streamed;
                }
            }
        }
        self.settle(now, ctx, &mut out);
        out
    }

    /// A stream rose: joins the wake underway, echoes the last one, or starts a new one.
    fn rise(&mut self, stream: Stream, at: At, now: Stamp, ctx: &Ctx, out: &mut Vec<Finished>) {
        let s = stream as usize;
        let pa = self.pa.as_ref();
        let queued = pa.and_then(|p| p.queued).map(|q| q.0.timestamp());
        let timed_out = pa.and_then(|p| p.timed_out).map(|t| t.0.timestamp());
        if let Some(w) = self.wake.as_mut() {
            // A stream that had not risen for this wake joins it, unless the wake was
            // over already: Knative gave up on it, or the PA queued anew after it ended.
            let ended = w.ending.or(w.first_fall).map(|e| e.second());
            let after_end = match (stream, queued, ended) {
                (Stream::Autoscaler, Some(q), Some(e)) => q > e,
                _ => false,
            };
            let given_up = timed_out.is_some_and(|t| t > w.start_second());
            let over = given_up || after_end;
            if self.claimed[s] != w.id && !over {
                self.claimed[s] = w.id;
                w.ending = None;
                return;
            }
            if !w.fell[s] && !over {
                return; // rose twice: a relist merged the fall between, nothing to tell
            }
            // It rose and fell for this wake: this is the next wake.
            let end = w.ending.unwrap_or(at);
            self.close(None, end, now, out);
        } else if let Some(l) = self.last
            && self.claimed[s] < l.id
            && self.fell_during[s] != l.id
            && (l
                .closed
                .is_some_and(|c| at.mono.saturating_duration_since(c) < ECHO_WINDOW)
                || self.pods.iter().any(|p| p.snap.serving()))
        {
            self.claimed[s] = l.id;
            return;
        }
        self.open(at, ctx);
        self.claimed[s] = self.next_id;
    }

    fn open(&mut self, at: At, ctx: &Ctx) {
        self.open_as(self.kind_of_new(None), at, ctx);
    }

    fn open_as(&mut self, kind: WakeKind, at: At, ctx: &Ctx) {
        let requested = match kind {
            WakeKind::Initial => self.created_at(at).unwrap_or(at),
            WakeKind::Wake => at,
        };
        self.next_id += 1;
        self.failure = None;
        self.wake = Some(Box::new(Wake {
            id: self.next_id,
            kind,
            requested,
            floor: requested.second() - 1,
            queued: None,
            fell: [false; 2],
            first_fall: None,
            failed: None,
            deadline_at: requested.wall + ctx.activation_timeout,
            ending: None,
            evidence: at.exact,
            pa_streamed: false,
            certain_abort: false,
        }));
    }

    /// The revision's creation as a start, as seen from `at`'s clock.
    fn created_at(&self, at: At) -> Option<At> {
        self.created_live.or_else(|| {
            let c = self.created?;
            let back = (at.wall - c).to_std().unwrap_or_default();
            Some(At {
                mono: at.mono.checked_sub(back).unwrap_or(at.mono),
                wall: c,
                exact: false,
            })
        })
    }

    /// Whether a new period of wanting pods is a wake or the initial start; None when it
    /// cannot be told yet. `pod_created` is the serving pod of a period seen only once
    /// serving.
    fn kind_of_new(&self, pod_created: Option<DateTime<Utc>>) -> WakeKind {
        self.kind_if_known(pod_created).unwrap_or(WakeKind::Initial)
    }

    fn kind_if_known(&self, pod_created: Option<DateTime<Utc>>) -> Option<WakeKind> {
        if self.served_before || self.seen_at_zero {
            return Some(WakeKind::Wake);
        }
        if self.born_at_scale || self.created_live.is_some() {
            return Some(WakeKind::Initial);
        }
        let near_creation = match (pod_created, self.created) {
            (Some(p), Some(c)) => Some((p - c).num_seconds() <= INITIAL_POD_WITHIN_SECONDS),
            _ => None,
        };
        match (self.deployment, near_creation) {
            (_, Some(true)) => Some(WakeKind::Initial),
            (_, Some(false)) => Some(WakeKind::Wake),
            (Some(d), None) if d.generation > 1 => Some(WakeKind::Wake),
            (None, None) if pod_created.is_some() => None,
            _ if self.pa.as_ref().is_some_and(|p| p.snap.initialized) => Some(WakeKind::Wake),
            _ => Some(WakeKind::Initial),
        }
    }

    fn wants(&self) -> bool {
        let dep = self.deployment.is_some_and(|d| d.replicas > 0);
        let pa = self.pa.as_ref().is_some_and(|p| match p.desired() {
            Some(d) => d > 0,
            None => p.queued.is_some(),
        });
        dep || pa
    }

    /// No rise explains what the objects show: a wake underway, or one already served.
    fn settle_quiet(&mut self, now: Stamp, ctx: &Ctx, out: &mut Vec<Finished>) {
        if self.pods.iter().any(|p| p.snap.serving()) {
            return self.settle_serving(now, ctx, out);
        }
        // Knative gave up on a wake while this process was not looking: its TimedOut is
        // newer than anything recorded, and came one activation timeout after the start.
        if let Some((since, at)) = self.pa.as_ref().and_then(|p| p.timed_out)
            && self.last.is_some_and(|l| since.timestamp() > l.end_second)
            && !self.wants()
        {
            let timeout = chrono::Duration::from_std(ctx.activation_timeout).unwrap_or_default();
            let start = since - timeout;
            let near =
                (start.timestamp() - 2..=start.timestamp() + 2).any(|s| self.recorded.contains(&s));
            if !near {
                self.open_as(WakeKind::Wake, At::back_from(now, start), ctx);
                let failure = Failure {
                    reason: "TimedOut".into(),
                    message: "The target could not be activated.".into(),
                };
                if let Some(w) = self.wake.take() {
                    let phases = self.phases(&w);
                    out.extend(self.finish(&w, Outcome::Failed, at, Some(failure.clone()), phases));
                    self.wake = Some(w);
                }
                self.failure = Some(failure);
                let end = at;
                self.wake.as_mut().expect("opened").failed = self.failure.clone();
                return self.close(None, end, now, out);
            }
        }
        // A wake that began and was given up while this process was not looking (or
        // whose end fell in its downtime): Knative went back to `NoTraffic` after the last
        // wake, and a pod that never served is being removed.
        if let Some(l) = self.last
            && let Some(idle) = self.pa.as_ref().and_then(|p| p.snap.active.clone())
            && idle.reason_is("NoTraffic")
            && let Some(since) = idle.since.filter(|s| s.timestamp() > l.end_second)
            && !self.wants()
            && let Some(first) = self
                .pods
                .iter()
                .filter(|p| {
                    // A pod that ran may have served unseen: only one that never ran
                    // tells an abort.
                    p.snap.deleting
                        && p.ready.is_none()
                        && !p.snap.running
                        && p.created_second() > l.end_second
                })
                .map(|p| p.created)
                .reduce(At::earliest)
            && !self.recorded.contains(&first.second())
        {
            self.open_as(WakeKind::Wake, first, ctx);
            if let Some(w) = self.wake.as_mut() {
                w.evidence = true;
            }
            let end = At::back_from(now, since + chrono::Duration::seconds(1));
            return self.close(Some(Outcome::Aborted), end, now, out);
        }
        let after_last = |second: i64| self.last.is_none_or(|l| second > l.end_second);
        let queued = self
            .pa
            .as_ref()
            .and_then(|p| p.queued)
            .filter(|(since, _)| self.last.is_none_or(|l| since.timestamp() > l.start_second));
        let pending = self
            .pods
            .iter()
            .filter(|p| !p.snap.deleting && after_last(p.created_second()))
            // A pod comes after the scale-up that began its wake: seen first, it bounds
            // the start by its creation second, it does not time it.
            .map(|p| p.created.shifted(p.snap.created))
            .reduce(At::earliest);
        let initial = self.kind_of_new(None) == WakeKind::Initial && self.wants();
        let start = match (queued.map(|q| q.1), pending) {
            (Some(q), Some(p)) => Some(q.earliest(p)),
            (q, p) => q.or(p),
        };
        if let Some(start) = start.or(initial.then(|| At::arrival(now))) {
            self.open(start, ctx);
            // Found underway: the streams that want pods now rose for this wake before
            // it was seen, so their next fall ends it and a rise after that is the next.
            let id = self.next_id;
            if self.deployment.is_some_and(|d| d.replicas > 0) {
                self.claimed[Stream::Deployment as usize] = id;
            }
            if self
                .pa
                .as_ref()
                .and_then(Autoscaler::desired)
                .is_some_and(|d| d > 0)
            {
                self.claimed[Stream::Autoscaler as usize] = id;
            }
        }
    }

    /// Pods serve and no wake is open: a serving period already explained, or one this
    /// process did not see begin, rebuilt from timestamps.
    fn settle_serving(&mut self, now: Stamp, ctx: &Ctx, out: &mut Vec<Finished>) {
        // The PA turned `Active=True` after the last wake ended: the revision was inactive
        // in between, so this serving is new even if a stale pod still looks ready.
        let pa_active = self
            .pa
            .as_ref()
            .and_then(|p| p.active)
            .map(|(s, _)| s.timestamp());
        let new_period = match (self.last, pa_active) {
            (Some(l), Some(since)) => since > l.end_second + 1,
            _ => false,
        };
        // What continuity explained before is undone by a PA that shows a new period.
        let explained = |p: &Pod| {
            (p.accounted && !new_period)
                || self
                    .last_recorded_serving
                    .is_some_and(|l| p.snap.created <= l)
                || self.last.is_some_and(|l| {
                    (l.start_second - 1..=l.end_second).contains(&p.created_second())
                })
        };
        let continuing = !new_period
            && (self.pods.iter().any(|p| p.snap.serving() && explained(p))
                || self
                    .last
                    .is_some_and(|l| pa_active.is_some_and(|s| s <= l.end_second + 1)));
        let unseen = self
            .pods
            .iter()
            .filter(|p| p.snap.serving() && !explained(p))
            .min_by_key(|p| p.snap.ready.as_ref().and_then(|c| c.since))
            .map(|p| (p.snap.created, p.ready));
        // A serving pod while the PA says it is inactive is one that is being removed.
        let pa_says_idle = self.pa.as_ref().is_some_and(|p| {
            p.snap
                .active
                .as_ref()
                .is_some_and(|c| c.is(CondStatus::False))
        });
        let Some((created, Some(end))) = unseen.filter(|_| !continuing && !pa_says_idle) else {
            if unseen.is_none() || continuing {
                self.served_before = true;
                self.failure = None;
                self.account_serving();
            }
            return;
        };
        let Some(kind) = self.kind_if_known(Some(created)) else {
            return; // the Revision or its Deployment will tell
        };
        self.open_as(kind, At::back_from(now, created), ctx);
        self.close(Some(Outcome::Served), end, now, out);
    }

    /// Moves the open wake on with what the objects show now.
    fn settle(&mut self, now: Stamp, ctx: &Ctx, out: &mut Vec<Finished>) {
        if self.wake.is_none() {
            self.settle_quiet(now, ctx, out);
        }
        let Some(mut w) = self.wake.take() else {
            return;
        };
        if let Some((since, _)) = self.pa.as_ref().and_then(|p| p.queued)
            && since.timestamp() >= w.requested.second() - 3
            && self.last.is_none_or(|l| since.timestamp() > l.start_second)
        {
            w.queued.get_or_insert(since.timestamp());
            w.evidence = true;
            w.floor = w.floor.min(since.timestamp() - 1);
            // A start not seen as it happened is bounded by the objects' own seconds.
            if !w.requested.exact {
                w.requested = w.requested.earliest(w.requested.shifted(since));
            }
        }
        if w.kind == WakeKind::Initial
            && let Some(created) = self.created_at(w.requested)
        {
            w.requested = created;
            w.floor = w.floor.min(created.second() - 1);
        }
        let floor = w.floor;
        let mine = move |p: &&Pod| !p.snap.deleting && p.created_second() >= floor;
        let first = self.pods.iter().filter(mine).map(|p| p.snap.created).min();
        w.evidence |= first.is_some();
        if !w.requested.exact
            && let Some(first) = first
        {
            w.requested = w.requested.earliest(w.requested.shifted(first));
        }
        let pa = self.pa.as_ref();
        let served = self
            .pods
            .iter()
            .filter(mine)
            .filter(|p| p.snap.serving())
            .filter_map(|p| p.ready)
            .chain(pa.and_then(|p| {
                let (since, at) = p.active?;
                (since.timestamp() >= w.floor && p.actual().unwrap_or(0) > 0).then_some(at)
            }))
            .reduce(At::earliest);
        if let Some(end) = served {
            self.wake = Some(w);
            return self.close(Some(Outcome::Served), end, now, out);
        }
        let timed_out = pa
            .and_then(|p| p.timed_out)
            .filter(|(since, _)| since.timestamp() > w.start_second());
        if w.failed.is_none()
            && let Some(f) = classify(
                self.pods.iter().filter(mine),
                timed_out.is_some(),
                now.mono,
                &ctx.thresholds,
            )
        {
            let end = timed_out.map_or(At::arrival(now), |(_, at)| at);
            let phases = self.phases(&w);
            out.extend(self.finish(&w, Outcome::Failed, end, Some(f.clone()), phases));
            self.failure = Some(f.clone());
            w.failed = Some(f);
        }
        if self.wants() {
            w.ending = None;
            self.wake = Some(w);
            return;
        }
        // The end is the first fall seen, or the PA's own `NoTraffic` stamp when the fall
        // came by a list or fell in a restart.
        let idle = self
            .pa
            .as_ref()
            .and_then(|p| p.idle)
            .filter(|(since, _)| since.timestamp() >= w.start_second())
            .map(|(_, at)| at);
        let first = [w.first_fall, idle]
            .into_iter()
            .flatten()
            .reduce(At::earliest);
        let ending = *w.ending.get_or_insert(first.unwrap_or(At::arrival(now)));
        self.wake = Some(w);
        let certain = self.wake.as_ref().is_some_and(|w| w.certain_abort);
        if certain || now.mono.saturating_duration_since(ending.mono) >= ABORT_GRACE {
            self.close(Some(Outcome::Aborted), ending, now, out);
        }
    }

    /// Ends the open wake at `end`; records it with `outcome` unless it was already
    /// recorded as failed.
    fn close(&mut self, outcome: Option<Outcome>, end: At, now: Stamp, out: &mut Vec<Finished>) {
        let Some(w) = self.wake.take() else { return };
        let outcome = match (&w.failed, outcome) {
            (Some(_), Some(Outcome::Served)) => {
                // Recorded as failed; it recovered on its own.
                self.served_before = true;
                None
            }
            (Some(_), _) => None,
            (None, o @ Some(Outcome::Served)) => o,
            (None, _) if !w.evidence => None,
            (None, o) => Some(o.unwrap_or(Outcome::Aborted)),
        };
        if let Some(outcome) = outcome {
            let phases = self.phases(&w);
            out.extend(self.finish(&w, outcome, end, None, phases));
            if outcome == Outcome::Served {
                self.account_serving();
                self.served_before = true;
                self.failure = None;
                self.last_recorded_serving = Some(end.wall);
            }
        }
        self.last = Some(Closed {
            id: w.id,
            start_second: w.start_second().min(w.requested.second()),
            end_second: end.second(),
            closed: Some(now.mono),
        });
    }

    /// The earliest object second that bounds the wake's start: the `Queued` transition,
    /// its first pod's creation, the revision's creation for an initial start.
    fn start_bound(&self, w: &Wake) -> Option<DateTime<Utc>> {
        let queued = w.queued.and_then(|q| DateTime::from_timestamp(q, 0));
        let pod = self
            .pods
            .iter()
            .filter(|p| p.created_second() >= w.floor)
            .map(|p| p.snap.created)
            .min();
        let created = self.created.filter(|_| w.kind == WakeKind::Initial);
        [queued, pod, created].into_iter().flatten().min()
    }

    /// Every pod serving now belongs to a serving period already explained.
    fn account_serving(&mut self) {
        for p in self.pods.iter_mut().filter(|p| p.snap.serving()) {
            p.accounted = true;
        }
    }

    /// When the wake's first pod was scheduled and started running.
    fn phases(&self, w: &Wake) -> (Option<At>, Option<At>) {
        let mine = || self.pods.iter().filter(|p| p.created_second() >= w.floor);
        (
            mine().filter_map(|p| p.scheduled).reduce(At::earliest),
            mine().filter_map(|p| p.running).reduce(At::earliest),
        )
    }

    fn finish(
        &mut self,
        w: &Wake,
        outcome: Outcome,
        end: At,
        failure: Option<Failure>,
        (scheduled, running): (Option<At>, Option<At>),
    ) -> Option<Finished> {
        let start_second = w.start_second();
        if self.recorded.contains(&start_second) {
            return None; // recorded before a restart or a relist
        }
        remember(&mut self.recorded, start_second);
        let served = outcome == Outcome::Served;
        // Known to the second only: the duration is an upper bound, so its start is the
        // earliest whole second the objects give for it, even if an arrival came later.
        let start = match self.start_bound(w) {
            Some(b) if !(w.requested.exact && end.exact) && b < w.requested.wall => {
                w.requested.shifted(b)
            }
            _ => w.requested,
        };
        Some(Finished {
            kind: w.kind,
            outcome,
            requested_at: start.wall,
            start_second,
            serving_at: served.then_some(end.wall),
            // Known to the millisecond, or an upper bound: never 0.
            duration_ms: end.ms_since(&start).max(1),
            phases: PhaseDurations {
                provisioning_ms: scheduled.map(|s| s.ms_since(&start)),
                pulling_image_ms: scheduled.zip(running).map(|(s, r)| r.ms_since(&s)),
                starting_ms: running.filter(|_| served).map(|r| end.ms_since(&r)),
            },
            precision: if start.exact && end.exact {
                Precision::Ms
            } else {
                Precision::S
            },
            failure,
        })
    }

    /// Where the revision stands, for the runtime read.
    pub fn summary(&self) -> Summary {
        let serving: Vec<&Pod> = self.pods.iter().filter(|p| p.snap.serving()).collect();
        let serving_since = serving
            .iter()
            .filter_map(|p| p.snap.ready.as_ref()?.since)
            .min();
        let pa = self.pa.as_ref();
        let desired = pa
            .and_then(Autoscaler::desired)
            .unwrap_or(self.deployment.map_or(0, |d| d.replicas));
        let actual = pa
            .and_then(Autoscaler::actual)
            .unwrap_or(serving.len() as u32);
        let (phase, wake) = match &self.wake {
            Some(w) => {
                let (scheduled, running) = self.phases(w);
                let phase = if w.failed.is_some() {
                    Phase::Failed
                } else if running.is_some() {
                    Phase::Starting
                } else if scheduled.is_some() {
                    Phase::PullingImage
                } else {
                    Phase::Provisioning
                };
                (phase, Some((w.requested.wall, w.deadline_at)))
            }
            None if !serving.is_empty() => (Phase::Serving, None),
            None if self.failure.is_some() => (Phase::Failed, None),
            None => (Phase::Idle, None),
        };
        Summary {
            phase,
            desired,
            actual,
            serving_since,
            wake,
            failure: self.failure.clone(),
        }
    }

    /// Whether a wake is open, so time passing can end it.
    pub fn waking(&self) -> bool {
        self.wake.is_some()
    }

    /// Whether `start_second` was recorded for this revision.
    pub fn recorded(&self, start_second: i64) -> bool {
        self.recorded.contains(&start_second)
    }
}

fn remember(keys: &mut VecDeque<i64>, second: i64) {
    keys.push_back(second);
    while keys.len() > REMEMBERED_KEYS {
        keys.pop_front();
    }
}

#[cfg(test)]
mod tests;
