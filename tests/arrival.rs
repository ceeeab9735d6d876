//! The tracker fed by hand in an order real watches allow and the simulator rarely
//! writes: a revision's Deployment, pods and PA arriving before its Revision object.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use scaling_facts::measure::observe::{
    Cond, CondStatus, Container, DeploymentSnap, Observation, PaSnap, PodSnap, RevisionSnap, Stamp,
    Via,
};
use scaling_facts::measure::tracker::{Stored, Tracker, TrackerSettings};
use scaling_facts::measure::wake::{OpenChange, OpenWake};
use scaling_facts_api::{Outcome, Precision, WakeKind};

const UID: &str = "uid-1";

struct Clock {
    mono: Instant,
}

impl Clock {
    fn wall(ms: i64) -> DateTime<Utc> {
        Utc.timestamp_millis_opt(1_800_000_000_000 + ms).unwrap()
    }

    fn second(ms: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(Self::wall(ms).timestamp(), 0).unwrap()
    }

    fn at(&self, ms: i64, via: Via) -> Stamp {
        Stamp {
            mono: self.mono + Duration::from_millis(ms as u64),
            wall: Self::wall(ms),
            via,
        }
    }
}

fn cond(status: CondStatus, since_ms: i64) -> Option<Cond> {
    Some(Cond {
        status,
        reason: None,
        message: None,
        since: Some(Clock::second(since_ms)),
    })
}

#[test]
fn objects_that_come_before_their_revision_wait_for_it() {
    let clock = Clock {
        mono: Instant::now(),
    };
    let mut tr = Tracker::new(TrackerSettings::default());
    tr.mark_synced(clock.at(0, Via::Listed));
    // The revision is created at 100 ms and serves at 2,460 ms; its own watch is behind
    // every other, so the Deployment, the ready pod and the active PA all come first.
    let dep = DeploymentSnap {
        version: 1,
        replicas: 1,
        generation: 1,
    };
    let out = tr.apply(
        Observation::Deployment {
            revision_uid: UID.into(),
            dep,
        },
        clock.at(1_534, Via::Watched),
    );
    assert!(out.wakes.is_empty());
    let pod = PodSnap {
        name: "svc-00001-pod-1".into(),
        version: 2,
        created: Clock::second(130),
        deleting: None,
        running: true,
        scheduled: cond(CondStatus::True, 200),
        ready: cond(CondStatus::True, 2_460),
        container: Container::Running {
            started_at: Some(Clock::second(2_000)),
        },
        restarts: 0,
        last_exit_code: None,
    };
    let pod = Observation::Pod {
        revision_uid: UID.into(),
        pod,
    };
    assert!(tr.apply(pod, clock.at(2_849, Via::Listed)).wakes.is_empty());
    let pa = PaSnap {
        version: 3,
        desired: Some(1),
        actual: Some(1),
        active: cond(CondStatus::True, 2_460),
        initialized: true,
        initialized_since: None,
    };
    let pa = Observation::Autoscaler {
        revision_uid: UID.into(),
        pa,
    };
    let out = tr.apply(pa, clock.at(3_039, Via::Listed));
    assert!(
        out.wakes.is_empty(),
        "recorded before its revision was known: {:?}",
        out.wakes
    );
    let revision = Observation::Revision(RevisionSnap {
        uid: UID.into(),
        name: "svc-00001".into(),
        namespace: "ns".into(),
        service: "svc".into(),
        created: Clock::wall(100),
        annotations: BTreeMap::new(),
        reachable: true,
    });
    let out = tr.apply(revision, clock.at(3_043, Via::Listed));
    let [recorded] = out.wakes.as_slice() else {
        panic!("one initial start: {:?}", out.wakes);
    };
    let w = &recorded.wake;
    assert_eq!(
        (w.revision.as_str(), w.release.as_str()),
        ("svc-00001", "svc.ns")
    );
    assert_eq!(
        (w.kind, w.outcome, w.precision),
        (WakeKind::Initial, Outcome::Served, Precision::S)
    );
    assert_eq!(w.start_second, Clock::second(100).timestamp());
    assert!(w.duration_ms >= 2_460 - 100, "an upper bound: {w:?}");
}

