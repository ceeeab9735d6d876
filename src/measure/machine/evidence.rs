//! What one revision's objects say, each change dated when it was ingested, and the
//! failure classification of a wake's pods.
//!
//! Every change is dated by the observation that brought it ([`At::date`]), not by the
//! evaluation that later uses it: watches of different kinds arrive in any order, so a
//! pod may turn ready before the Deployment's scale-up is seen, and its readiness must
//! keep the time it was seen.

use std::time::Instant;

use chrono::{DateTime, Utc};

use super::Thresholds;
use super::dating::{At, Side};
use crate::measure::observe::{CondStatus, Container, PaSnap, PodSnap, Stamp, Via};
use scaling_facts_api::Failure;

/// Waiting reasons that fail a wake at once.
const FATAL_WAITING: [&str; 5] = [
    "CrashLoopBackOff",
    "CreateContainerConfigError",
    "CreateContainerError",
    "InvalidImageName",
    "ErrImageNeverPull",
];
const PULL_ERRORS: [&str; 2] = ["ErrImagePull", "ImagePullBackOff"];

/// A pod and when each of its steps was seen.
#[derive(Debug, Clone)]
pub struct Pod {
    pub snap: PodSnap,
    /// Its creation, as a start.
    pub created: At,
    pub scheduled: Option<At>,
    pub running: Option<At>,
    /// When it first turned serving (ready, running, not terminating), as an end; kept
    /// after it stops, so that a pod that served is told from one that never did.
    pub ready: Option<At>,
    /// First seen with a pull error or unschedulable, for the failure thresholds.
    pub trouble_since: Option<Instant>,
    /// Its serving is explained: by a recorded wake, or as more pods of a revision that
    /// was already serving.
    pub accounted: bool,
    /// A list showed it: states between two snapshots may be unseen (a `Ready=True`
    /// among them). A pod only ever streamed, a backlog included, showed every change.
    pub listed: bool,
}

impl Pod {
    pub fn new(snap: PodSnap, stamp: Stamp, t: &Thresholds) -> Self {
        let created = At::date(
            stamp,
            Some(snap.created),
            Side::Start,
            t.late_event_tolerance,
        );
        let mut pod = Self {
            created,
            scheduled: None,
            running: None,
            ready: None,
            trouble_since: None,
            accounted: false,
            listed: false,
            snap: snap.clone(),
        };
        pod.update(snap, stamp, t);
        pod
    }

    /// Takes a newer snapshot of the pod, dating what changed.
    pub fn update(&mut self, snap: PodSnap, stamp: Stamp, t: &Thresholds) {
        let late = t.late_event_tolerance;
        self.listed |= stamp.via == Via::Listed;
        if self.scheduled.is_none()
            && let Some(c) = snap.scheduled.as_ref().filter(|c| c.is(CondStatus::True))
        {
            self.scheduled = Some(At::date(stamp, c.since, Side::Start, late));
        }
        if self.running.is_none()
            && let Container::Running { started_at } = &snap.container
        {
            self.running = Some(At::date(stamp, *started_at, Side::Start, late));
        }
        if snap.serving() && self.ready.is_none() {
            let since = snap.ready.as_ref().and_then(|c| c.since);
            self.ready = Some(At::date(stamp, since, Side::End, late));
        }
        if trouble(&snap).is_some() {
            // An unschedulable pod says since when; a listed one may have been so for
            // longer than the threshold already. A pull error's waiting state has no time.
            let since = snap
                .scheduled
                .as_ref()
                .filter(|c| c.is(CondStatus::False))
                .map_or(stamp.mono, |c| {
                    At::date(stamp, c.since, Side::Start, late).mono
                });
            self.trouble_since.get_or_insert(since);
        } else {
            self.trouble_since = None;
        }
        self.snap = snap;
    }

    pub fn created_second(&self) -> i64 {
        self.snap.created.timestamp()
    }
}

/// A PodAutoscaler and when its `Active` condition last changed.
#[derive(Debug, Clone, Default)]
pub struct Autoscaler {
    pub snap: PaSnap,
    /// The `Active` condition, when it is one the machine reads, with its
    /// `lastTransitionTime` and the date it was first seen with. One at a time: the
    /// condition is in one state, and a fleet holds one of these per revision, so the
    /// four kinds share the slot.
    transition: Option<(Activity, DateTime<Utc>, At)>,
    /// The `lastTransitionTime` of the last `Active=True` seen, kept once the condition
    /// moves on: a list that meets the scale-down may find the pod that served first no
    /// longer ready, and this still bounds when its period began serving.
    active_since: Option<DateTime<Utc>>,
}

/// The states of `Active` the machine reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Activity {
    /// `Active=Unknown Queued`: Knative is buffering requests for a wake.
    Queued,
    /// `Active=True`.
    Active,
    /// `Active=False TimedOut`: Knative gave up on a wake.
    TimedOut,
    /// `Active=False NoTraffic`: back at zero.
    Idle,
}

impl Autoscaler {
    /// Takes a newer snapshot; a condition whose `lastTransitionTime` is unchanged keeps
    /// the date it was first seen with.
    pub fn update(&mut self, snap: PaSnap, stamp: Stamp, t: &Thresholds) {
        let late = t.late_event_tolerance;
        let now = snap.active.as_ref().and_then(|c| {
            let (activity, side) = match c.status {
                CondStatus::Unknown if c.reason_is("Queued") => (Activity::Queued, Side::Start),
                CondStatus::True => (Activity::Active, Side::End),
                CondStatus::False if c.reason_is("TimedOut") => (Activity::TimedOut, Side::End),
                CondStatus::False if c.reason_is("NoTraffic") => (Activity::Idle, Side::End),
                _ => return None,
            };
            Some((activity, c.since?, side))
        });
        if let Some((Activity::Active, since, _)) = now {
            self.active_since = Some(since);
        }
        self.transition = now.map(|(activity, since, side)| match self.transition {
            Some((was, s, at)) if was == activity && s == since => (activity, since, at),
            _ => (activity, since, At::date(stamp, Some(since), side, late)),
        });
        self.snap = snap;
    }

