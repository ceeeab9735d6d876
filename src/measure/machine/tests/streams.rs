//! Streams that disagree: one kind's watch behind the others, a relist or a replay
//! showing an older or newer state than the rest, the next wake beginning before every
//! stream has shown the last one end.

use super::*;

#[test]
fn a_scale_down_seen_pod_first_is_not_a_wake() {
    let mut f = Feed::idle();
    f.queued(1_000, 1_000, Via::Watched);
    f.dep(1, 8, 1_000, Via::Watched);
    let mut p = f.ready_pod("p1", 1_000, 2_000);
    assert_eq!(f.pod(p.clone(), 2_000, Via::Watched).len(), 1);
    // Scale-down: the pod's termination arrives before the Deployment and PA changes.
    p.deleting = Some(f.second(9_000));
    assert!(f.pod(p, 9_000, Via::Watched).is_empty());
    assert!(!f.m.waking(), "losing the ready pod is not a wake");
    f.dep(0, 9, 9_005, Via::Watched);
    assert!(f.no_traffic(9_000, 9_010, Via::Watched).is_empty());
    assert!(f.eval(20_000, Via::Watched).is_empty());
    assert_eq!(f.m.summary().phase, Phase::Idle);
}

#[test]
fn a_ready_pod_arriving_after_the_scale_down_makes_it_served() {
    let mut f = Feed::idle();
    f.queued(1_000, 1_000, Via::Watched);
    // A relist of the PA shows it back at zero before the pod watch catches up.
    assert!(f.no_traffic(3_000, 3_000, Via::Listed).is_empty());
    let done = one(f.pod(f.ready_pod("p1", 1_000, 2_000), 3_200, Via::Listed));
    assert_eq!(done.outcome, Outcome::Served);
    assert_eq!(done.precision, Precision::S);
}

#[test]
fn a_stale_list_that_nothing_confirms_records_nothing() {
    let mut f = Feed::idle();
    // A relist shows pods wanted, with no pod and no queuing PA, and is undone at once.
    assert!(f.dep(1, 8, 1_000, Via::Listed).is_empty());
    assert!(f.dep(0, 9, 1_100, Via::Watched).is_empty());
    assert!(f.eval(6_000, Via::Watched).is_empty(), "no phantom abort");
    assert_eq!(f.m.summary().phase, Phase::Idle);
}

#[test]
fn a_late_rise_of_the_other_stream_joins_the_wake_it_belongs_to() {
    let mut f = Feed::idle();
    // The Deployment stream shows the whole aborted wake before the PA stream shows any.
    f.dep(1, 8, 1_000, Via::Watched);
    f.dep(0, 9, 3_000, Via::Watched);
    f.queued(1_000, 3_500, Via::Watched);
    let done = one(f.no_traffic(3_000, 4_000, Via::Watched));
    assert_eq!((done.outcome, done.duration_ms), (Outcome::Aborted, 2_000));
    // The next wake's rise on the Deployment is a new wake.
    f.dep(1, 10, 9_000, Via::Watched);
    assert!(f.m.waking());
}

#[test]
fn a_replayed_rise_is_not_a_second_wake() {
    let mut f = Feed::idle();
    f.queued(1_000, 1_000, Via::Watched);
    let snap = f.m.pa.as_ref().unwrap().snap.clone();
    // The same PA version again, as a reconnect replays it.
    f.m.set_pa(snap, f.stamp(1_200, Via::Resumed), &ctx().thresholds);
    assert!(f.eval(1_200, Via::Resumed).is_empty());
    let done = one(f.pod(f.ready_pod("p1", 1_000, 1_900), 1_900, Via::Watched));
    assert_eq!(done.precision, Precision::Ms);
}

#[test]
fn a_pod_stream_ahead_of_the_pa_stream_does_not_split_the_next_wake() {
    // Seen in the dense-fault run: after a relist, the PA still wants pods for the last
    // wake when the next wake's pod arrives; its fall and rise come just after.
    let mut f = Feed::idle();
    let a = f.live_wake("a", 850, 875, 1_002);
    let active = cond(CondStatus::True, None, f.second(1_000));
    f.pa(1, 1, active.clone(), 1_005, Via::Watched);
    f.dep(1, 8, 2_494, Via::Listed);
    f.pod(a.clone(), 2_699, Via::Listed);
    f.pa(1, 1, active, 2_864, Via::Listed);
    // The catch-up burst after the watches' errors, every stream in its own order.
    let mut a = a;
    a.deleting = Some(f.second(3_000));
    a.ready = Some(cond(CondStatus::False, None, f.second(3_000)));
    f.pod(a, 3_666, Via::Resumed);
    f.dep(0, 8, 3_666, Via::Resumed);
    f.m.remove_pod("a", f.stamp(3_666, Via::Resumed));
    f.pod(f.new_pod("b", 3_667), 3_667, Via::Resumed);
    assert!(f.dep(1, 8, 3_668, Via::Resumed).is_empty());
    assert!(f.no_traffic(3_000, 3_668, Via::Resumed).is_empty());
    assert!(f.queued(3_000, 3_669, Via::Resumed).is_empty(), "no abort");
    let done = one(f.pod(f.ready_pod("b", 3_667, 3_724), 3_724, Via::Watched));
    assert_eq!(
        (done.outcome, done.start_second),
        (Outcome::Served, f.second(3_000).timestamp())
    );
}