fn revision() -> Observation {
    Observation::Revision(RevisionSnap {
        uid: UID.into(),
        name: "svc-00001".into(),
        namespace: "ns".into(),
        service: "svc".into(),
        created: Clock::wall(-60_000),
        annotations: BTreeMap::new(),
        reachable: true,
    })
}

/// The soak's loss (issue 10): a wake underway when the process was killed, given up and
/// asked for again while the next process was down. The new lists show only the second
/// wake (its `Queued`, its Deployment at one, its pod); the first is in the store's wakes
/// underway and must be recorded, aborted, once the lists are in.
#[test]
fn a_wake_aborted_and_asked_again_while_down_is_recorded_from_the_store() {
    let clock = Clock {
        mono: Instant::now(),
    };
    let mut tr = Tracker::new(TrackerSettings::default());
    // The wake underway: asked for at 31,692 ms (second 31).
    let open = OpenWake {
        revision_uid: UID.into(),
        kind: WakeKind::Wake,
        start_second: Clock::second(31_692).timestamp(),
        requested_at: Clock::wall(31_692),
        ended_at: None,
        ended_undated: false,
        trouble: None,
    };
    // The wake before it, closed by a relist at an upper bound past this one's start.
    let before = scaling_facts_api::WakeRecord {
        release: "svc.ns".into(),
        revision: "svc-00001".into(),
        revision_uid: UID.into(),
        kind: WakeKind::Wake,
        outcome: Outcome::Aborted,
        requested_at: Clock::second(25_000),
        start_second: Clock::second(25_000).timestamp(),
        serving_at: None,
        duration_ms: 7_000,
        phases: Default::default(),
        precision: Precision::S,
        failure_reason: None,
        failure_message: None,
        caused_by: None,
    };
    let out = tr.merge_history(
        Stored {
            wakes: &[before],
            open: &[open],
            rests: &[],
            watching_since: None,
        },
        clock.at(39_332, Via::Listed),
    );
    assert!(out.wakes.is_empty());
    // Aborted at 38,193 ms and asked for again at about 38,250: what the lists show.
    let dep = DeploymentSnap {
        version: 2915,
        replicas: 1,
        generation: 0,
    };
    tr.apply(
        Observation::Deployment {
            revision_uid: UID.into(),
            dep,
        },
        clock.at(39_351, Via::Listed),
    );
    tr.apply(revision(), clock.at(39_354, Via::Listed));
    let pod = PodSnap {
        name: "svc-00001-pod-2".into(),
        version: 2919,
        created: Clock::second(38_300),
        deleting: None,
        running: false,
        scheduled: cond(CondStatus::True, 38_400),
        ready: cond(CondStatus::False, 38_400),
        container: Container::Waiting {
            reason: "ContainerCreating".into(),
            message: None,
        },
        restarts: 0,
        last_exit_code: None,
    };
    tr.apply(
        Observation::Pod {
            revision_uid: UID.into(),
            pod,
        },
        clock.at(39_356, Via::Listed),
    );
    let pa = PaSnap {
        version: 2914,
        desired: Some(1),
        actual: Some(0),
        active: Some(Cond {
            status: CondStatus::Unknown,
            reason: Some("Queued".into()),
            message: None,
            since: Some(Clock::second(38_250)),
        }),
        initialized: true,
        initialized_since: None,
    };
    let mut got = tr
        .apply(
            Observation::Autoscaler {
                revision_uid: UID.into(),
                pa,
            },
            clock.at(39_358, Via::Listed),
        )
        .wakes;
    got.extend(tr.mark_synced(clock.at(39_360, Via::Listed)).wakes);

    for ms in (39_400..=45_000).step_by(500) {
        got.extend(tr.tick(clock.at(ms, Via::Watched)).wakes);
    }
    let [recorded] = got.as_slice() else {
        panic!("the first wake, once: {got:?}");
    };
    let w = &recorded.wake;
    assert_eq!((w.kind, w.outcome), (WakeKind::Wake, Outcome::Aborted));
    assert_eq!(w.start_second, Clock::second(31_692).timestamp());
    // It ended before the second `Queued`, within that second at the latest.
    let end = w.requested_at + chrono::Duration::milliseconds(w.duration_ms as i64);
    assert!(
        end <= Clock::second(38_250) + chrono::Duration::seconds(1),
        "{w:?}"
    );
    assert!(
        end >= Clock::wall(38_193) - chrono::Duration::seconds(1),
        "{w:?}"
    );
}

