//! The state machine on hand-made sequences, each a case docs/knative.md, "What a watcher must tolerate" says a real cluster
//! produces. The generated orderings are in `tests/orderings.rs`.

use super::*;
use crate::measure::observe::{Cond, CondStatus, Container, PaSnap, PodSnap, Via};
use chrono::TimeZone;
use scaling_facts_api::Phase;

/// A machine fed by hand: each call is one observation arriving `ms` after the start.
struct Feed {
    m: Machine,
    mono: Instant,
    wall: DateTime<Utc>,
    version: u64,
}

fn ctx() -> Ctx {
    Ctx {
        thresholds: Thresholds {
            image_pull_failure_after: Duration::from_secs(5),
            unschedulable_failure_after: Duration::from_secs(5),
            late_event_tolerance: Duration::from_secs(2),
        },
        activation_timeout: Duration::from_secs(630),
        born_at_zero: false,
        behind: false,
        pa_behind: false,
        watched_since: None,
    }
}

fn cond(status: CondStatus, reason: Option<&str>, since: DateTime<Utc>) -> Cond {
    Cond {
        status,
        reason: reason.map(Into::into),
        message: None,
        since: Some(since),
    }
}

impl Feed {
    fn new() -> Self {
        Self {
            m: Machine::default(),
            mono: Instant::now(),
            wall: Utc.timestamp_opt(1_800_000_000, 0).unwrap(),
            version: 0,
        }
    }

    fn stamp(&self, ms: u64, via: Via) -> Stamp {
        Stamp {
            mono: self.mono + Duration::from_millis(ms),
            wall: self.wall + chrono::Duration::milliseconds(ms as i64),
            via,
        }
    }

    /// The whole second `ms` falls in, as an object timestamp.
    fn second(&self, ms: u64) -> DateTime<Utc> {
        let t = self.wall + chrono::Duration::milliseconds(ms as i64);
        Utc.timestamp_opt(t.timestamp(), 0).unwrap()
    }

    fn v(&mut self) -> u64 {
        self.version += 1;
        self.version
    }

    fn dep(&mut self, replicas: u32, generation: i64, ms: u64, via: Via) -> Vec<Finished> {
        let dep = DeploymentSnap {
            version: self.v(),
            replicas,
            generation,
        };
        self.m.set_deployment(dep, self.stamp(ms, via));
        self.eval(ms, via)
    }

    fn pa(&mut self, desired: i32, actual: i32, active: Cond, ms: u64, via: Via) -> Vec<Finished> {
        let snap = PaSnap {
            version: self.v(),
            desired: Some(desired),
            actual: Some(actual),
            active: Some(active),
            initialized: true,
            initialized_since: None,
        };
        self.m.set_pa(snap, self.stamp(ms, via), &ctx().thresholds);
        self.eval(ms, via)
    }

    fn queued(&mut self, at_ms: u64, ms: u64, via: Via) -> Vec<Finished> {
        let c = cond(CondStatus::Unknown, Some("Queued"), self.second(at_ms));
        self.pa(1, 0, c, ms, via)
    }

    fn no_traffic(&mut self, at_ms: u64, ms: u64, via: Via) -> Vec<Finished> {
        let c = cond(CondStatus::False, Some("NoTraffic"), self.second(at_ms));
        self.pa(0, 0, c, ms, via)
    }

    fn pod(&mut self, mut p: PodSnap, ms: u64, via: Via) -> Vec<Finished> {
        p.version = self.v();
        self.m.set_pod(p, self.stamp(ms, via), &ctx().thresholds);
        self.eval(ms, via)
    }

    fn eval(&mut self, ms: u64, via: Via) -> Vec<Finished> {
        self.m.evaluate(self.stamp(ms, via), &ctx())
    }

    fn new_pod(&self, name: &str, created_ms: u64) -> PodSnap {
        PodSnap {
            name: name.into(),
            version: 0,
            created: self.second(created_ms),
            deleting: None,
            running: false,
            scheduled: None,
            ready: None,
            container: Container::Absent,
            restarts: 0,
            last_exit_code: None,
        }
    }

