//! Offline validation of rendered objects: each built-in kind is read into its
//! k8s-openapi type and written back, and any field that did not survive (a misspelt key,
//! a value of the wrong type, a field the API does not have) is an error. The Prometheus
//! Operator's two kinds have no k8s-openapi type; they are read into the structs below,
//! written from the operator's API reference for the fields this deployment uses, and
//! refuse any other field.

use std::collections::BTreeMap;

use k8s_openapi::api::{apps, core, networking, policy, rbac};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Validates one object; the error names the object and every field that was lost.
pub fn validate(obj: &Value) -> Result<(), String> {
    let kind = obj["kind"].as_str().unwrap_or("<no kind>");
    let name = obj["metadata"]["name"].as_str().unwrap_or("<no name>");
    let checked = match (obj["apiVersion"].as_str().unwrap_or(""), kind) {
        ("v1", "Namespace") => round_trip::<core::v1::Namespace>(obj),
        ("v1", "ServiceAccount") => round_trip::<core::v1::ServiceAccount>(obj),
        ("v1", "ConfigMap") => round_trip::<core::v1::ConfigMap>(obj),
        ("v1", "Service") => round_trip::<core::v1::Service>(obj),
        ("v1", "PersistentVolumeClaim") => round_trip::<core::v1::PersistentVolumeClaim>(obj),
        ("apps/v1", "Deployment") => round_trip::<apps::v1::Deployment>(obj),
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => round_trip::<rbac::v1::ClusterRole>(obj),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => {
            round_trip::<rbac::v1::ClusterRoleBinding>(obj)
        }
        ("rbac.authorization.k8s.io/v1", "Role") => round_trip::<rbac::v1::Role>(obj),
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => round_trip::<rbac::v1::RoleBinding>(obj),
        ("networking.k8s.io/v1", "NetworkPolicy") => {
            round_trip::<networking::v1::NetworkPolicy>(obj)
        }
        ("policy/v1", "PodDisruptionBudget") => round_trip::<policy::v1::PodDisruptionBudget>(obj),
        ("monitoring.coreos.com/v1", "ServiceMonitor") => round_trip::<ServiceMonitor>(obj)
            .and_then(|()| durations(&obj["spec"]["endpoints"], &["interval", "scrapeTimeout"])),
        ("monitoring.coreos.com/v1", "PrometheusRule") => round_trip::<PrometheusRule>(obj)
            .and_then(|()| {
                obj["spec"]["groups"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .try_for_each(|g| durations(&g["rules"], &["for"]))
            }),
        (api_version, _) => Err(format!("no schema for {api_version} {kind}")),
    };
    checked.map_err(|e| format!("{kind} {name}: {e}"))
}

/// Reads `obj` as `T` and writes it back: what comes back must be what went in.
fn round_trip<T: DeserializeOwned + Serialize>(obj: &Value) -> Result<(), String> {
    let typed: T = serde_json::from_value(obj.clone()).map_err(|e| e.to_string())?;
    let back = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
    let mut lost = Vec::new();
    compare("", obj, &back, &mut lost);
    if lost.is_empty() {
        Ok(())
    } else {
        Err(format!("not in the schema: {}", lost.join(", ")))
    }
}

/// Paths of `want` that `got` lacks or holds differently.
fn compare(path: &str, want: &Value, got: &Value, lost: &mut Vec<String>) {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (k, v) in w {
                match g.get(k) {
                    Some(gv) => compare(&format!("{path}.{k}"), v, gv, lost),
                    None => lost.push(format!("{path}.{k}")),
                }
            }
        }
        (Value::Array(w), Value::Array(g)) if w.len() == g.len() => {
            for (i, (v, gv)) in w.iter().zip(g).enumerate() {
                compare(&format!("{path}[{i}]"), v, gv, lost);
            }
        }
        _ if want == got => {}
        _ => lost.push(format!("{path} ({want} became {got})")),
    }
}

/// Prometheus durations (`30s`, `5m`, `1h30m`) in the named fields of each item.
fn durations(items: &Value, fields: &[&str]) -> Result<(), String> {
    for item in items.as_array().into_iter().flatten() {
        for f in fields {
            if let Some(d) = item.get(*f) {
                let d = d.as_str().ok_or_else(|| format!("{f} is not a string"))?;
                if !is_duration(d) {
                    return Err(format!("{f}: {d:?} is not a Prometheus duration"));
                }
            }
        }
    }
    Ok(())
}

fn is_duration(d: &str) -> bool {
    let mut rest = d;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return false;
        }
        rest = &rest[digits..];
        let Some(unit) = ["ms", "s", "m", "h", "d", "w", "y"]
            .into_iter()
            .find(|u| rest.starts_with(u))
        else {
            return false;
        };
        rest = &rest[unit.len()..];
    }
    !d.is_empty()
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ServiceMonitor {
    api_version: String,
    kind: String,
    metadata: ObjectMeta,
    spec: ServiceMonitorSpec,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ServiceMonitorSpec {
    selector: LabelSelector,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    namespace_selector: Option<NamespaceSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    job_label: Option<String>,
    endpoints: Vec<Endpoint>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NamespaceSelector {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    any: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    match_names: Option<Vec<String>>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Endpoint {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    port: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scheme: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    interval: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scrape_timeout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    honor_labels: Option<bool>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PrometheusRule {
    api_version: String,
    kind: String,
    metadata: ObjectMeta,
    spec: RuleSpec,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    groups: Vec<RuleGroup>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleGroup {
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    interval: Option<String>,
    rules: Vec<Rule>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rule {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    alert: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    record: Option<String>,
    expr: String,
    #[serde(default, rename = "for", skip_serializing_if = "Option::is_none")]
    for_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    labels: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    annotations: Option<BTreeMap<String, String>>,
}

#[test]
fn a_lost_field_is_named() {
    let mut cm = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "x", "namespace": "y"},
        "data": {"A": "1"}
    });
    assert_eq!(validate(&cm), Ok(()));
    cm["dta"] = serde_json::json!({"B": "2"});
    let err = validate(&cm).unwrap_err();
    assert!(err.contains(".dta"), "{err}");
    let rule = serde_json::json!({
        "apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
        "metadata": {"name": "r"},
        "spec": {"groups": [{"name": "g", "rules": [{"alert": "A", "expr": "up", "for": "5 minutes"}]}]}
    });
    assert!(validate(&rule).unwrap_err().contains("Prometheus duration"));
    assert!(is_duration("1h30m") && is_duration("30s") && !is_duration("5") && !is_duration(""));
}
