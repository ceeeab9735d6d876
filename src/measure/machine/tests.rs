//! The state machine on hand-made snapshot sequences.

use super::*;
use crate::measure::observe::Cond;
use chrono::TimeZone;

struct Clock {
    mono: Instant,
    wall: DateTime<Utc>,
}

impl Clock {
    fn new() -> Self {
        Self {
            mono: Instant::now(),
            wall: Utc.timestamp_opt(1_800_000_000, 0).unwrap(),
        }
    }
    /// A live arrival `ms` after the start.
    fn at(&self, ms: u64) -> Stamp {
        Stamp {
            mono: self.mono + Duration::from_millis(ms),
            wall: self.wall + chrono::Duration::milliseconds(ms as i64),
            live: true,
        }
    }
    fn listed(&self, ms: u64) -> Stamp {
        Stamp {
            live: false,
            ..self.at(ms)
        }
    }
    fn second(&self, ms: u64) -> DateTime<Utc> {
        let t = self.wall + chrono::Duration::milliseconds(ms as i64);
        Utc.timestamp_opt(t.timestamp(), 0).unwrap()
    }
}

fn ctx() -> Ctx {
    Ctx {
        thresholds: Thresholds {
            image_pull_failure_after: Duration::from_secs(5),
            unschedulable_failure_after: Duration::from_secs(5),
            late_event_tolerance: Duration::from_secs(2),
        },
        activation_timeout: Duration::from_secs(630),
    }
}

fn cond(status: CondStatus, reason: Option<&str>, since: DateTime<Utc>) -> Cond {
    Cond {
        status,
        reason: reason.map(str::to_owned),
        message: None,
        since: Some(since),
    }
}

fn pa(desired: i32, actual: i32, active: Cond) -> PaSnap {
    PaSnap {
        desired: Some(desired),
        actual: Some(actual),
        active: Some(active),
        initialized: true,
    }
}

fn pod(created: DateTime<Utc>) -> PodSnap {
    PodSnap {
        name: "p1".into(),
        created,
        deleting: false,
        running: false,
        scheduled: None,
        ready: None,
        container: Container::Absent,
        restarts: 0,
        last_exit_code: None,
    }
}

/// An idle, initialized revision.
fn idle(c: &Clock) -> Machine {
    let mut m = Machine::default();
    m.revision_seen(c.second(0) - chrono::Duration::days(1), c.listed(0));
    m.set_replicas(0);
    m.set_pa(pa(
        0,
        0,
        cond(CondStatus::False, Some("NoTraffic"), c.second(0)),
    ));
    assert!(m.evaluate(c.listed(0), &ctx()).is_none());
    assert_eq!(m.summary().phase, Phase::Idle);
    m
}

#[test]
fn a_live_wake_is_timed_by_arrivals() {
    let c = Clock::new();
    let mut m = idle(&c);
    m.set_replicas(1);
    assert!(m.evaluate(c.at(1_000), &ctx()).is_none());
    assert_eq!(m.summary().phase, Phase::Provisioning);
    m.set_pa(pa(
        1,
        0,
        cond(CondStatus::Unknown, Some("Queued"), c.second(1_000)),
    ));
    assert!(m.evaluate(c.at(1_004), &ctx()).is_none());
    let mut p = pod(c.second(1_020));
    m.set_pod(p.clone());
    m.evaluate(c.at(1_030), &ctx());
    p.scheduled = Some(cond(CondStatus::True, None, c.second(1_250)));
    p.container = Container::Waiting {
        reason: "ContainerCreating".into(),
        message: None,
    };
    m.set_pod(p.clone());
    m.evaluate(c.at(1_250), &ctx());
    assert_eq!(m.summary().phase, Phase::PullingImage);
    p.running = true;
    p.container = Container::Running {
        started_at: Some(c.second(2_100)),
    };
    m.set_pod(p.clone());
    m.evaluate(c.at(2_100), &ctx());
    assert_eq!(m.summary().phase, Phase::Starting);
    p.ready = Some(cond(CondStatus::True, None, c.second(2_600)));
    m.set_pod(p);
    let done = m.evaluate(c.at(2_600), &ctx()).expect("served");
    assert_eq!(done.outcome, Outcome::Served);
    assert_eq!(done.kind, WakeKind::Wake);
    assert_eq!(done.duration_ms, 1_600);
    assert_eq!(done.precision, Precision::Ms);
    assert_eq!(done.start_second, c.second(1_000).timestamp());
    assert_eq!(done.phases.provisioning_ms, Some(250));
    assert_eq!(done.phases.pulling_image_ms, Some(850));
    assert_eq!(done.phases.starting_ms, Some(500));
    assert_eq!(m.summary().phase, Phase::Serving);
    // The same ready pod again (a relist) records nothing.
    assert!(m.evaluate(c.listed(9_000), &ctx()).is_none());
}