    fn ready_pod(&self, name: &str, created_ms: u64, ready_ms: u64) -> PodSnap {
        PodSnap {
            running: true,
            container: Container::Running {
                started_at: Some(self.second(created_ms)),
            },
            ready: Some(cond(CondStatus::True, None, self.second(ready_ms))),
            ..self.new_pod(name, created_ms)
        }
    }

    /// A wake seen live from start to its pod `name` ready, recorded served; returns the
    /// ready pod, to be scaled away by the caller.
    fn live_wake(&mut self, name: &str, start_ms: u64, pod_ms: u64, ready_ms: u64) -> PodSnap {
        self.dep(1, 8, start_ms, Via::Watched);
        self.queued(start_ms, start_ms + 3, Via::Watched);
        self.pod(self.new_pod(name, pod_ms), pod_ms, Via::Watched);
        let ready = self.ready_pod(name, pod_ms, ready_ms);
        let done = one(self.pod(ready.clone(), ready_ms, Via::Watched));
        assert_eq!(done.outcome, Outcome::Served);
        ready
    }

    /// A revision that served long ago and sits at zero, as the first lists show it.
    fn idle() -> Self {
        let mut f = Self::new();
        let stamp = f.stamp(0, Via::Listed);
        f.m.revision_seen(
            f.second(0) - chrono::Duration::days(1),
            stamp,
            &ctx().thresholds,
        );
        f.dep(0, 7, 0, Via::Listed);
        assert!(f.no_traffic(0, 0, Via::Listed).is_empty());
        f.m.served_before = true;
        assert_eq!(f.m.summary().phase, Phase::Idle);
        f
    }
}

fn one(mut done: Vec<Finished>) -> Finished {
    assert_eq!(done.len(), 1, "{done:#?}");
    done.remove(0)
}

#[test]
fn a_live_wake_is_timed_by_arrivals() {
    let mut f = Feed::idle();
    assert!(f.dep(1, 8, 1_000, Via::Watched).is_empty());
    assert_eq!(f.m.summary().phase, Phase::Provisioning);
    f.queued(1_000, 1_004, Via::Watched);
    let mut p = f.new_pod("p1", 1_020);
    f.pod(p.clone(), 1_030, Via::Watched);
    p.scheduled = Some(cond(CondStatus::True, None, f.second(1_250)));
    p.container = Container::Waiting {
        reason: "ContainerCreating".into(),
        message: None,
    };
    f.pod(p.clone(), 1_250, Via::Watched);
    assert_eq!(f.m.summary().phase, Phase::PullingImage);
    p.running = true;
    p.container = Container::Running {
        started_at: Some(f.second(2_100)),
    };
    f.pod(p.clone(), 2_100, Via::Watched);
    assert_eq!(f.m.summary().phase, Phase::Starting);
    p.ready = Some(cond(CondStatus::True, None, f.second(2_600)));
    let done = one(f.pod(p, 2_600, Via::Watched));
    assert_eq!(done.outcome, Outcome::Served);
    assert_eq!(done.kind, WakeKind::Wake);
    assert_eq!(done.duration_ms, 1_600);
    assert_eq!(done.precision, Precision::Ms);
    assert_eq!(done.start_second, f.second(1_000).timestamp());
    assert_eq!(done.phases.provisioning_ms, Some(250));
    assert_eq!(done.phases.pulling_image_ms, Some(850));
    assert_eq!(done.phases.starting_ms, Some(500));
    assert_eq!(f.m.summary().phase, Phase::Serving);
    assert!(
        f.eval(9_000, Via::Listed).is_empty(),
        "a relist records nothing"
    );
}

#[test]
fn desired_back_to_zero_before_ready_is_an_abort() {
    let mut f = Feed::idle();
    f.queued(1_000, 1_000, Via::Watched);
    // The PA's own stream shows the rise and the fall with nothing served between.
    let done = one(f.no_traffic(3_000, 3_000, Via::Watched));
    assert_eq!(done.outcome, Outcome::Aborted);
    assert_eq!(done.duration_ms, 2_000);
    assert_eq!(f.m.summary().phase, Phase::Idle);
}

