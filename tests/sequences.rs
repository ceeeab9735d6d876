//! The everyday sequences a real cluster writes (docs/knative.md, "What a watcher must tolerate"), end to end through kube-rs
//! against the simulator, with the service started before, during and after them on one
//! store: a wake Knative gives up on (`TimedOut`, which lingers on the PA while the next
//! wake's Deployment scale-up is seen first) followed by served wakes, a revision born at
//! `initial-scale: 3` that never wakes, and one born at zero whose first rise is a wake.

mod common;

use std::time::Duration;

use scaling_facts_api::{ColdStarts, Scaling};
use scaling_facts_api::{Outcome, WakeKind};

use common::{RunningService, TestDb, eventually, start_sim};

const SCENARIO: &str = r#"
seed: 5
bookmark_interval_ms: 500
kpa_write_order: deployment_first
config_autoscaler: {stable-window: 6s, allow-zero-initial-scale: "true"}
config_deployment: {progress-deadline: 1s}
services:
  - {namespace: seq, name: flaky, start: idle, failure: never_ready, failing_starts: 1,
     timing: {provisioning_ms: 80, pulling_image_ms: 150, starting_ms: 120, terminating_ms: 50}}
  - {namespace: seq, name: wide, annotations: {autoscaling.knative.dev/initial-scale: "3"},
     timing: {provisioning_ms: 30, pulling_image_ms: 40, starting_ms: 30, terminating_ms: 50}}
  - {namespace: seq, name: zero, annotations: {autoscaling.knative.dev/initial-scale: "0"},
     timing: {provisioning_ms: 60, pulling_image_ms: 90, starting_ms: 70, terminating_ms: 50}}
"#;

async fn cold_starts(service: &RunningService, release: &str) -> ColdStarts {
    service
        .get(&format!("/v1/releases/{release}/cold-starts"))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequences_are_recorded_exactly_whenever_the_service_runs() {
    let (sim, _client) = start_sim(SCENARIO).await;
    let cluster = sim.cluster.clone();
    let db = TestDb::sqlite().await;

    // Before: the service sees the revisions born and the failing wake begin.
    let first = RunningService::start(&sim, &db.url, |_| {}).await;
    eventually(20, "wide's initial start", || {
        let w = cluster.truth.wakes();
        w.iter()
            .any(|w| w.service == "wide" && w.outcome == Some(Outcome::Served))
            .then_some(())
    })
    .await;
    let failing = {
        let c = cluster.clone();
        tokio::spawn(async move { c.activate("seq", "flaky", Duration::ZERO, None).await })
    };
    tokio::time::sleep(Duration::from_secs(3)).await;
    // During: killed mid-wake, started again while Knative is still activating.
    first.stop().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let second = RunningService::start(&sim, &db.url, |_| {}).await;
    assert!(
        failing.await.unwrap().is_err(),
        "Knative gives up on the first wake"
    );
    // The next wakes begin with the Deployment's scale-up while the PA still shows the
    // last wake's TimedOut.
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        cluster
            .activate("seq", "flaky", Duration::ZERO, None)
            .await
            .expect("served");
        cluster.force_idle("seq", "flaky-00001");
    }
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    cluster
        .activate("seq", "zero", Duration::ZERO, None)
        .await
        .expect("served");
    tokio::time::sleep(Duration::from_secs(3)).await;
    second.stop().await;

    // After: a new process on the same store finds every wake once.
    let third = RunningService::start(&sim, &db.url, |_| {}).await;
    let truth = cluster.truth.wakes();
    let served: Vec<u64> = truth
        .iter()
        .filter(|w| w.service == "flaky" && w.outcome == Some(Outcome::Served))
        .filter_map(|w| w.duration_ms())
        .collect();
    assert_eq!(served.len(), 3);

    let flaky = cold_starts(&third, "flaky.seq").await;
    let rev = &flaky.revisions[0];
    assert_eq!(
        (
            rev.counts.served,
            rev.counts.failed,
            rev.counts.aborted,
            rev.counts.initial
        ),
        (3, 1, 0, 0),
        "{rev:#?}"
    );
    let failed: Vec<_> = rev
        .recent
        .iter()
        .filter(|w| w.outcome == Outcome::Failed)
        .collect();
    assert_eq!(failed[0].failure_reason.as_deref(), Some("TimedOut"));
    let scaling: Scaling = third.get("/v1/releases/flaky.seq/scaling").await;
    let expected_ms = (scaling.expected_cold_start_seconds.expect("measured") * 1000.0) as i64;
    let true_max = *served.iter().max().unwrap() as i64;
    // p95 of three is the largest; a histogram bucket at two significant digits.
    assert!(
        (expected_ms - true_max).abs() <= true_max / 50 + 10,
        "expected {expected_ms} ms vs true {true_max} ms"
    );

    let wide = cold_starts(&third, "wide.seq").await;
    let rev = &wide.revisions[0];
    assert_eq!((rev.counts.initial, rev.counts.served), (1, 0), "{rev:#?}");
    assert!(rev.recent.iter().all(|w| w.kind == WakeKind::Initial));
    let scaling: Scaling = third.get("/v1/releases/wide.seq/scaling").await;
    assert_eq!(
        scaling.expected_cold_start_seconds, None,
        "an initial start is not a wake"
    );

    let zero = cold_starts(&third, "zero.seq").await;
    let rev = &zero.revisions[0];
    assert_eq!((rev.counts.initial, rev.counts.served), (0, 1), "{rev:#?}");

    third.stop().await;
    sim.stop().await;
    db.finish().await;
}