#[test]
fn a_wake_seen_only_by_lists_began_after_its_streams_were_last_at_zero() {
    // Seen in the soak: every watch failed across a whole wake; the PA's list shows it
    // served, the Deployment's list shows the rise after that, and the pods come last.
    let mut f = Feed::idle();
    let a = f.live_wake("a", 1_000, 1_020, 1_283);
    f.pa(
        1,
        1,
        cond(CondStatus::True, None, f.second(1_283)),
        1_284,
        Via::Watched,
    );
    let mut gone = a;
    gone.deleting = Some(f.second(3_785));
    f.pod(gone, 3_785, Via::Watched);
    f.dep(0, 8, 3_785, Via::Watched);
    f.m.remove_pod("a", f.stamp(3_785, Via::Watched));
    // The next wake starts at 3,850 and serves at 4,106, all unseen.
    assert!(
        f.pa(
            1,
            1,
            cond(CondStatus::True, None, f.second(4_106)),
            4_176,
            Via::Listed
        )
        .is_empty()
    );
    assert!(
        f.dep(1, 8, 5_332, Via::Listed).is_empty(),
        "the pods will bound its start"
    );
    let b = f.ready_pod("b", 3_900, 4_106);
    let done = one(f.pod(b, 5_496, Via::Listed));
    assert_eq!(
        (done.outcome, done.precision),
        (Outcome::Served, Precision::S)
    );
    assert_eq!(
        done.start_second,
        f.second(3_850).timestamp(),
        "named by its real second"
    );
    assert!(
        done.requested_at <= f.stamp(3_850, Via::Listed).wall,
        "{done:?}"
    );
    assert!(
        done.duration_ms >= 4_106 - 3_850,
        "an upper bound: {done:?}"
    );
    assert!(f.eval(9_000, Via::Watched).is_empty(), "recorded once");
}

#[test]
fn a_quick_abort_and_re_request_hidden_by_a_relist_are_two_wakes() {
    let mut f = Feed::idle();
    f.dep(1, 8, 1_000, Via::Watched);
    f.queued(1_000, 1_003, Via::Watched);
    f.pod(f.new_pod("a", 1_020), 1_030, Via::Watched);
    // Every watch is down while the wake is given up at 7.5 s and requested again 100 ms
    // later; the relist shows only the second request: a `Queued` of a later second.
    f.m.remove_pod("a", f.stamp(9_000, Via::Listed));
    f.pod(f.new_pod("b", 7_620), 9_000, Via::Listed);
    f.dep(1, 10, 9_000, Via::Listed);
    let first = one(f.queued(7_600, 9_000, Via::Listed));
    assert_eq!(first.outcome, Outcome::Aborted);
    assert_eq!(first.start_second, f.second(1_000).timestamp());
    // The fall came before the new `Queued`, by the end of its second at the latest.
    assert_eq!((first.duration_ms, first.precision), (7_000, Precision::S));
    assert!(f.m.waking(), "the second request is a wake underway");
    f.dep(0, 11, 14_000, Via::Watched);
    f.no_traffic(14_000, 14_010, Via::Watched);
    let second = one(f.eval(20_000, Via::Watched));
    assert_eq!(second.outcome, Outcome::Aborted);
    assert_eq!(second.start_second, f.second(7_600).timestamp());
    assert_eq!(second.requested_at, f.second(7_600));
}

#[test]
fn a_pod_of_the_last_serving_still_terminating_does_not_date_the_next_wake() {
    let mut f = Feed::idle();
    let mut a = f.live_wake("a", 1_000, 1_020, 1_283);
    f.pa(
        1,
        1,
        cond(CondStatus::True, None, f.second(1_283)),
        1_290,
        Via::Watched,
    );
    // The scale-down and the next request fall in an outage; the relist still shows the
    // served pod terminating, created in the second the last wake ended.
    a.deleting = Some(f.second(2_000));
    f.pod(a, 3_000, Via::Listed);
    f.dep(1, 10, 3_000, Via::Listed);
    f.queued(2_400, 3_000, Via::Listed);
    f.pod(f.new_pod("b", 2_500), 3_000, Via::Listed);
    let done = one(f.pod(f.ready_pod("b", 2_500, 3_500), 3_500, Via::Watched));
    assert_eq!(done.outcome, Outcome::Served);
    assert_eq!(done.start_second, f.second(2_400).timestamp());
    assert_eq!(done.requested_at, f.second(2_400), "{done:?}");
}

