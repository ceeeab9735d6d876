//! Every kind of object the simulator emits validates against the real schemas: the
//! Knative CRDs (copies under tests/crds with their licence headers) for Services,
//! Revisions and PodAutoscalers, and the k8s-openapi types for Deployments, Pods and
//! ConfigMaps. Unknown fields count as errors, since the API server would prune them.

mod common;

use std::time::Duration;

use scaling_facts_api::Outcome;
use scaling_facts_sim::resources::{self, Kind};
use serde_json::Value;

use common::start_sim;

const SCENARIO: &str = r#"
seed: 5
config_autoscaler: {stable-window: 6s}
config_deployment: {progress-deadline: 1s}
services:
  - namespace: shop
    name: cart
    labels: {scaling-facts.io/release-uid: rel-cart}
    annotations: {autoscaling.knative.dev/window: 6s}
    timing: {provisioning_ms: 50, pulling_image_ms: 100, starting_ms: 50, terminating_ms: 100}
  - namespace: shop
    name: crashy
    failure: crash_loop
    timing: {provisioning_ms: 50, pulling_image_ms: 50, starting_ms: 200, terminating_ms: 100}
  - namespace: shop
    name: nofit
    failure: unschedulable
  - namespace: shop
    name: nopull
    failure: image_pull_backoff
    timing: {provisioning_ms: 50, pulling_image_ms: 50, starting_ms: 50, terminating_ms: 60000}
"#;

fn crd_schema(file: &str) -> Value {
    let path = format!("{}/tests/crds/{file}", env!("CARGO_MANIFEST_DIR"));
    let crd: Value = serde_yaml_ng::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
}

