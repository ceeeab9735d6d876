//! The tracker fed by hand in an order real watches allow and the simulator rarely
//! writes: a revision's Deployment, pods and PA arriving before its Revision object.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use scaling_facts::measure::observe::{
    Cond, CondStatus, Container, DeploymentSnap, Observation, PaSnap, PodSnap, RevisionSnap, Stamp,
    Via,
};
use scaling_facts::measure::tracker::{Tracker, TrackerSettings};
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
        deleting: false,
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
