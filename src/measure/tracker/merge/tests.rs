//! The merge order on hand-made backlogs: each kind's burst arriving whole, seconds apart.

use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};

use super::{arrange, order};
use crate::measure::observe::{
    Cond, CondStatus, Container, DeploymentSnap, Observation, PaSnap, PodSnap, Stamp, Via,
};

fn at(second: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_800_000_000 + second, 0).unwrap()
}

/// Arrived at `ms` after the start.
fn stamp(ms: u64, via: Via) -> Stamp {
    Stamp {
        mono: Instant::now() + Duration::from_millis(ms),
        wall: at(0) + chrono::Duration::milliseconds(ms as i64),
        via,
    }
}

fn pa(desired: i32, reason: &str, status: CondStatus, since: i64) -> Observation {
    Observation::Autoscaler {
        revision_uid: "uid".into(),
        pa: PaSnap {
            version: 0,
            desired: Some(desired),
            actual: Some(0),
            active: Some(Cond {
                status,
                reason: (!reason.is_empty()).then(|| reason.into()),
                message: None,
                since: Some(at(since)),
            }),
            initialized: true,
            initialized_since: None,
        },
    }
}

fn dep(replicas: u32) -> Observation {
    Observation::Deployment {
        revision_uid: "uid".into(),
        dep: DeploymentSnap {
            version: 0,
            replicas,
            generation: 2,
        },
    }
}

fn pod(name: &str, created: i64, ready: Option<i64>, deleting: Option<i64>) -> Observation {
    Observation::Pod {
        revision_uid: "uid".into(),
        pod: PodSnap {
            name: name.into(),
            version: 0,
            created: at(created),
            deleting: deleting.map(at),
            running: ready.is_some(),
            scheduled: None,
            ready: ready.map(|s| Cond {
                status: CondStatus::True,
                reason: None,
                message: None,
                since: Some(at(s)),
            }),
            container: Container::Absent,
            restarts: 0,
            last_exit_code: None,
        },
    }
}

/// The observations in the order given.
fn ordered(held: &[(Observation, Stamp)], prior: (Option<u32>, Option<i32>)) -> Vec<usize> {
    order(held.iter().map(|(o, s)| (o, *s)).collect(), prior)
}

#[test]
fn a_pods_backlog_that_comes_first_waits_for_the_pa_wake_it_belongs_to() {
    let late = |ms| stamp(ms, Via::Resumed);
    // The pods' watch is back first, with two wakes' pods; the PA's 8 s later.
    let held = vec![
        (pod("a", 3, None, Some(5)), late(40_000)),
        (pod("b", 7, Some(9), None), late(40_000)),
        (pa(1, "Queued", CondStatus::Unknown, 3), late(48_000)),
        (pa(0, "NoTraffic", CondStatus::False, 5), late(48_000)),
        (pa(1, "Queued", CondStatus::Unknown, 7), late(48_000)),
        (pa(1, "", CondStatus::True, 9), late(48_000)),
    ];
    // The first wake's start, its end, and its pod that never ran, asked to go in that
    // second (by the fall); then the next wake's start, its pod ready, the PA active.
    assert_eq!(ordered(&held, (Some(0), Some(0))), vec![2, 3, 0, 4, 1, 5]);
}

#[test]
fn in_one_second_knative_decides_before_the_pods_it_makes_and_after_those_that_serve() {
    let late = |ms| stamp(ms, Via::Resumed);
    // An abort and the next wake in one second: the first wake's pod, never run, asked
    // to go at 19; the PA resting and queuing again at 19; the next wake's pod made at
    // 19. Then a pod ready at 30 and the PA resting at 30.
    let held = vec![
        (pod("a", 17, None, Some(19)), late(50_000)),
        (pod("b", 19, None, None), late(50_000)),
        (pod("c", 25, Some(30), None), late(50_000)),
        (pa(0, "NoTraffic", CondStatus::False, 19), late(55_000)),
        (pa(1, "Queued", CondStatus::Unknown, 19), late(55_000)),
        (pa(0, "NoTraffic", CondStatus::False, 30), late(55_000)),
    ];
    // The rest and the request first, then the pods they removed and made; the pod ready
    // in the second of the next rest before it.
    assert_eq!(ordered(&held, (Some(1), Some(1))), vec![3, 4, 0, 1, 2, 5]);
}

