//! The per-revision wake state machine: snapshots of the revision's Deployment,
//! PodAutoscaler and pods go in, finished wakes come out.
//!
//! A wake starts at the first sign that Knative wants pods while none is ready
//! (Deployment replicas, PA desiredScale, or PA `Active=Unknown Queued`, whichever arrives
//! first); it is served when a pod of the wake is ready, aborted when the PA wants zero
//! again first, failed when a pod shows a failure (at once for crash loops and bad
//! configuration, after a threshold for image pulls and scheduling) or the PA times out.
//!
//! Times come from arrival stamps when the change was seen live, else from the objects'
//! whole-second timestamps, and the wake is then marked second-precision. A live event that
//! arrives well after its object timestamp (a burst after a watch gap) counts as not live.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::observe::{CondStatus, Container, PaSnap, PodSnap, Stamp};
use super::view::{Failure, Phase};
use super::wake::{Outcome, PhaseDurations, Precision, WakeKind};

/// Waiting reasons that fail a wake at once.
const FATAL_WAITING: [&str; 5] = [
    "CrashLoopBackOff",
    "CreateContainerConfigError",
    "CreateContainerError",
    "InvalidImageName",
    "ErrImageNeverPull",
];
const PULL_ERRORS: [&str; 2] = ["ErrImagePull", "ImagePullBackOff"];

/// Tunables of the classification.
#[derive(Debug, Clone, Copy)]
pub struct Thresholds {
    /// An image pull failing this long fails the wake.
    pub image_pull_failure_after: Duration,
    /// A pod unschedulable this long fails the wake.
    pub unschedulable_failure_after: Duration,
    /// A live event more than this behind its object timestamp is treated as not live.
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

/// A point in time on both clocks; `exact` when it came from an arrival stamp.
#[derive(Debug, Clone, Copy)]
struct At {
    mono: Instant,
    wall: DateTime<Utc>,
    exact: bool,
}

impl At {
    /// The arrival, or the object's timestamp when the arrival cannot date the change.
    fn of(stamp: Stamp, object_time: Option<DateTime<Utc>>, t: &Thresholds) -> Self {
        let late = object_time.is_some_and(|ot| {
            (stamp.wall - ot).to_std().unwrap_or_default()
                > t.late_event_tolerance + Duration::from_secs(1)
        });
        match object_time {
            Some(ot) if !stamp.live || late => {
                let back = (stamp.wall - ot).to_std().unwrap_or_default();
                Self {
                    mono: stamp.mono.checked_sub(back).unwrap_or(stamp.mono),
                    wall: ot,
                    exact: false,
                }
            }
            _ => Self {
                mono: stamp.mono,
                wall: stamp.wall,
                exact: stamp.live,
            },
        }
    }