    fn when(&self, activity: Activity) -> Option<(DateTime<Utc>, At)> {
        self.transition
            .filter(|(a, _, _)| *a == activity)
            .map(|(_, since, at)| (since, at))
    }

    /// `Active=Unknown Queued`, since when and first seen when.
    pub fn queued(&self) -> Option<(DateTime<Utc>, At)> {
        self.when(Activity::Queued)
    }

    /// When it last turned `Active=True`, whatever it says now.
    pub fn last_active(&self) -> Option<DateTime<Utc>> {
        self.active_since
    }

    /// When `Active` last changed, whatever it says now: every wake moves it.
    pub fn changed_since(&self) -> Option<DateTime<Utc>> {
        self.snap.active.as_ref().and_then(|c| c.since)
    }

    /// `Active=True`.
    pub fn active(&self) -> Option<(DateTime<Utc>, At)> {
        self.when(Activity::Active)
    }

    /// `Active=False TimedOut`.
    pub fn timed_out(&self) -> Option<(DateTime<Utc>, At)> {
        self.when(Activity::TimedOut)
    }

    /// `Active=False NoTraffic`.
    pub fn idle(&self) -> Option<(DateTime<Utc>, At)> {
        self.when(Activity::Idle)
    }

    /// The two `Active=False` conditions that end a wake, `NoTraffic` and `TimedOut`
    /// (at most one is set).
    pub fn ended(&self) -> [Option<(DateTime<Utc>, At)>; 2] {
        [self.idle(), self.timed_out()]
    }

    /// Their `lastTransitionTime`s.
    pub fn ended_since(&self) -> [Option<DateTime<Utc>>; 2] {
        self.ended().map(|c| c.map(|(since, _)| since))
    }

    /// `desiredScale` when known: absent or negative is unknown, never 0.
    pub fn desired(&self) -> Option<u32> {
        self.snap.desired.and_then(|d| u32::try_from(d).ok())
    }

    pub fn actual(&self) -> Option<u32> {
        self.snap.actual.and_then(|a| u32::try_from(a).ok())
    }
}

/// A reason and a message a pod shows, borrowed from it.
pub(super) type Shown<'a> = (&'a str, &'a str);

/// A container that fails the wake at once.
fn fatal(p: &PodSnap) -> Option<Shown<'_>> {
    match &p.container {
        Container::Waiting { reason, message } if FATAL_WAITING.contains(&reason.as_str()) => {
            Some((reason, message.as_deref().unwrap_or("")))
        }
        _ => None,
    }
}

/// A pull error (`true`) or an unschedulable pod (`false`): fails the wake only if it
/// lasts.
fn trouble(p: &PodSnap) -> Option<(bool, Shown<'_>)> {
    if let Container::Waiting { reason, message } = &p.container
        && PULL_ERRORS.contains(&reason.as_str())
    {
        return Some((true, (reason, message.as_deref().unwrap_or(""))));
    }
    let c = p.scheduled.as_ref().filter(|c| c.is(CondStatus::False))?;
    Some((
        false,
        (
            c.reason.as_deref().unwrap_or("Unschedulable"),
            c.message.as_deref().unwrap_or(""),
        ),
    ))
}

/// Some pod made in `floor` or later is not leaving: while one stands, Knative has not
/// scaled the wake it was made for to zero.
pub(super) fn standing_since(pods: &[Pod], floor: i64) -> bool {
    pods.iter()
        .any(|p| !p.snap.terminating() && p.created_second() >= floor)
}

/// What a pod shows that would explain a wake never serving: a container that keeps
/// failing, a pull error, or no node.
pub(super) fn why_not_serving(p: &PodSnap) -> Option<Shown<'_>> {
    fatal(p).or_else(|| trouble(p).map(|(_, shown)| shown))
}

pub(super) fn failure((reason, message): Shown<'_>) -> Failure {
    Failure {
        reason: reason.to_owned(),
        message: message.to_owned(),
    }
}

/// Why a wake whose pods are `pods` has failed at `now`, if it has; `timed_out` when
/// Knative gave up on this wake, for the reason its pods showed last (`shown`) if they
/// are gone.
pub fn classify<'a>(
    pods: impl Iterator<Item = &'a Pod>,
    timed_out: bool,
    shown: Option<&Failure>,
    now: Instant,
    t: &Thresholds,
) -> Option<Failure> {
    for p in pods {
        if let Some(f) = fatal(&p.snap) {
            return Some(failure(f));
        }
        if let (Some((pull, f)), Some(since)) = (trouble(&p.snap), p.trouble_since) {
            let after = if pull {
                t.image_pull_failure_after
            } else {
                t.unschedulable_failure_after
            };
            if now.saturating_duration_since(since) >= after || timed_out {
                return Some(failure(f));
            }
        }
    }
    timed_out.then(|| shown.cloned().unwrap_or_else(gave_up))
}

/// Knative gave up activating the revision: its PA's `TimedOut`.
pub(super) fn gave_up() -> Failure {
    Failure {
        reason: "TimedOut".into(),
        message: "The target could not be activated.".into(),
    }
}