#[test]
fn a_replayed_deployment_scale_goes_with_the_pa_turn_of_its_rank() {
    let late = |ms| stamp(ms, Via::Resumed);
    let held = vec![
        (pa(1, "Queued", CondStatus::Unknown, 3), late(40_000)),
        (pa(0, "NoTraffic", CondStatus::False, 5), late(40_000)),
        (pa(1, "Queued", CondStatus::Unknown, 7), late(40_000)),
        (dep(1), late(52_000)),
        (dep(0), late(52_000)),
        (dep(1), late(52_000)),
        (dep(3), late(52_000)),
    ];
    // Each rise just before the PA's, the fall just after; the scale-up that follows a
    // rise stays with it.
    assert_eq!(
        ordered(&held, (Some(0), Some(0))),
        vec![3, 0, 1, 4, 5, 6, 2]
    );
}

#[test]
fn a_deployment_turn_the_pa_backlog_does_not_show_goes_last() {
    let late = |ms| stamp(ms, Via::Resumed);
    let held = vec![
        (dep(1), late(30_000)),
        (pod("a", 3, None, None), late(31_000)),
    ];
    assert_eq!(ordered(&held, (Some(0), Some(0))), vec![1, 0]);
}

#[test]
fn live_arrivals_keep_their_place_and_no_stream_is_reordered() {
    let held = vec![
        // A pod's backlog with an old stamp, then the same watch streaming live.
        (pod("a", 20, None, None), stamp(21_000, Via::Resumed)),
        (pod("b", 2, None, None), stamp(21_500, Via::Watched)),
        // The PA's backlog, arriving after, dated in between.
        (
            pa(1, "Queued", CondStatus::Unknown, 21),
            stamp(30_000, Via::Resumed),
        ),
    ];
    // Pod "b" keeps its place behind "a" on its own stream, whatever its stamp says.
    assert_eq!(ordered(&held, (Some(0), Some(0))), vec![0, 2, 1]);
}

#[test]
fn a_replayed_deployment_change_happens_by_its_pa_turn_not_by_its_late_arrival() {
    // The PA's fall and rise were seen live; the Deployment's backlog comes 4 s later,
    // and taken at its arrival it would hold every later observation back to it.
    let live = |ms| stamp(ms, Via::Watched);
    let late = stamp(23_000, Via::Resumed);
    let held = [
        (pa(0, "NoTraffic", CondStatus::False, 18), live(18_585)),
        (pa(1, "Queued", CondStatus::Unknown, 18), live(18_993)),
        (dep(0), late),
        (dep(1), late),
    ];
    let a = arrange(
        held.iter().map(|(o, s)| (o, *s)).collect(),
        (Some(1), Some(1)),
    );
    // The fall just after the PA's, the rise just before.
    assert_eq!(a.order, vec![0, 2, 3, 1]);
    let by = |i: usize| a.by[i].expect("dated by its PA turn");
    // A fall by one reconcile's spread after the PA's; a rise by the PA's own.
    assert_eq!(
        by(2).wall,
        held[0].1.wall + chrono::Duration::milliseconds(100)
    );
    assert_eq!(by(3).wall, held[1].1.wall);
    assert_eq!((by(2).via, by(3).via), (Via::Resumed, Via::Resumed));
    // What was seen live keeps its own stamp.
    assert!(a.by[0].is_none() && a.by[1].is_none());
}

#[test]
fn a_replayed_deployment_change_without_a_pa_turn_happens_by_its_streams_next() {
    let late = |ms| stamp(ms, Via::Resumed);
    // First seen wanting one pod (no turn), then falling with the PA's replayed rest.
    let held = [
        (pa(0, "NoTraffic", CondStatus::False, 11), late(15_852)),
        (dep(1), late(22_927)),
        (dep(0), late(22_927)),
    ];
    let a = arrange(held.iter().map(|(o, s)| (o, *s)).collect(), (None, Some(1)));
    let spread = chrono::Duration::milliseconds(100);
    assert_eq!(a.by[2].map(|s| s.wall), Some(held[0].1.wall + spread));
    assert_eq!(a.by[1].map(|s| s.wall), Some(held[0].1.wall + spread));
}