    fn ms_since(&self, earlier: &At) -> u64 {
        self.mono
            .saturating_duration_since(earlier.mono)
            .as_millis() as u64
    }
}

#[derive(Debug, Clone)]
struct Wake {
    kind: WakeKind,
    requested: At,
    /// Start second from an object timestamp, once known.
    anchor: Option<i64>,
    scheduled: Option<At>,
    running: Option<At>,
    /// First time a pull error or unschedulable pod was seen.
    trouble_since: Option<Instant>,
    /// Set once the wake was recorded as failed; the wake stays until Knative gives up.
    failed: Option<Failure>,
    deadline_at: DateTime<Utc>,
    /// When Knative stopped wanting pods with none ready: an abort, unless a lagging pod
    /// watch shows a ready pod within the grace period.
    ending: Option<At>,
    /// Started because a list showed pods wanted, not on a live rise.
    inferred: bool,
    /// The PA queued, or a pod of the wake appeared: the wake certainly happened.
    evidence: bool,
}

/// How long an apparent abort waits for other watches to catch up.
pub const ABORT_GRACE: Duration = Duration::from_millis(1_500);

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

/// One revision's wake state.
#[derive(Debug, Clone)]
pub struct Machine {
    replicas: Option<u32>,
    pa: Option<PaSnap>,
    pods: Vec<PodSnap>,
    wake: Option<Box<Wake>>,
    /// The last failure, shown as `unavailable` until a new wake starts.
    failure: Option<Failure>,
    /// The revision served at least once (initial start done).
    initialized: bool,
    /// `serving_at` of the last wake recorded, so a restart does not record it again.
    last_recorded_serving: Option<DateTime<Utc>>,
    /// No wake of this revision was ever recorded.
    recorded_nothing: bool,
    /// The revision appeared while watching: its initial start is measured live.
    created_live: Option<At>,
    created: Option<DateTime<Utc>>,
    /// Whether Knative wanted pods at the last evaluation: a wake starts on the rise.
    wanted: bool,
}

impl Default for Machine {
    fn default() -> Self {
        Self {
            replicas: None,
            pa: None,
            pods: Vec::new(),
            wake: None,
            failure: None,
            initialized: false,
            last_recorded_serving: None,
            recorded_nothing: true,
            created_live: None,
            created: None,
            wanted: false,
        }
    }
}

/// A pod created this soon after its revision is the revision's first.
const INITIAL_POD_WITHIN_SECONDS: i64 = 5;

/// What the machine needs to know about the revision's settings.
#[derive(Debug, Clone, Copy)]
pub struct Ctx {
    pub thresholds: Thresholds,
    /// Progress deadline + 30 s: when Knative gives up on a wake.
    pub activation_timeout: Duration,
}

impl Machine {
    /// What the store knew before this process started.
    pub fn restore(&mut self, last_served: Option<DateTime<Utc>>, initialized: bool) {
        self.last_recorded_serving = last_served.max(self.last_recorded_serving);
        self.initialized |= initialized;
        self.recorded_nothing = false;
    }

    /// The Revision object was seen; `stamp.live` when it was just created.
    pub fn revision_seen(&mut self, created: DateTime<Utc>, stamp: Stamp) {
        if self.created.is_none() && stamp.live {
            self.created_live = Some(At {
                mono: stamp.mono,
                wall: stamp.wall,
                exact: true,
            });
        }
        self.created = Some(created);
    }

    pub fn set_replicas(&mut self, replicas: u32) {
        self.replicas = Some(replicas);
    }

    pub fn set_pa(&mut self, pa: PaSnap) {
        self.initialized |= pa.initialized;
        self.pa = Some(pa);
    }

    pub fn set_pod(&mut self, pod: PodSnap) {
        match self.pods.iter_mut().find(|p| p.name == pod.name) {
            Some(p) => *p = pod,
            None => self.pods.push(pod),
        }
    }

    pub fn remove_pod(&mut self, name: &str) {
        self.pods.retain(|p| p.name != name);
    }

    /// Any of the three signals says Knative wants pods. They arrive on separate watches,
    /// so the first to arrive starts a wake, and all must agree before it counts as over.
    fn wants_pods(&self) -> bool {
        let pa = self.pa.as_ref();
        let desired = pa.and_then(|p| p.desired).is_some_and(|d| d > 0);
        let queued = pa
            .and_then(|p| p.active.as_ref())
            .is_some_and(|c| c.is(CondStatus::Unknown) && c.reason_is("Queued"));
        desired || queued || self.replicas.unwrap_or(0) > 0
    }

    fn pa_queued_since(&self) -> Option<DateTime<Utc>> {
        let c = self.pa.as_ref()?.active.as_ref()?;
        (c.is(CondStatus::Unknown) && c.reason_is("Queued"))
            .then_some(c.since)
            .flatten()
    }

    fn pa_timed_out(&self) -> bool {
        self.pa
            .as_ref()
            .and_then(|pa| pa.active.as_ref())
            .is_some_and(|c| c.is(CondStatus::False) && c.reason_is("TimedOut"))
    }

    /// The pod that made the revision serve: the first to become ready.
    fn first_ready(&self) -> Option<&PodSnap> {
        self.pods
            .iter()
            .filter(|p| p.serving())
            .min_by_key(|p| p.ready.as_ref().and_then(|c| c.since))
    }

