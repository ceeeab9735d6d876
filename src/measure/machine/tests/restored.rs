//! A restart continuing what the last process had underway: a wake it left open or
//! ended, and more than one wake of a revision when the older ones ended while a watch
//! was down and waited for their verdicts.

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

#[test]
fn a_restored_wake_that_aborted_while_down_ends_at_the_pas_fall() {
    // Found by the orderings: the process died inside the abort's grace; the next one
    // restores the wake, lists the PA idle since the abort, and sees the next wake queue.
    let mut f = Feed::idle();
    restore_at_41s(&mut f, (44_000, 45_872), 1, None, &ctx());
    let done = one(f.queued(46_000, 45_898, Via::Watched));
    assert_eq!(
        (done.outcome, done.start_second),
        (Outcome::Aborted, f.second(41_000).timestamp())
    );
    assert_eq!(
        done.duration_ms, 4_000,
        "to the end of the PA's idle second"
    );
    assert!(f.m.waking(), "the next wake is under way");
}

/// A restart's lists: the PA idle since `idle_ms` (listed at `listed_ms`) and the
/// Deployment at `replicas` and `generation`. Returns the lists' stamp.
fn listed_at_rest(
    f: &mut Feed,
    (idle_ms, listed_ms): (u64, u64),
    replicas: u32,
    generation: i64,
) -> Stamp {
    let now = f.stamp(listed_ms, Via::Listed);
    f.no_traffic(idle_ms, listed_ms, Via::Listed);
    let dep = DeploymentSnap {
        version: 100,
        replicas,
        generation,
    };
    f.m.set_deployment(dep, now);
    now
}

/// A stored row of a wake requested at the start of the second of `start_ms`, ended at
/// `ended` (ms, and whether only a replay bounded it) if it had.
fn row_from_second(f: &Feed, start_ms: u64, ended: Option<(u64, bool)>) -> Underway {
    Underway {
        requested_at: f.second(start_ms),
        ended_undated: ended.is_some_and(|(_, undated)| undated),
        ..row(f, start_ms, ended.map(|(ms, _)| ms))
    }
}

/// A restart: the lists as [`listed_at_rest`] makes them, and the store gives back the
/// wake begun at 41 s, ended at `ended` if it had.
fn restore_at_41s(
    f: &mut Feed,
    idle_listed: (u64, u64),
    replicas: u32,
    ended: Option<(u64, bool)>,
    ctx: &Ctx,
) {
    let now = listed_at_rest(f, idle_listed, replicas, 6);
    let underway = row_from_second(f, 41_000, ended);
    f.m.restore_open(vec![underway], now, ctx);
}

/// A wake restored with its end seen at 81 s (40 s after its start, past Knative's
/// deadline), the lists showing the revision at rest since 82 s: what the restart records.
fn restored_past_the_deadline(undated: bool) -> Finished {
    let mut f = Feed::idle();
    let ctx = Ctx {
        activation_timeout: std::time::Duration::from_secs(30),
        ..ctx()
    };
    restore_at_41s(&mut f, (82_000, 85_000), 0, Some((81_000, undated)), &ctx);
    one(f.eval(120_000, Via::Watched))
}

/// The same wake, restored as the older of two the last process left waiting for their
/// verdicts (the Deployment's backlog had replayed a fall, a rise and a fall): judged once
/// every watch is back.
fn restored_past_the_deadline_unjudged(undated: bool) -> Finished {
    let mut f = Feed::idle();
    let ctx = Ctx {
        activation_timeout: std::time::Duration::from_secs(30),
        ..ctx()
    };
    let now = listed_at_rest(&mut f, (82_000, 85_000), 0, 8);
    let wakes = vec![
        row_from_second(&f, 41_000, Some((81_000, undated))),
        row_from_second(&f, 81_000, Some((81_000, true))),
    ];
    f.m.restore_open(wakes, now, &ctx);
    let done = f.m.evaluate(f.stamp(120_000, Via::Watched), &ctx);
    (done.into_iter())
        .find(|d| d.start_second == f.second(41_000).timestamp())
        .expect("the older wake judged")
}

#[test]
fn a_verdict_waited_for_past_the_deadline_is_no_give_up_on_a_replay_alone() {
    // Census 83524 again: the older of the two wakes the last process left was judged with
    // the replayed fall taken for its end, failed.
    let done = restored_past_the_deadline_unjudged(true);
    assert_eq!(done.outcome, Outcome::Aborted, "{done:?}");
    assert!(done.failure.is_none(), "{done:?}");
    let done = restored_past_the_deadline_unjudged(false);
    assert_eq!(done.outcome, Outcome::Failed, "{done:?}");
}

#[test]
fn an_end_only_a_replay_bounds_past_the_deadline_is_no_give_up() {
    // Found by the orderings (census 83524): the Deployment's backlog brought the fall
    // 40 s after a 3 s abort; the process died before the PA's and the pods' came.
    let done = restored_past_the_deadline(true);
    assert_eq!(done.outcome, Outcome::Aborted, "{done:?}");
    assert!(done.failure.is_none(), "{done:?}");
    // An end seen as it happened, past the deadline: Knative gave up on it by then.
    let done = restored_past_the_deadline(false);
    assert_eq!(done.outcome, Outcome::Failed, "{done:?}");
}
