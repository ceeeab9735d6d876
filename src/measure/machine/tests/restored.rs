//! A restart continuing what the last process had underway: more than one wake of a
//! revision, when the older ones ended while a watch was down and waited for their
//! verdicts.

use super::*;
use crate::measure::wake::Underway;

/// A stored row: a wake requested at `start_ms`, ended at `ended_ms` if it had.
fn row(f: &Feed, start_ms: u64, ended_ms: Option<u64>) -> Underway {
    Underway {
        kind: WakeKind::Wake,
        requested_at: f.stamp(start_ms, Via::Watched).wall,
        start_second: f.second(start_ms).timestamp(),
        ended_at: ended_ms.map(|ms| f.stamp(ms, Via::Watched).wall),
        ended_undated: false,
        trouble: None,
    }
}

/// The lists of a restart at 60 s: the wake begun at 52 s underway (the PA queued since
/// then, the Deployment up, its pod not made yet); the store's rows are `rows`.
/// As the tracker does, nothing is evaluated before the rows are restored.
fn restart(f: &mut Feed, rows: Vec<Underway>) {
    let now = f.stamp(60_000, Via::Listed);
    let pa = PaSnap {
        version: f.v(),
        desired: Some(1),
        actual: Some(0),
        active: Some(cond(CondStatus::Unknown, Some("Queued"), f.second(52_000))),
        initialized: true,
        initialized_since: None,
    };
    f.m.set_pa(pa, now, &ctx().thresholds);
    let dep = DeploymentSnap {
        version: 100,
        replicas: 1,
        generation: 8,
    };
    f.m.set_deployment(dep, now);
    f.m.restore_open(rows, now, &ctx());
}

#[test]
fn a_restart_continues_every_wake_underway_not_only_the_oldest() {
    // Found by the orderings (census 51695): two wakes ended behind the pods' watch, and
    // the store kept only the older.
    let mut f = Feed::idle();
    let (older, newer) = (row(&f, 41_300, Some(45_200)), row(&f, 52_400, None));
    restart(&mut f, vec![older, newer.clone()]);
    // The older is judged on the lists: nothing of it served, so it was aborted where
    // it ended. Second-precision, like every wake judged after a restart: from the start
    // of its second, an upper bound.
    let done = one(f.eval(60_000, Via::Listed));
    assert_eq!(
        (done.kind, done.outcome, done.start_second),
        (
            WakeKind::Wake,
            Outcome::Aborted,
            f.second(41_000).timestamp()
        )
    );
    assert_eq!(
        (done.precision, done.duration_ms),
        (Precision::S, 4_200),
        "{done:?}"
    );
    // The newer goes on, the one wake underway now.
    let open = f.m.open_wakes();
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(open[0].start_second, newer.start_second);
    assert!(open[0].ended_at.is_none(), "{open:?}");
    // Its pod turns ready: it served, and nothing else is recorded.
    let pod = f.ready_pod("p9", 61_000, 63_500);
    let served = one(f.pod(pod, 63_500, Via::Watched));
    assert_eq!(served.outcome, Outcome::Served, "{served:?}");
    assert_eq!(served.start_second, newer.start_second);
    assert!(f.m.open_wakes().is_empty());
}

#[test]
fn one_stored_wake_underway_is_continued_as_before() {
    let mut f = Feed::idle();
    let newer = row(&f, 52_400, None);
    restart(&mut f, vec![newer.clone()]);
    assert!(f.eval(60_000, Via::Listed).is_empty());
    let open = f.m.open_wakes();
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(open[0].start_second, newer.start_second);
}