#[test]
fn desired_back_to_zero_before_ready_is_an_abort() {
    let c = Clock::new();
    let mut m = idle(&c);
    m.set_pa(pa(
        1,
        0,
        cond(CondStatus::Unknown, Some("Queued"), c.second(1_000)),
    ));
    m.evaluate(c.at(1_000), &ctx());
    m.set_pa(pa(
        0,
        0,
        cond(CondStatus::False, Some("NoTraffic"), c.second(3_000)),
    ));
    assert!(
        m.evaluate(c.at(3_000), &ctx()).is_none(),
        "other watches get a grace period"
    );
    let done = m.evaluate(c.at(4_600), &ctx()).expect("aborted");
    assert_eq!(done.outcome, Outcome::Aborted);
    assert_eq!(done.duration_ms, 2_000);
    assert_eq!(m.summary().phase, Phase::Idle);
}

#[test]
fn a_crash_loop_fails_at_once_and_shows_unavailable() {
    let c = Clock::new();
    let mut m = idle(&c);
    m.set_pa(pa(
        1,
        0,
        cond(CondStatus::Unknown, Some("Queued"), c.second(1_000)),
    ));
    m.evaluate(c.at(1_000), &ctx());
    let mut p = pod(c.second(1_020));
    p.container = Container::Waiting {
        reason: "CrashLoopBackOff".into(),
        message: Some("back-off".into()),
    };
    m.set_pod(p);
    let done = m.evaluate(c.at(4_000), &ctx()).expect("failed");
    assert_eq!(done.outcome, Outcome::Failed);
    assert_eq!(done.failure.as_ref().unwrap().reason, "CrashLoopBackOff");
    assert_eq!(m.summary().phase, Phase::Failed);
    // Knative gives up later: nothing more is recorded, the failure stays visible.
    m.set_pa(pa(
        0,
        0,
        cond(CondStatus::False, Some("TimedOut"), c.second(40_000)),
    ));
    assert!(m.evaluate(c.at(40_000), &ctx()).is_none());
    assert_eq!(m.summary().phase, Phase::Failed);
    assert!(m.summary().failure.is_some());
}

#[test]
fn image_pull_errors_fail_after_the_threshold() {
    let c = Clock::new();
    let mut m = idle(&c);
    m.set_pa(pa(
        1,
        0,
        cond(CondStatus::Unknown, Some("Queued"), c.second(1_000)),
    ));
    m.evaluate(c.at(1_000), &ctx());
    let mut p = pod(c.second(1_020));
    p.container = Container::Waiting {
        reason: "ErrImagePull".into(),
        message: None,
    };
    m.set_pod(p);
    assert!(m.evaluate(c.at(2_000), &ctx()).is_none());
    assert!(
        m.evaluate(c.at(6_000), &ctx()).is_none(),
        "4 s of trouble is within 5 s"
    );
    let done = m.evaluate(c.at(7_100), &ctx()).expect("failed after 5 s");
    assert_eq!(done.failure.unwrap().reason, "ErrImagePull");
}

#[test]
fn a_timeout_without_pod_detail_is_timed_out() {
    let c = Clock::new();
    let mut m = idle(&c);
    m.set_pa(pa(
        1,
        0,
        cond(CondStatus::Unknown, Some("Queued"), c.second(1_000)),
    ));
    m.evaluate(c.at(1_000), &ctx());
    m.set_pa(pa(
        0,
        0,
        cond(CondStatus::False, Some("TimedOut"), c.second(631_000)),
    ));
    let done = m.evaluate(c.at(631_000), &ctx()).expect("failed");
    assert_eq!(
        (done.outcome, done.failure.unwrap().reason.as_str()),
        (Outcome::Failed, "TimedOut")
    );
}

#[test]
fn a_wake_missed_while_down_is_rebuilt_from_timestamps_once() {
    let c = Clock::new();
    let mut m = Machine::default();
    m.restore(Some(c.second(0)), true);
    m.revision_seen(c.second(0) - chrono::Duration::days(1), c.listed(9_000));
    m.set_replicas(1);
    m.set_pa(pa(1, 1, cond(CondStatus::True, None, c.second(4_000))));
    let mut p = pod(c.second(1_000));
    p.running = true;
    p.scheduled = Some(cond(CondStatus::True, None, c.second(2_000)));
    p.container = Container::Running {
        started_at: Some(c.second(3_000)),
    };
    p.ready = Some(cond(CondStatus::True, None, c.second(4_000)));
    m.set_pod(p.clone());
    let done = m.evaluate(c.listed(9_000), &ctx()).expect("rebuilt");
    assert_eq!(done.precision, Precision::S);
    assert_eq!(done.duration_ms, 3_000);
    assert_eq!(done.start_second, c.second(1_000).timestamp());
    assert_eq!(done.phases.provisioning_ms, Some(1_000));
    // The same pod seen again by a later restart, now recorded: nothing new.
    let mut again = Machine::default();
    again.restore(done.serving_at, true);
    again.set_pa(pa(1, 1, cond(CondStatus::True, None, c.second(4_000))));
    again.set_pod(p);
    assert!(again.evaluate(c.listed(20_000), &ctx()).is_none());
}