    /// Applies what is known now; returns a wake that ended.
    pub fn evaluate(&mut self, stamp: Stamp, ctx: &Ctx) -> Option<Finished> {
        let wanted = self.wanted;
        self.wanted = self.wants_pods();
        if self.wake.is_none() {
            return self.evaluate_quiet(stamp, ctx, wanted);
        }
        let t = &ctx.thresholds;
        let queued_since = self.pa_queued_since();
        let ready = self.first_ready().map(|p| {
            (
                p.ready.as_ref().and_then(|c| c.since),
                p.created.timestamp(),
            )
        });
        let timed_out = self.pa_timed_out();
        let wants = self.wants_pods();
        let first = self
            .pods
            .iter()
            .filter(|p| !p.deleting)
            .map(|p| p.created.timestamp())
            .min();
        // Disjoint fields: the pods are read while the wake is changed.
        let live_pods = &self.pods;
        let w = self.wake.as_mut().expect("checked above");
        if w.anchor.is_none() && w.kind == WakeKind::Wake {
            w.anchor = queued_since.map(|s| s.timestamp());
        }
        w.evidence |= queued_since.is_some() || live_pods.iter().any(|p| !p.deleting);
        // A start dated only by when a list arrived moves back to its first pod's creation,
        // the earliest object timestamp of the wake.
        if !w.requested.exact
            && let Some(created) = live_pods
                .iter()
                .filter(|p| !p.deleting)
                .map(|p| p.created)
                .min()
            && created < w.requested.wall
        {
            let back = (w.requested.wall - created).to_std().unwrap_or_default();
            w.requested = At {
                mono: w
                    .requested
                    .mono
                    .checked_sub(back)
                    .unwrap_or(w.requested.mono),
                wall: created,
                exact: false,
            };
        }
        if w.scheduled.is_none()
            && let Some(c) = live_pods
                .iter()
                .filter(|p| !p.deleting)
                .filter_map(|p| p.scheduled.as_ref())
                .find(|c| c.is(CondStatus::True))
        {
            w.scheduled = Some(At::of(stamp, c.since, t));
        }
        if w.running.is_none()
            && let Some(started) =
                live_pods
                    .iter()
                    .filter(|p| !p.deleting)
                    .find_map(|p| match &p.container {
                        Container::Running { started_at } => Some(*started_at),
                        _ => None,
                    })
        {
            w.running = Some(At::of(stamp, started, t));
        }
        if let Some((ready_since, first_pod_second)) = ready {
            let serving = At::of(stamp, ready_since, t);
            let wake = self.wake.take().expect("checked above");
            self.initialized = true;
            self.failure = None;
            if wake.failed.is_some() {
                return None; // already recorded as failed; it recovered on its own
            }
            self.last_recorded_serving = Some(serving.wall);
            self.recorded_nothing = false;
            return Some(finish(
                &wake,
                Outcome::Served,
                serving,
                None,
                Some(first_pod_second),
            ));
        }
        if w.failed.is_none() {
            let failure = classify(live_pods, timed_out, w, stamp, t);
            if let Some(failure) = failure {
                let at = At {
                    mono: stamp.mono,
                    wall: stamp.wall,
                    exact: stamp.live,
                };
                w.failed = Some(failure.clone());
                let done = finish(w, Outcome::Failed, at, Some(failure.clone()), first);
                self.failure = Some(failure);
                return Some(done);
            }
        }
        if wants {
            let end = w.ending?;
            // Knative wanted zero, then pods again: the first wake was aborted and this
            // is a new one.
            let wake = self.wake.take().expect("checked above");
            let aborted = finish(&wake, Outcome::Aborted, end, None, first);
            let _started = self.evaluate_quiet(stamp, ctx, false);
            return Some(aborted);
        }
        if w.failed.is_some() {
            self.wake = None;
            return None;
        }
        let end = *w.ending.get_or_insert(At {
            mono: stamp.mono,
            wall: stamp.wall,
            exact: stamp.live,
        });
        if stamp.mono.saturating_duration_since(end.mono) < ABORT_GRACE {
            return None;
        }
        let wake = self.wake.take().expect("checked above");
        if wake.inferred && !wake.evidence {
            // Only a list's stale "pods wanted" ever suggested this wake, and nothing
            // confirmed it: it was one watch behind another, not a wake.
            return None;
        }
        Some(finish(&wake, Outcome::Aborted, end, None, first))
    }