#[test]
fn an_abort_seen_on_the_deployment_alone_waits_for_the_other_watches() {
    let mut f = Feed::idle();
    f.dep(1, 8, 1_000, Via::Watched);
    f.queued(1_000, 1_010, Via::Watched);
    // The PA stream is behind: only the Deployment shows the fall, and then a relist of
    // the PA shows it at zero.
    assert!(f.dep(0, 9, 3_000, Via::Watched).is_empty());
    assert!(
        f.no_traffic(3_000, 3_500, Via::Listed).is_empty(),
        "a grace for the pods"
    );
    let done = one(f.eval(5_600, Via::Watched));
    assert_eq!((done.outcome, done.duration_ms), (Outcome::Aborted, 2_000));
}

#[test]
fn a_crash_loop_fails_at_once_and_shows_unavailable() {
    let mut f = Feed::idle();
    f.queued(1_000, 1_000, Via::Watched);
    let mut p = f.new_pod("p1", 1_020);
    p.container = Container::Waiting {
        reason: "CrashLoopBackOff".into(),
        message: Some("back-off".into()),
    };
    let done = one(f.pod(p, 4_000, Via::Watched));
    assert_eq!(done.outcome, Outcome::Failed);
    assert_eq!(done.failure.as_ref().unwrap().reason, "CrashLoopBackOff");
    assert_eq!(f.m.summary().phase, Phase::Failed);
    // Knative gives up later: nothing more is recorded, the failure stays visible.
    let c = cond(CondStatus::False, Some("TimedOut"), f.second(40_000));
    assert!(f.pa(0, 0, c, 40_000, Via::Watched).is_empty());
    f.dep(0, 9, 40_001, Via::Watched);
    assert!(f.eval(45_000, Via::Watched).is_empty());
    assert_eq!(f.m.summary().phase, Phase::Failed);
    assert!(f.m.summary().failure.is_some());
}

#[test]
fn image_pull_errors_fail_after_the_threshold() {
    let mut f = Feed::idle();
    f.queued(1_000, 1_000, Via::Watched);
    let mut p = f.new_pod("p1", 1_020);
    p.container = Container::Waiting {
        reason: "ErrImagePull".into(),
        message: None,
    };
    assert!(f.pod(p, 2_000, Via::Watched).is_empty());
    assert!(f.eval(6_000, Via::Watched).is_empty(), "4 s is within 5 s");
    let done = one(f.eval(7_100, Via::Watched));
    assert_eq!(done.failure.unwrap().reason, "ErrImagePull");
}

#[test]
fn a_timeout_without_pod_detail_is_timed_out() {
    let mut f = Feed::idle();
    f.queued(1_000, 1_000, Via::Watched);
    let c = cond(CondStatus::False, Some("TimedOut"), f.second(631_000));
    let done = one(f.pa(0, 0, c, 631_000, Via::Watched));
    assert_eq!(
        (done.outcome, done.failure.unwrap().reason.as_str()),
        (Outcome::Failed, "TimedOut")
    );
}

#[test]
fn a_timed_out_condition_left_from_the_last_wake_does_not_fail_the_next() {
    let mut f = Feed::idle();
    let old = cond(CondStatus::False, Some("TimedOut"), f.second(0));
    f.pa(0, 0, old.clone(), 10, Via::Watched);
    // The KPA scales the Deployment first; the PA still shows the old TimedOut.
    assert!(f.dep(1, 8, 5_000, Via::Watched).is_empty());
    assert_eq!(f.m.summary().phase, Phase::Provisioning);
    f.queued(5_000, 5_010, Via::Watched);
    let done = one(f.pod(f.ready_pod("p1", 5_050, 7_860), 7_860, Via::Watched));
    assert_eq!((done.outcome, done.duration_ms), (Outcome::Served, 2_860));
}