/// Each write's `resourceVersion`, increasing as the API server's do.
fn version() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(100);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

fn waiting_pod(name: &str, created_ms: i64, deleting: Option<i64>) -> Observation {
    Observation::Pod {
        revision_uid: UID.into(),
        pod: PodSnap {
            name: name.into(),
            version: version(),
            created: Clock::second(created_ms),
            deleting: deleting.map(Clock::second),
            running: false,
            scheduled: cond(CondStatus::True, created_ms + 300),
            ready: cond(CondStatus::False, created_ms + 300),
            container: Container::Waiting {
                reason: "ContainerCreating".into(),
                message: None,
            },
            restarts: 0,
            last_exit_code: None,
        },
    }
}

fn pa_at(desired: i32, reason: &str, since_ms: i64) -> Observation {
    let status = if reason == "Queued" {
        CondStatus::Unknown
    } else {
        CondStatus::False
    };
    Observation::Autoscaler {
        revision_uid: UID.into(),
        pa: PaSnap {
            version: version(),
            desired: Some(desired),
            actual: Some(0),
            active: Some(Cond {
                status,
                reason: Some(reason.into()),
                message: None,
                since: Some(Clock::second(since_ms)),
            }),
            initialized: true,
            initialized_since: None,
        },
    }
}

fn deployment(replicas: u32) -> Observation {
    Observation::Deployment {
        revision_uid: UID.into(),
        dep: DeploymentSnap {
            version: version(),
            replicas,
            generation: 0,
        },
    }
}

/// The same loss one step earlier: the store holds the wake before, closed at an upper
/// bound (the end of the second of the next `Queued`) that lies past the next wake's
/// start, and not the next wake, whose row the killed process never wrote. The lists
/// show that wake underway; it is a wake of its own and is recorded when it aborts.
#[test]
fn a_wake_begun_inside_the_last_ones_upper_bound_is_found_by_the_lists() {
    let clock = Clock {
        mono: Instant::now(),
    };
    let mut tr = Tracker::new(TrackerSettings::default());
    let before = scaling_facts_api::WakeRecord {
        release: "svc.ns".into(),
        revision: "svc-00001".into(),
        revision_uid: UID.into(),
        kind: WakeKind::Wake,
        outcome: Outcome::Aborted,
        requested_at: Clock::second(25_000),
        start_second: Clock::second(25_000).timestamp(),
        serving_at: None,
        duration_ms: 7_000,
        phases: Default::default(),
        precision: Precision::S,
        failure_reason: None,
        failure_message: None,
        caused_by: None,
    };
    tr.merge_history(
        Stored {
            wakes: &[before],
            ..Default::default()
        },
        clock.at(34_242, Via::Listed),
    );
    tr.apply(revision(), clock.at(34_269, Via::Listed));
    tr.apply(
        waiting_pod("pod-1", 31_700, None),
        clock.at(34_273, Via::Listed),
    );
    tr.apply(pa_at(1, "Queued", 31_692), clock.at(34_274, Via::Listed));
    tr.apply(deployment(1), clock.at(34_275, Via::Listed));
    let out = tr.mark_synced(clock.at(34_276, Via::Listed));
    assert!(out.wakes.is_empty(), "{:?}", out.wakes);
    let mut got = Vec::new();
    for ms in (34_500..=38_000).step_by(500) {
        got.extend(tr.tick(clock.at(ms, Via::Watched)).wakes);
    }
    // Given up on at 38,193 ms.
    got.extend(
        tr.apply(
            pa_at(0, "NoTraffic", 38_193),
            clock.at(38_195, Via::Watched),
        )
        .wakes,
    );
    got.extend(
        tr.apply(deployment(0), clock.at(38_196, Via::Watched))
            .wakes,
    );
    got.extend(
        tr.apply(
            waiting_pod("pod-1", 31_700, Some(38_196)),
            clock.at(38_197, Via::Watched),
        )
        .wakes,
    );
    for ms in (38_500..=42_000).step_by(500) {
        got.extend(tr.tick(clock.at(ms, Via::Watched)).wakes);
    }
    let [recorded] = got.as_slice() else {
        panic!("the wake, once: {got:?}");
    };
    let w = &recorded.wake;
    assert_eq!((w.kind, w.outcome), (WakeKind::Wake, Outcome::Aborted));
    assert_eq!(w.start_second, Clock::second(31_692).timestamp());
}