/// Checks `value` against a structural OpenAPI v3 schema as the API server would.
fn validate(schema: &Value, value: &Value, path: &str, errors: &mut Vec<String>) {
    if value.is_null() {
        if schema["nullable"] != true {
            errors.push(format!("{path}: null"));
        }
        return;
    }
    if schema["x-kubernetes-int-or-string"] == true {
        if !(value.is_i64() || value.is_u64() || value.is_string()) {
            errors.push(format!("{path}: not int-or-string"));
        }
        return;
    }
    let ty = schema["type"].as_str().unwrap_or("");
    let ok = match ty {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        _ => true,
    };
    if !ok {
        errors.push(format!("{path}: expected {ty}, got {value}"));
        return;
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(value)
    {
        errors.push(format!("{path}: {value} not in {allowed:?}"));
    }
    if ty == "string" && schema["format"] == "date-time" {
        let s = value.as_str().unwrap();
        if chrono::DateTime::parse_from_rfc3339(s).is_err() {
            errors.push(format!("{path}: bad date-time {s}"));
        }
    }
    if let Some(items) = schema.get("items") {
        for (i, v) in value.as_array().into_iter().flatten().enumerate() {
            validate(items, v, &format!("{path}[{i}]"), errors);
        }
    }
    if let Some(obj) = value.as_object() {
        for req in schema["required"].as_array().into_iter().flatten() {
            if !obj.contains_key(req.as_str().unwrap()) {
                errors.push(format!("{path}: missing required {req}"));
            }
        }
        let preserve = schema["x-kubernetes-preserve-unknown-fields"] == true;
        for (k, v) in obj {
            if let Some(sub) = schema["properties"].get(k) {
                if path.is_empty() && k == "metadata" {
                    continue; // ObjectMeta is validated by the API server itself
                }
                validate(sub, v, &format!("{path}.{k}"), errors);
            } else if let Some(sub) = schema.get("additionalProperties").filter(|a| a.is_object()) {
                validate(sub, v, &format!("{path}.{k}"), errors);
            } else if !preserve && schema["additionalProperties"] != true {
                errors.push(format!("{path}.{k}: unknown field"));
            }
        }
    }
}

/// Round-trips through a k8s-openapi type: a field it drops, or a type it refuses, is
/// something a real API server would not accept.
fn round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(
    value: &Value,
) -> Result<(), String> {
    let typed: T = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    let back = serde_json::to_value(&typed).unwrap();
    if &back != value {
        return Err(format!(
            "fields lost or changed:\n  sent {value}\n  kept {back}"
        ));
    }
    Ok(())
}

fn objects(cluster: &scaling_facts_sim::Cluster, kind: Kind) -> Vec<Value> {
    let objects = cluster.lock();
    objects
        .list(kind, None, &Default::default(), None)
        .map(|o| (**o).clone())
        .collect()
}

#[tokio::test]
async fn every_emitted_object_validates() {
    let (sim, _client) = start_sim(SCENARIO).await;
    let cluster = sim.cluster.clone();
    let schemas = [
        (resources::SERVICE, crd_schema("service.yaml")),
        (resources::REVISION, crd_schema("revision.yaml")),
        (resources::POD_AUTOSCALER, crd_schema("podautoscaler.yaml")),
    ];
    // Collect objects in every state a wake passes through, by sampling while it runs.
    let mut samples: Vec<(Kind, Value)> = Vec::new();
    let sample = |samples: &mut Vec<(Kind, Value)>| {
        for kind in resources::ALL {
            for o in objects(&cluster, kind) {
                samples.push((kind, o));
            }
        }
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    let mut woke = false;
    loop {
        sample(&mut samples);
        let truth = cluster.truth.wakes();
        let served = truth
            .iter()
            .any(|w| w.revision == "cart-00001" && w.outcome == Some(Outcome::Served));
        if served && !woke {
            // A new template: a second revision, and traffic moves to it.
            let _ = cluster.lock().update(resources::SERVICE, "shop", "cart", |s| {
                s["spec"]["template"]["metadata"]["annotations"]["autoscaling.knative.dev/min-scale"] = "0".into();
            });
            cluster.reconcile_service("shop", "cart");
            woke = true;
        }
        let failed = truth
            .iter()
            .filter(|w| w.outcome == Some(Outcome::Failed))
            .count();
        if failed == 3 || std::time::Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    sample(&mut samples);
    let failed: Vec<_> = cluster
        .truth
        .wakes()
        .into_iter()
        .filter(|w| w.outcome == Some(Outcome::Failed))
        .collect();
    assert_eq!(failed.len(), 3, "every failure mode ended: {failed:?}");
    assert!(
        objects(&cluster, resources::REVISION)
            .iter()
            .any(|r| r["metadata"]["name"] == "cart-00002")
    );

    let mut errors = Vec::new();
    let mut checked = std::collections::BTreeMap::<&str, usize>::new();
    for (kind, obj) in &samples {
        let name = format!("{} {}", kind.kind, obj["metadata"]["name"]);
        if let Some((_, schema)) = schemas.iter().find(|(k, _)| k == kind) {
            validate(schema, obj, "", &mut errors);
            for e in errors.iter_mut().filter(|e| !e.starts_with(&name)) {
                *e = format!("{name}: {e}");
            }
        } else {
            let result = match kind.kind {
                "Deployment" => round_trip::<k8s_openapi::api::apps::v1::Deployment>(obj),
                "Pod" => round_trip::<k8s_openapi::api::core::v1::Pod>(obj),
                "ConfigMap" => round_trip::<k8s_openapi::api::core::v1::ConfigMap>(obj),
                other => panic!("no schema for {other}"),
            };
            if let Err(e) = result {
                errors.push(format!("{name}: {e}"));
            }
        }
        *checked.entry(kind.kind).or_default() += 1;
    }
    errors.sort();
    errors.dedup();
    assert!(
        errors.is_empty(),
        "{} problems:\n{}",
        errors.len(),
        errors.join("\n")
    );
    for kind in [
        "Service",
        "Revision",
        "PodAutoscaler",
        "Deployment",
        "Pod",
        "ConfigMap",
    ] {
        assert!(
            checked.get(kind).copied().unwrap_or(0) > 0,
            "no {kind} checked"
        );
    }
    sim.stop().await;
}

#[test]
fn the_checks_catch_what_the_api_server_would_refuse() {
    let schema = crd_schema("podautoscaler.yaml");
    let mut errors = Vec::new();
    let bad = serde_json::json!({
        "apiVersion": "autoscaling.internal.knative.dev/v1alpha1", "kind": "PodAutoscaler",
        "metadata": {"name": "x"},
        "spec": {"scaleTargetRef": {"name": "d"}, "protocolType": "http1", "bogus": 1},
        "status": {"desiredScale": "one", "conditions": [{"type": "Active"}]},
    });
    validate(&schema, &bad, "", &mut errors);
    let text = errors.join("\n");
    assert!(text.contains(".spec.bogus: unknown field"), "{text}");
    assert!(
        text.contains(".status.desiredScale: expected integer"),
        "{text}"
    );
    assert!(text.contains("missing required \"status\""), "{text}");
    let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "status": {"phase": "Running", "made_up": true}});
    assert!(round_trip::<k8s_openapi::api::core::v1::Pod>(&pod).is_err());
}