#[test]
fn a_wake_missed_while_down_is_rebuilt_from_timestamps_once() {
    let mut f = Feed::new();
    f.m.restore(
        WakeKind::Wake,
        f.second(0).timestamp() - 100,
        Outcome::Served,
        f.second(0),
        false,
    );
    let stamp = f.stamp(9_000, Via::Listed);
    f.m.revision_seen(
        f.second(0) - chrono::Duration::days(1),
        stamp,
        &ctx().thresholds,
    );
    f.dep(1, 9, 9_000, Via::Listed);
    let active = cond(CondStatus::True, None, f.second(4_000));
    f.pa(1, 1, active.clone(), 9_000, Via::Listed);
    let mut p = f.ready_pod("p1", 1_000, 4_000);
    p.scheduled = Some(cond(CondStatus::True, None, f.second(2_000)));
    p.container = Container::Running {
        started_at: Some(f.second(3_000)),
    };
    let done = one(f.pod(p.clone(), 9_000, Via::Listed));
    assert_eq!(done.precision, Precision::S);
    // Known to the second: from the start of the pod's second to the end of the ready one.
    assert_eq!(done.duration_ms, 4_000);
    assert_eq!(done.start_second, f.second(1_000).timestamp());
    assert_eq!(done.phases.provisioning_ms, Some(1_000));
    // The same pod seen again by a later restart, now recorded: nothing new.
    let mut again = Feed::new();
    again.m.restore(
        WakeKind::Wake,
        done.start_second,
        Outcome::Served,
        done.serving_at.unwrap(),
        false,
    );
    again.pa(1, 1, active, 20_000, Via::Listed);
    assert!(again.pod(p, 20_000, Via::Listed).is_empty());
}

#[test]
fn a_late_burst_is_dated_by_object_timestamps() {
    let mut f = Feed::idle();
    f.queued(1_000, 1_000, Via::Watched);
    // Delivered 10 s late, after a watch gap.
    let done = one(f.pod(f.ready_pod("p1", 1_000, 3_000), 13_000, Via::Resumed));
    assert_eq!(done.precision, Precision::S);
    assert_eq!(done.duration_ms, 3_000, "to the end of the ready second");
}

#[test]
fn an_initial_start_is_kept_apart() {
    let mut f = Feed::new();
    let stamp = f.stamp(0, Via::Watched);
    f.m.revision_seen(f.second(0), stamp, &ctx().thresholds);
    f.dep(1, 1, 5, Via::Watched);
    let done = one(f.pod(f.ready_pod("p1", 30, 900), 900, Via::Watched));
    assert_eq!(done.kind, WakeKind::Initial);
    assert_eq!(done.duration_ms, 900);
    assert_eq!(done.precision, Precision::Ms);
}

#[test]
fn a_revision_born_at_scale_whose_status_comes_later_has_an_initial_start() {
    let mut f = Feed::new();
    // The Deployment and the pod arrive before the Revision; the PA without status.
    f.dep(1, 1, 5, Via::Watched);
    f.pod(f.new_pod("p1", 30), 40, Via::Watched);
    f.queued(0, 60, Via::Watched);
    let c = cond(CondStatus::True, None, f.second(900));
    let done = one(f.pa(1, 1, c, 900, Via::Watched));
    assert_eq!(done.kind, WakeKind::Initial);
    assert!(
        f.pod(f.ready_pod("p1", 30, 900), 950, Via::Watched)
            .is_empty()
    );
}

mod restored;
mod streams;

#[test]
fn an_abort_begun_in_the_second_the_last_wake_served_and_ended_stays_aborted() {
    let mut f = Feed::idle();
    let p1 = f.live_wake("p1", 1_000, 1_020, 2_050);
    let active = cond(CondStatus::True, None, f.second(2_050));
    f.pa(1, 1, active, 2_060, Via::Watched);
    // Scaled away at once, and woken again 400 ms later, within the same second.
    f.no_traffic(2_300, 2_300, Via::Watched);
    f.dep(0, 9, 2_310, Via::Watched);
    f.m.remove_pod(&p1.name, f.stamp(2_400, Via::Watched));
    f.dep(1, 10, 2_700, Via::Watched);
    f.queued(2_700, 2_705, Via::Watched);
    f.pod(f.new_pod("p2", 2_750), 2_750, Via::Watched);
    // Back to zero while its image is still pulling: the PA's last `Active`, which fell
    // in this wake's start second, is the earlier wake's.
    let mut done = f.no_traffic(4_200, 4_200, Via::Watched);
    done.extend(f.dep(0, 11, 4_210, Via::Watched));
    f.m.remove_pod("p2", f.stamp(4_300, Via::Watched));
    done.extend(f.eval(8_000, Via::Watched));
    let done = one(done);
    assert_eq!(
        (done.outcome, done.kind),
        (Outcome::Aborted, WakeKind::Wake)
    );
}
