//! Effective `min_instances` and idle window against hand-computed values: an annotated
//! revision (with a legacy alias), one overridden by config-autoscaler, and, once the
//! ConfigMap is edited through the API, one on Knative's defaults.

mod common;

use kube::api::{Api, Patch, PatchParams};
use scaling_facts_api::{Runtime, Scaling};

use common::{RunningService, TestDb, eventually, start_sim};

const SCENARIO: &str = r#"
seed: 2
config_autoscaler: {scale-down-delay: 10s, min-scale: "2"}
services:
  - namespace: k
    name: annotated
    annotations:
      autoscaling.knative.dev/min-scale: "1"
      autoscaling.knative.dev/window: 30s
      autoscaling.knative.dev/scaleDownDelay: 5s
      autoscaling.knative.dev/scale-to-zero-pod-retention-period: 2m
    timing: {provisioning_ms: 10, pulling_image_ms: 10, starting_ms: 10}
  - namespace: k
    name: plain
    timing: {provisioning_ms: 10, pulling_image_ms: 10, starting_ms: 10}
"#;

async fn facts(service: &RunningService, release: &str) -> (Scaling, f64) {
    let runtime: Runtime = service
        .get(&format!("/v1/releases/{release}/runtime"))
        .await;
    (runtime.scaling, runtime.idle_timeout_upper_bound_seconds)
}

#[tokio::test]
async fn effective_settings_match_hand_computed_values() {
    let (sim, client) = start_sim(SCENARIO).await;
    let db = TestDb::sqlite().await;
    let service = RunningService::start(&sim, &db.url, |_| {}).await;

    // annotated: min-scale 1 beats the ConfigMap's 2; W 30 + D 5 (legacy alias beats the
    // ConfigMap's 10) + R 120 = 155; upper bound 30 + 5 + max(120, G 30) = 155.
    let (s, upper) = facts(&service, "annotated.k").await;
    assert_eq!(
        (s.min_instances, s.idle_timeout_seconds, upper),
        (1, 155.0, 155.0)
    );
    // plain: min-scale 2 and D 10 from config-autoscaler; W 60 by default; R 0:
    // 60 + 10 + 0 = 70; upper bound 60 + 10 + max(0, 30) = 100.
    let (s, upper) = facts(&service, "plain.k").await;
    assert_eq!(
        (s.min_instances, s.idle_timeout_seconds, upper),
        (2, 70.0, 100.0)
    );

    // The operator removes both keys: plain falls back to Knative's defaults, 0 and 60 / 90.
    let cms: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(client, "knative-serving");
    let patch = serde_json::json!({"data": {"scale-down-delay": null, "min-scale": null}});
    cms.patch(
        "config-autoscaler",
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await
    .unwrap();
    let book = service.state.book.clone();
    eventually(10, "defaults applied", || {
        let e = book.get("plain.k")?;
        (e.facts.scaling.min_instances == 0).then_some(())
    })
    .await;
    let (s, upper) = facts(&service, "plain.k").await;
    assert_eq!(
        (s.min_instances, s.idle_timeout_seconds, upper),
        (0, 60.0, 90.0)
    );
    let (s, _) = facts(&service, "annotated.k").await;
    assert_eq!(
        (s.min_instances, s.idle_timeout_seconds),
        (1, 155.0),
        "annotations do not move"
    );

    // The editor's idle window is validated against the revision's W + D.
    let r = reqwest::Client::new()
        .put(format!("{}/v1/releases/annotated.k/config", service.base))
        .json(&serde_json::json!({"min_instances": 0, "idle_timeout_seconds": 20}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401, "anonymous reads only: writes need a token");
    service.stop().await;
    sim.stop().await;
    db.finish().await;
}
