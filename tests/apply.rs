//! Applying the editor's values to the Knative Service, against the simulator: the two
//! template annotations land by server-side apply under `scaling-facts` and Knative cuts
//! one new revision; a window below the stable window plus the delay is refused naming the
//! minimum; a hand edit shows as drift (view, metric, event) and the next apply reports the
//! conflict instead of overwriting it; an API server failing writes is retried with no
//! extra revision.

mod common;

use std::time::Duration;

use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use reqwest::StatusCode;
use scaling_facts_api::{ApplyState, ConfigView, ErrorBody};
use scaling_facts_sim::resources;
use serde_json::{Value, json};

use common::{RunningService, TestDb, api_resource, eventually, start_sim, token_of};

const SCENARIO: &str = r#"
seed: 13
config_autoscaler:
  stable-window: 6s
services:
  - namespace: d
    name: web
    timing: {provisioning_ms: 50, pulling_image_ms: 100, starting_ms: 50}
"#;
const MIN_SCALE: &str = "autoscaling.knative.dev/min-scale";
const RETENTION: &str = "autoscaling.knative.dev/scale-to-zero-pod-retention-period";

struct Setup {
    sim: scaling_facts_sim::Simulator,
    client: kube::Client,
    service: RunningService,
    _db: TestDb,
    _tokens: tempfile::TempDir,
}

async fn setup() -> Setup {
    let (sim, client) = start_sim(SCENARIO).await;
    let db = TestDb::sqlite().await;
    let (tokens, tokens_file) = common::tokens_file();
    let service = RunningService::start(&sim, &db.url, |c| {
        c.act.apply_config = true;
        c.tokens_file = Some(tokens_file);
    })
    .await;
    let book = service.state.book.clone();
    eventually(20, "web.d in the book", || book.get("web.d")).await;
    Setup {
        sim,
        client,
        service,
        _db: db,
        _tokens: tokens,
    }
}

impl Setup {
    async fn put(&self, min: u32, idle: u32) -> reqwest::Response {
        reqwest::Client::new()
            .put(format!("{}/v1/releases/web.d/config", self.service.base))
            .bearer_auth(token_of("writer"))
            .json(&json!({"min_instances": min, "idle_timeout_seconds": idle}))
            .send()
            .await
            .unwrap()
    }

    async fn config(&self) -> ConfigView {
        self.service.get("/v1/releases/web.d/config").await
    }