#[test]
fn a_late_burst_is_dated_by_object_timestamps() {
    let c = Clock::new();
    let mut m = idle(&c);
    m.set_pa(pa(
        1,
        0,
        cond(CondStatus::Unknown, Some("Queued"), c.second(1_000)),
    ));
    m.evaluate(c.at(1_000), &ctx());
    let mut p = pod(c.second(1_000));
    p.running = true;
    p.container = Container::Running {
        started_at: Some(c.second(2_000)),
    };
    p.ready = Some(cond(CondStatus::True, None, c.second(3_000)));
    m.set_pod(p);
    // Delivered 10 s late, after a watch gap.
    let done = m.evaluate(c.at(13_000), &ctx()).unwrap();
    assert_eq!(done.precision, Precision::S);
    assert_eq!(done.duration_ms, 2_000);
}

#[test]
fn an_initial_start_is_kept_apart() {
    let c = Clock::new();
    let mut m = Machine::default();
    m.revision_seen(c.second(0), c.at(0));
    m.set_replicas(1);
    m.evaluate(c.at(5), &ctx());
    let mut p = pod(c.second(30));
    p.running = true;
    p.container = Container::Running {
        started_at: Some(c.second(500)),
    };
    p.ready = Some(cond(CondStatus::True, None, c.second(900)));
    m.set_pod(p);
    let done = m.evaluate(c.at(900), &ctx()).unwrap();
    assert_eq!(done.kind, WakeKind::Initial);
    assert_eq!(done.duration_ms, 900);
    assert_eq!(done.precision, Precision::Ms);
}

#[test]
fn a_scale_down_seen_pod_first_is_not_a_wake() {
    let c = Clock::new();
    let mut m = idle(&c);
    m.set_pa(pa(
        1,
        0,
        cond(CondStatus::Unknown, Some("Queued"), c.second(1_000)),
    ));
    m.set_replicas(1);
    m.evaluate(c.at(1_000), &ctx());
    let mut p = pod(c.second(1_000));
    p.running = true;
    p.ready = Some(cond(CondStatus::True, None, c.second(2_000)));
    m.set_pod(p.clone());
    assert!(m.evaluate(c.at(2_000), &ctx()).is_some());
    // Scale-down: the pod's termination arrives before the Deployment and PA changes.
    p.deleting = true;
    m.set_pod(p);
    assert!(m.evaluate(c.at(9_000), &ctx()).is_none());
    assert!(!m.waking(), "losing the ready pod is not a wake");
    m.set_replicas(0);
    m.set_pa(pa(
        0,
        0,
        cond(CondStatus::False, Some("NoTraffic"), c.second(9_000)),
    ));
    assert!(m.evaluate(c.at(9_010), &ctx()).is_none());
    assert_eq!(m.summary().phase, Phase::Idle);
}

#[test]
fn a_ready_pod_arriving_after_the_scale_down_makes_it_served() {
    let c = Clock::new();
    let mut m = idle(&c);
    m.set_pa(pa(
        1,
        0,
        cond(CondStatus::Unknown, Some("Queued"), c.second(1_000)),
    ));
    m.evaluate(c.at(1_000), &ctx());
    // The PA watch delivers the whole wake and its end before the pod watch catches up.
    m.set_pa(pa(
        0,
        0,
        cond(CondStatus::False, Some("NoTraffic"), c.second(3_000)),
    ));
    assert!(m.evaluate(c.at(3_000), &ctx()).is_none());
    let mut p = pod(c.second(1_000));
    p.running = true;
    p.ready = Some(cond(CondStatus::True, None, c.second(2_000)));
    m.set_pod(p);
    let done = m
        .evaluate(c.listed(3_200), &ctx())
        .expect("served after all");
    assert_eq!(done.outcome, Outcome::Served);
    assert_eq!(done.precision, Precision::S);
}

#[test]
fn a_stale_list_that_nothing_confirms_records_nothing() {
    let c = Clock::new();
    let mut m = idle(&c);
    // Another watch is behind: a list shows pods wanted, with no pod and no queuing PA.
    m.set_replicas(1);
    assert!(m.evaluate(c.listed(1_000), &ctx()).is_none());
    m.set_replicas(0);
    assert!(m.evaluate(c.at(1_100), &ctx()).is_none());
    assert!(
        m.evaluate(c.at(3_000), &ctx()).is_none(),
        "no phantom abort"
    );
    assert_eq!(m.summary().phase, Phase::Idle);
}