    /// No wake in progress: start one, or notice a wake that happened unseen.
    fn evaluate_quiet(&mut self, stamp: Stamp, ctx: &Ctx, wanted_before: bool) -> Option<Finished> {
        let t = &ctx.thresholds;
        let kind = if self.initialized {
            WakeKind::Wake
        } else {
            WakeKind::Initial
        };
        if let Some(pod) = self.first_ready().cloned() {
            // Serving. A ready pod newer than the last recorded wake came from a wake this
            // process did not see: rebuild it from the pod's timestamps.
            let unseen = self.last_recorded_serving.is_none_or(|l| pod.created > l);
            self.failure = None;
            let ready_at = pod.ready.as_ref().and_then(|c| c.since)?;
            if !unseen {
                self.initialized = true;
                return None;
            }
            self.last_recorded_serving = Some(ready_at);
            // Knative creates a revision's first pod at once; a pod that came within
            // seconds of the revision, with nothing recorded before, was its initial start.
            let initial = self
                .created
                .is_some_and(|c| (pod.created - c).num_seconds() <= INITIAL_POD_WITHIN_SECONDS)
                && self.recorded_nothing;
            let kind = if initial || !self.initialized {
                WakeKind::Initial
            } else {
                WakeKind::Wake
            };
            let start = match kind {
                WakeKind::Initial => self.created.unwrap_or(pod.created),
                WakeKind::Wake => pod.created,
            };
            let back = |ts: DateTime<Utc>| At {
                mono: stamp
                    .mono
                    .checked_sub((stamp.wall - ts).to_std().unwrap_or_default())
                    .unwrap_or(stamp.mono),
                wall: ts,
                exact: false,
            };
            let wake = Wake {
                kind,
                requested: back(start),
                anchor: Some(start.timestamp()),
                scheduled: pod.scheduled.as_ref().and_then(|c| c.since).map(back),
                running: match &pod.container {
                    Container::Running {
                        started_at: Some(s),
                    } => Some(back(*s)),
                    _ => None,
                },
                trouble_since: None,
                failed: None,
                deadline_at: start + ctx.activation_timeout,
                ending: None,
                inferred: true,
                evidence: true,
            };
            self.initialized = true;
            self.recorded_nothing = false;
            return Some(finish(
                &wake,
                Outcome::Served,
                back(ready_at),
                None,
                Some(start.timestamp()),
            ));
        }
        // A wake starts when Knative starts wanting pods. From a list the rise cannot be
        // seen: wanting pods with none ready (and none being removed) is a wake underway.
        let rising = self.wanted && !wanted_before;
        let underway = !stamp.live && self.wanted && !self.pods.iter().any(|p| p.deleting);
        if !(rising || underway) {
            return None;
        }
        // A wake starts. Live, it is dated by this arrival; from a list, by the objects.
        let object_start = match kind {
            WakeKind::Initial => self.created,
            WakeKind::Wake => self.pa_queued_since().or_else(|| {
                self.pods
                    .iter()
                    .filter(|p| !p.deleting)
                    .map(|p| p.created)
                    .min()
            }),
        };
        let requested = match (kind, self.created_live) {
            (WakeKind::Initial, Some(created)) => created,
            _ => At::of(
                stamp,
                if stamp.live {
                    self.pa_queued_since()
                } else {
                    object_start
                },
                t,
            ),
        };
        let anchor = match kind {
            WakeKind::Initial => self.created.map(|c| c.timestamp()),
            WakeKind::Wake => self.pa_queued_since().map(|s| s.timestamp()),
        };
        self.failure = None;
        self.wake = Some(Box::new(Wake {
            kind,
            requested,
            anchor,
            scheduled: None,
            running: None,
            trouble_since: None,
            failed: None,
            deadline_at: requested.wall + ctx.activation_timeout,
            ending: None,
            inferred: !rising || !stamp.live,
            evidence: false,
        }));
        // The same snapshot may already show progress (a list merges states).
        self.evaluate(stamp, ctx)
    }