    fn services(&self) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), "d", &api_resource(resources::SERVICE))
    }

    async fn annotations(&self) -> Value {
        let svc = self.services().get("web").await.unwrap();
        svc.data["spec"]["template"]["metadata"]["annotations"].clone()
    }

    async fn revisions(&self) -> usize {
        let api: Api<DynamicObject> =
            Api::namespaced_with(self.client.clone(), "d", &api_resource(resources::REVISION));
        api.list(&ListParams::default()).await.unwrap().items.len()
    }

    /// Waits until GET config says `f`.
    async fn config_until(&self, what: &str, f: impl Fn(&ConfigView) -> bool) -> ConfigView {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let view = self.config().await;
            if f(&view) {
                return view;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting for {what}: {view:#?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn stop(self) {
        self.service.stop().await;
        self.sim.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_put_applies_the_annotations_and_knative_cuts_one_revision() {
    let s = setup().await;
    assert_eq!(s.revisions().await, 1);
    let r = s.put(1, 36).await;
    assert_eq!(r.status(), StatusCode::OK);
    let view: ConfigView = r.json().await.unwrap();
    let apply = view.apply.unwrap();
    assert_eq!(
        (apply.state, apply.attempts, apply.message),
        (ApplyState::Applied, 1, None)
    );
    let applied = view.applied.unwrap();
    // The retention is the idle window less the 6 s stable window and no delay.
    assert_eq!(
        (applied.min_scale.as_str(), applied.retention.as_str()),
        ("1", "30s")
    );
    // The answer that says applied shows the template as the apply left it.
    assert_eq!(
        (
            view.template.min_scale.as_deref(),
            view.template.retention.as_deref()
        ),
        (Some("1"), Some("30s"))
    );
    let annotations = s.annotations().await;
    assert_eq!(
        (
            annotations[MIN_SCALE].as_str(),
            annotations[RETENTION].as_str()
        ),
        (Some("1"), Some("30s"))
    );
    // Under the field manager scaling-facts, by apply.
    let svc = s.services().get("web").await.unwrap();
    let managers = svc.metadata.managed_fields.unwrap_or_default();
    assert!(
        managers
            .iter()
            .any(|m| m.manager.as_deref() == Some("scaling-facts")
                && m.operation.as_deref() == Some("Apply")),
        "{managers:#?}"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while s.revisions().await < 2 {
        assert!(std::time::Instant::now() < deadline, "no new revision");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The new revision runs with what was asked; the template says what was applied.
    let view = s
        .config_until("the effective values", |v| {
            v.in_sync && v.effective.min_instances == 1 && v.effective.idle_timeout_seconds == 36.0
        })
        .await;
    assert_eq!(view.template.min_scale.as_deref(), Some("1"));
    assert!(!view.drift);
    assert_eq!(view.audit[0].apply_state, ApplyState::Applied);
    // The same values again change nothing in the cluster: no third revision.
    assert_eq!(s.put(1, 36).await.status(), StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(s.revisions().await, 2);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_window_below_the_stable_window_plus_delay_is_refused_naming_the_minimum() {
    let s = setup().await;
    let r = s.put(1, 5).await;
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: ErrorBody = r.json().await.unwrap();
    assert_eq!(body.error_code, "invalid_field");
    assert!(
        body.message
            .starts_with("idle_timeout_seconds: must be between 6 and 3606, got 5: at least 6,"),
        "{}",
        body.message
    );
    // Nothing stored, nothing applied.
    let view = s.config().await;
    assert!(view.desired.is_none() && view.apply.is_none() && view.audit.is_empty());
    assert!(s.annotations().await.get(MIN_SCALE).is_none());
    assert_eq!(s.revisions().await, 1);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_edit_is_drift_and_the_next_apply_reports_the_conflict() {
    let s = setup().await;
    assert_eq!(s.put(1, 36).await.status(), StatusCode::OK);
    s.config_until("the template carries the apply", |v| {
        v.template.min_scale.as_deref() == Some("1")
    })
    .await;
    let mut changes = s.service.state.book.subscribe();
    // Someone edits the Service by hand.
    let edit = json!({"spec": {"template": {"metadata": {"annotations": {MIN_SCALE: "3"}}}}});
    let by_hand = PatchParams {
        field_manager: Some("kubectl-edit".into()),
        ..PatchParams::default()
    };
    s.services()
        .patch("web", &by_hand, &Patch::Merge(&edit))
        .await
        .unwrap();
    let view = s.config_until("drift", |v| v.drift).await;
    assert_eq!(view.template.min_scale.as_deref(), Some("3"));
    assert_eq!(view.applied.unwrap().min_scale, "1");
    // An event on the stream, and the metric.
    let drift = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let change = changes.recv().await.unwrap();
            if let Some(d) = change.drift.clone() {
                return d;
            }
        }
    })
    .await
    .expect("a config_drift change");
    assert!(drift.drift && drift.release == "web.d");
    assert_eq!(drift.template.min_scale.as_deref(), Some("3"));
    let metrics = s.service.state.metrics.encode();
    assert!(
        metrics.contains(r#"scaling_facts_config_drift{namespace="d",service="web"} 1"#),
        "{metrics}"
    );
    // The next apply would change the edited annotation: refused, reported, not forced.
    let r = s.put(2, 36).await;
    assert_eq!(r.status(), StatusCode::CONFLICT);
    let body: ErrorBody = r.json().await.unwrap();
    assert_eq!(body.error_code, "apply_conflict");
    assert!(
        body.message.contains("\"kubectl-edit\"") && body.message.contains(MIN_SCALE),
        "{}",
        body.message
    );
    assert_eq!(s.annotations().await[MIN_SCALE], "3", "never overwritten");
    let view = s.config().await;
    assert_eq!(
        view.desired.unwrap().min_instances,
        2,
        "the desired value is kept"
    );
    assert_eq!(view.apply.unwrap().state, ApplyState::Conflict);
    assert_eq!(view.audit[0].apply_state, ApplyState::Conflict);
    assert!(
        view.audit[0]
            .apply_message
            .as_deref()
            .unwrap()
            .contains("kubectl-edit")
    );
    assert_eq!(view.audit[1].apply_state, ApplyState::Applied);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_server_failing_writes_is_retried_without_extra_revisions() {
    let s = setup().await;
    s.sim.cluster.faults.fail_writes(2);
    let r = s.put(1, 36).await;
    assert_eq!(r.status(), StatusCode::OK);
    let view: ConfigView = r.json().await.unwrap();
    let apply = view.apply.unwrap();
    assert_eq!(apply.state, ApplyState::Retrying);
    assert!(
        apply.message.as_deref().unwrap().contains("leader changed"),
        "{apply:?}"
    );
    assert_eq!(view.audit[0].apply_state, ApplyState::Retrying);
    // Retried after 1 s (fails again), then after 2 s: applied.
    let view = s
        .config_until("applied", |v| {
            v.apply
                .as_ref()
                .is_some_and(|a| a.state == ApplyState::Applied)
        })
        .await;
    assert_eq!(view.apply.unwrap().attempts, 3);
    assert_eq!(view.audit[0].apply_state, ApplyState::Applied);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        s.revisions().await,
        2,
        "one new revision, however many attempts"
    );
    s.stop().await;
}