#[test]
fn an_abort_hidden_by_an_outage_on_a_revision_never_woken_is_recorded_from_its_pod() {
    // Found by the orderings: a revision born at zero; every watch is down from the
    // request at 3.1 s to the abort at 4.7 s, and the lists show only its leftovers.
    let mut f = Feed::new();
    let stamp = f.stamp(100, Via::Watched);
    f.m.revision_seen(f.second(100), stamp, &ctx().thresholds);
    f.dep(0, 1, 102, Via::Watched);
    assert!(f.no_traffic(0, 112, Via::Watched).is_empty());
    assert!(f.no_traffic(5_000, 4_699, Via::Listed).is_empty());
    let mut pod = f.new_pod("a", 3_184);
    pod.deleting = Some(f.second(4_700));
    pod.ready = Some(cond(CondStatus::False, None, f.second(5_000)));
    let done = one(f.pod(pod, 4_726, Via::Listed));
    assert_eq!(
        (done.kind, done.outcome, done.precision),
        (WakeKind::Wake, Outcome::Aborted, Precision::S)
    );
    assert_eq!(done.start_second, f.second(3_000).timestamp());
    assert!(
        done.duration_ms >= 4_675 - 3_112,
        "an upper bound: {done:?}"
    );
    assert!(f.dep(0, 3, 4_775, Via::Listed).is_empty(), "recorded once");
    assert!(f.eval(9_000, Via::Watched).is_empty());
}

#[test]
fn a_restart_that_lists_the_next_request_records_the_whole_wake_before_it() {
    // Found by the orderings: the process died while every watch was held over a whole
    // wake; its successor lists the Deployment three changes past the stored rest, wanting
    // pods, and the PA queued for the next request.
    let mut f = Feed::new();
    let rest = crate::measure::wake::RestAt {
        deployment: Some((1, f.stamp(1_600, Via::Watched).wall)),
        autoscaler: Some(crate::measure::wake::PaRest {
            timed_out: false,
            initialized: true,
            since: f.second(2_000),
            seen: f.stamp(2_400, Via::Watched).wall,
        }),
        after_start: None,
    };
    f.m.restore_rest(rest, f.stamp(16_800, Via::Listed), &ctx().thresholds);
    f.m.set_pa(
        PaSnap {
            version: 10,
            desired: Some(1),
            actual: Some(0),
            active: Some(cond(CondStatus::Unknown, Some("Queued"), f.second(15_700))),
            initialized: true,
            initialized_since: None,
        },
        f.stamp(16_800, Via::Listed),
        &ctx().thresholds,
    );
    let dep = DeploymentSnap {
        version: 11,
        replicas: 1,
        generation: 4,
    };
    f.m.set_deployment(dep, f.stamp(16_800, Via::Listed));
    let done = one(f.eval(16_800, Via::Listed));
    assert_eq!(
        (done.kind, done.outcome, done.precision),
        (WakeKind::Wake, Outcome::Aborted, Precision::S)
    );
    // After the later of the two rests the store held, before the next request.
    assert_eq!(done.start_second, f.second(2_400).timestamp());
    assert!(
        done.start_second * 1_000 + done.duration_ms as i64 <= f.second(15_700).timestamp() * 1_000,
        "ended by the next request: {done:?}"
    );
    assert!(f.m.waking(), "the next request is a wake under way");
}

#[test]
fn a_whole_wake_knative_gave_up_on_unseen_is_recorded_failed() {
    // A whole wake went by while the process was away, and Knative gave up on it: the
    // lists show the Deployment two changes past the stored rest, and the PA's
    // `TimedOut`, which a `NoTraffic` replaces before the wake's grace is over.
    let mut f = Feed::new();
    let rest = crate::measure::wake::RestAt {
        deployment: Some((1, f.stamp(600, Via::Watched).wall)),
        autoscaler: Some(crate::measure::wake::PaRest {
            timed_out: false,
            initialized: false,
            since: f.second(0),
            seen: f.stamp(650, Via::Watched).wall,
        }),
        after_start: None,
    };
    f.m.restore_rest(rest, f.stamp(36_000, Via::Listed), &ctx().thresholds);
    assert!(f.dep(0, 3, 36_000, Via::Listed).is_empty());
    let gave_up = cond(CondStatus::False, Some("TimedOut"), f.second(34_000));
    // The `TimedOut`, newer than the stored rest, is the wake Knative gave up on: recorded
    // as the list shows it, and not again once `NoTraffic` replaces it.
    let done = one(f.pa(0, 0, gave_up, 36_010, Via::Listed));
    assert!(f.no_traffic(37_000, 37_100, Via::Watched).is_empty());
    assert!(f.eval(40_000, Via::Watched).is_empty());
    assert!(f.eval(60_000, Via::Watched).is_empty());
    assert_eq!(
        (done.kind, done.outcome, done.precision),
        (WakeKind::Wake, Outcome::Failed, Precision::S)
    );
    assert_eq!(
        done.failure.as_ref().map(|f| f.reason.as_str()),
        Some("TimedOut")
    );
}