    /// Where the revision stands, for the runtime read.
    pub fn summary(&self) -> Summary {
        let serving = self.pods.iter().filter(|p| p.serving()).count();
        let serving_since = self
            .pods
            .iter()
            .filter(|p| p.serving())
            .filter_map(|p| p.ready.as_ref()?.since)
            .min();
        let pa = self.pa.as_ref();
        let desired = pa
            .and_then(|p| p.desired)
            .filter(|d| *d >= 0)
            .map_or(self.replicas.unwrap_or(0), |d| d as u32);
        let actual = pa
            .and_then(|p| p.actual)
            .filter(|a| *a >= 0)
            .map_or(serving as u32, |a| a as u32);
        let (phase, wake) = match &self.wake {
            Some(w) if w.failed.is_some() => {
                (Phase::Failed, Some((w.requested.wall, w.deadline_at)))
            }
            Some(w) => {
                let phase = if w.running.is_some() {
                    Phase::Starting
                } else if w.scheduled.is_some() {
                    Phase::PullingImage
                } else {
                    Phase::Provisioning
                };
                (phase, Some((w.requested.wall, w.deadline_at)))
            }
            None if serving > 0 => (Phase::Serving, None),
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

    /// Whether a wake is being timed, for ticks.
    pub fn waking(&self) -> bool {
        self.wake.as_ref().is_some_and(|w| w.failed.is_none())
    }
}

/// Why a wake in progress has failed, if it has.
fn classify(
    pods: &[PodSnap],
    timed_out: bool,
    w: &mut Wake,
    stamp: Stamp,
    t: &Thresholds,
) -> Option<Failure> {
    let mut trouble = None;
    for p in pods.iter().filter(|p| !p.deleting) {
        if let Container::Waiting { reason, message } = &p.container {
            if FATAL_WAITING.contains(&reason.as_str()) {
                return Some(Failure {
                    reason: reason.clone(),
                    message: message.clone().unwrap_or_default(),
                });
            }
            if PULL_ERRORS.contains(&reason.as_str()) {
                trouble = Some((
                    t.image_pull_failure_after,
                    reason.clone(),
                    message.clone().unwrap_or_default(),
                ));
            }
        }
        if let Some(c) = &p.scheduled
            && c.is(CondStatus::False)
        {
            let reason = c.reason.clone().unwrap_or_else(|| "Unschedulable".into());
            trouble = Some((
                t.unschedulable_failure_after,
                reason,
                c.message.clone().unwrap_or_default(),
            ));
        }
    }
    if timed_out {
        let (reason, message) = trouble.map(|(_, r, m)| (r, m)).unwrap_or_else(|| {
            (
                "TimedOut".into(),
                "The target could not be activated.".into(),
            )
        });
        return Some(Failure { reason, message });
    }
    match trouble {
        Some((after, reason, message)) => {
            let since = *w.trouble_since.get_or_insert(stamp.mono);
            (stamp.mono.saturating_duration_since(since) >= after)
                .then_some(Failure { reason, message })
        }
        None => {
            w.trouble_since = None;
            None
        }
    }
}

fn finish(
    w: &Wake,
    outcome: Outcome,
    end: At,
    failure: Option<Failure>,
    first_pod: Option<i64>,
) -> Finished {
    let served = outcome == Outcome::Served;
    let phases = PhaseDurations {
        provisioning_ms: w.scheduled.map(|s| s.ms_since(&w.requested)),
        pulling_image_ms: match (w.scheduled, w.running) {
            (Some(s), Some(r)) => Some(r.ms_since(&s)),
            _ => None,
        },
        starting_ms: match (w.running, served) {
            (Some(r), true) => Some(end.ms_since(&r)),
            _ => None,
        },
    };
    let exact = w.requested.exact && end.exact;
    Finished {
        kind: w.kind,
        outcome,
        requested_at: w.requested.wall,
        start_second: w
            .anchor
            .or(first_pod)
            .unwrap_or(w.requested.wall.timestamp()),
        serving_at: served.then_some(end.wall),
        duration_ms: end.ms_since(&w.requested),
        phases,
        precision: if exact { Precision::Ms } else { Precision::S },
        failure,
    }
}

#[cfg(test)]
mod tests;