/// The soak's loss at its root: the store's history arrives after the first list events
/// but before the lists are all in. The tracker is rebuilt with it; the wake underway it
/// holds is continued at the sync, so its stored row must stay: closing it there leaves
/// a process killed before the wake ends with nothing to continue it from.
#[test]
fn history_merged_before_the_sync_keeps_the_stored_wake_underway() {
    let clock = Clock {
        mono: Instant::now(),
    };
    let mut tr = Tracker::new(TrackerSettings::default());
    let mut open = Vec::new();
    tr.apply(revision(), clock.at(22_880, Via::Listed));
    tr.apply(
        waiting_pod("pod-1", 20_500, None),
        clock.at(22_901, Via::Listed),
    );
    let underway = OpenWake {
        revision_uid: UID.into(),
        kind: WakeKind::Wake,
        start_second: Clock::second(20_414).timestamp(),
        requested_at: Clock::second(20_414),
        ended_at: None,
        ended_undated: false,
        trouble: None,
    };
    let out = tr.merge_history(
        Stored {
            open: &[underway],
            ..Default::default()
        },
        clock.at(22_902, Via::Listed),
    );
    open.extend(out.open);
    open.extend(
        tr.apply(pa_at(1, "Queued", 20_414), clock.at(22_903, Via::Listed))
            .open,
    );
    open.extend(tr.apply(deployment(1), clock.at(22_904, Via::Listed)).open);
    open.extend(tr.mark_synced(clock.at(22_911, Via::Listed)).open);
    assert!(
        !open
            .iter()
            .any(|o| matches!(o, OpenChange::Closed { revision_uid } if revision_uid == UID)),
        "the stored wake underway was closed: {open:?}"
    );
    // This process goes on to see it end.
    let mut got = Vec::new();
    got.extend(
        tr.apply(
            pa_at(0, "NoTraffic", 26_915),
            clock.at(26_917, Via::Watched),
        )
        .wakes,
    );
    got.extend(
        tr.apply(deployment(0), clock.at(26_918, Via::Watched))
            .wakes,
    );
    for ms in (27_000..=30_000).step_by(500) {
        got.extend(tr.tick(clock.at(ms, Via::Watched)).wakes);
    }
    let [recorded] = got.as_slice() else {
        panic!("the wake, once: {got:?}");
    };
    assert_eq!(recorded.wake.outcome, Outcome::Aborted);
    assert_eq!(
        recorded.wake.start_second,
        Clock::second(20_414).timestamp()
    );
}
