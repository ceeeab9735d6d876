//! The objects Knative and Kubernetes write, built as docs/knative.md describes them: names,
//! labels, annotations, conditions and status fields of Revisions, PodAutoscalers,
//! Deployments, Pods and the Service status. Pure functions of their inputs.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

use super::objects::k8s_time;

pub const SERVING_NS: &str = "knative-serving";
pub const USER_CONTAINER: &str = "user-container";
pub const QUEUE_PROXY: &str = "queue-proxy";

/// A condition, with its transition time in whole seconds.
pub fn condition(
    kind: &str,
    status: &str,
    reason: Option<&str>,
    message: Option<&str>,
    at: DateTime<Utc>,
) -> Value {
    let mut c = json!({"type": kind, "status": status, "lastTransitionTime": k8s_time(at)});
    if let Some(r) = reason {
        c["reason"] = json!(r);
    }
    if let Some(m) = message {
        c["message"] = json!(m);
    }
    c
}

/// Sets a condition in `obj.status.conditions`, keeping its transition time when nothing
/// about it changed (as Knative's condition sets do).
pub fn set_condition(obj: &mut Value, new: Value) {
    if !obj["status"].is_object() {
        obj["status"] = json!({});
    }
    if !obj["status"]["conditions"].is_array() {
        obj["status"]["conditions"] = json!([]);
    }
    let list = obj["status"]["conditions"]
        .as_array_mut()
        .expect("just made an array");
    let same = |a: &Value, b: &Value| {
        ["status", "reason", "message", "severity"]
            .iter()
            .all(|k| a.get(*k) == b.get(*k))
    };
    match list.iter_mut().find(|c| c["type"] == new["type"]) {
        Some(old) if same(old, &new) => {}
        Some(old) => *old = new,
        None => list.push(new),
    }
}

pub fn string_map(m: &BTreeMap<String, String>) -> Value {
    Value::Object(
        m.iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect::<Map<_, _>>(),
    )
}

/// Everything needed to build a revision's objects.
#[derive(Debug, Clone)]
pub struct RevisionIdentity {
    pub namespace: String,
    pub service: String,
    pub service_uid: String,
    pub name: String,
    /// Filled in once the Revision exists.
    pub uid: String,
    pub generation: u64,
    /// Template labels and annotations of the Service.
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub container: Value,
}

impl RevisionIdentity {
    fn configuration_labels(&self) -> BTreeMap<String, String> {
        let mut l = self.labels.clone();
        l.insert(
            "serving.knative.dev/configuration".into(),
            self.service.clone(),
        );
        l.insert(
            "serving.knative.dev/configurationGeneration".into(),
            self.generation.to_string(),
        );
        l.insert(
            "serving.knative.dev/configurationUID".into(),
            format!("{}-cfg", self.service_uid),
        );
        l.insert("serving.knative.dev/service".into(), self.service.clone());
        l.insert(
            "serving.knative.dev/serviceUID".into(),
            self.service_uid.clone(),
        );
        l
    }

    /// Labels of the PA, Deployment and pods: the revision's, minus routing, plus the
    /// revision's own name and UID.
    pub fn child_labels(&self) -> BTreeMap<String, String> {
        let mut l = self.configuration_labels();
        l.insert("serving.knative.dev/revision".into(), self.name.clone());
        l.insert("serving.knative.dev/revisionUID".into(), self.uid.clone());
        l.entry("app".into()).or_insert_with(|| self.name.clone());
        l
    }

    pub fn deployment_name(&self) -> String {
        format!("{}-deployment", self.name)
    }
}

pub fn revision(id: &RevisionIdentity, now: DateTime<Utc>) -> Value {
    let mut labels = id.configuration_labels();
    labels.insert("serving.knative.dev/routingState".into(), "active".into());
    let mut annotations = id.annotations.clone();
    annotations.insert("serving.knative.dev/routes".into(), id.service.clone());
    annotations.insert(
        "serving.knative.dev/routingStateModified".into(),
        k8s_time(now),
    );
    let mut rev = json!({
        "metadata": {
            "name": id.name, "labels": string_map(&labels), "annotations": string_map(&annotations),
            "ownerReferences": [{"apiVersion": "serving.knative.dev/v1", "kind": "Configuration",
                "name": id.service, "uid": format!("{}-cfg", id.service_uid), "controller": true, "blockOwnerDeletion": true}],
        },
        "spec": {"containerConcurrency": 0, "timeoutSeconds": 300, "containers": [id.container.clone()]},
        "status": {"observedGeneration": 1},
    });
    for c in ["ResourcesAvailable", "ContainerHealthy", "Ready"] {
        set_condition(
            &mut rev,
            condition(c, "Unknown", Some("Deploying"), None, now),
        );
    }
    set_condition(
        &mut rev,
        json!({"type": "Active", "status": "Unknown", "reason": "Deploying",
        "severity": "Info", "lastTransitionTime": k8s_time(now)}),
    );
    rev
}

pub fn pod_autoscaler(id: &RevisionIdentity, now: DateTime<Utc>) -> Value {
    let mut annotations = id.annotations.clone();
    annotations
        .entry("autoscaling.knative.dev/class".into())
        .or_insert_with(|| "kpa.autoscaling.knative.dev".into());
    annotations
        .entry("autoscaling.knative.dev/metric".into())
        .or_insert_with(|| "concurrency".into());
    let mut pa = json!({
        "metadata": {
            "name": id.name, "labels": string_map(&id.child_labels()), "annotations": string_map(&annotations),
            "ownerReferences": [{"apiVersion": "serving.knative.dev/v1", "kind": "Revision", "name": id.name,
                "uid": id.uid, "controller": true, "blockOwnerDeletion": true}],
        },
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": id.deployment_name()},
            "reachability": "Reachable", "protocolType": "http1", "containerConcurrency": 0,
        },
        "status": {"desiredScale": -1, "actualScale": 0, "serviceName": id.name,
                   "metricsServiceName": format!("{}-private", id.name), "observedGeneration": 1},
    });
    for c in ["Active", "Ready"] {
        set_condition(
            &mut pa,
            condition(c, "Unknown", Some("Queued"), Some(QUEUED), now),
        );
    }
    set_condition(&mut pa, sks_not_ready(now));
    set_condition(
        &mut pa,
        condition("ScaleTargetInitialized", "Unknown", None, None, now),
    );
    pa
}

pub const QUEUED: &str = "Requests to the target are being buffered as resources are provisioned.";
pub const NO_TRAFFIC: &str = "The target is not receiving traffic.";
pub const TIMED_OUT: &str = "The target could not be activated.";

pub fn deployment(id: &RevisionIdentity, replicas: u32, progress_deadline_s: u64) -> Value {
    let selector = json!({"serving.knative.dev/revisionUID": id.uid});
    let mut labels = id.child_labels();
    labels.insert(
        "serving.knative.dev/deployment-hash".into(),
        short_hash(&id.uid),
    );
    json!({
        "metadata": {
            "name": id.deployment_name(), "labels": string_map(&labels),
            "ownerReferences": [{"apiVersion": "serving.knative.dev/v1", "kind": "Revision", "name": id.name,
                "uid": id.uid, "controller": true, "blockOwnerDeletion": true}],
        },
        "spec": {
            "replicas": replicas, "progressDeadlineSeconds": progress_deadline_s,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": string_map(&id.child_labels())},
                "spec": {"containers": [id.container.clone(), queue_proxy()]},
            },
        },
        "status": {"replicas": 0, "readyReplicas": 0, "availableReplicas": 0, "observedGeneration": 1},
    })
}

fn queue_proxy() -> Value {
    json!({"name": QUEUE_PROXY, "image": "gcr.io/knative-releases/queue", "ports": [{"containerPort": 8012, "name": "http1"}]})
}

pub fn short_hash(s: &str) -> String {
    // FNV-1a: stable, dependency-free, and only needs to look like a hash.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{:010x}", h & 0xff_ffff_ffff)
}

pub fn pod(id: &RevisionIdentity, name: &str, now: DateTime<Utc>) -> Value {
    let mut labels = id.child_labels();
    labels.insert(
        "pod-template-hash".into(),
        short_hash(&id.uid)[..8].to_owned(),
    );
    let user = id.container["name"]
        .as_str()
        .unwrap_or(USER_CONTAINER)
        .to_owned();
    json!({
        "metadata": {
            "name": name, "labels": string_map(&labels),
            "annotations": {"kubectl.kubernetes.io/default-container": user},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "name": format!("{}-{}", id.deployment_name(), &short_hash(&id.uid)[..8]),
                "uid": format!("{}-rs", id.uid), "controller": true, "blockOwnerDeletion": true}],
        },
        "spec": {"containers": [id.container.clone(), queue_proxy()], "terminationGracePeriodSeconds": 300},
        "status": {"phase": "Pending", "qosClass": "Burstable", "startTime": k8s_time(now)},
    })
}

/// Container statuses of both containers, all in the same state.
pub fn container_statuses(
    user: &str,
    state: Value,
    ready: bool,
    restarts: u32,
    last: Option<Value>,
) -> Value {
    let one = |name: &str| {
        let mut s = json!({
            "name": name, "state": state.clone(), "ready": ready, "restartCount": restarts,
            "image": format!("registry.example/{name}:latest"), "imageID": "",
            "started": state.get("running").is_some(),
        });
        if let Some(l) = &last {
            s["lastState"] = l.clone();
        }
        s
    };
    json!([one(user), one(QUEUE_PROXY)])
}

pub fn user_container(image: &str) -> Value {
    json!({"name": USER_CONTAINER, "image": image, "ports": [{"containerPort": 8080, "name": "user-port"}]})
}

/// A Revision's `Active` condition: it mirrors the PA's, with severity Info, since it is
/// not part of the revision's readiness.
pub fn revision_active(
    status: &str,
    reason: Option<&str>,
    message: Option<&str>,
    at: DateTime<Utc>,
) -> Value {
    let mut c = condition("Active", status, reason, message, at);
    c["severity"] = json!("Info");
    c
}

/// The PA's conditions when it wants no pods: `Active` and `Ready` False, `NoTraffic`.
pub fn pa_no_traffic(pa: &mut Value, at: DateTime<Utc>) {
    for kind in ["Active", "Ready"] {
        set_condition(
            pa,
            condition(kind, "False", Some("NoTraffic"), Some(NO_TRAFFIC), at),
        );
    }
}

/// Whether an object's `Active` condition says the activation timed out.
pub fn timed_out(obj: &Value) -> bool {
    obj["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Active" && c["reason"] == "TimedOut")
    })
}

/// The PA's `SKSReady` while no pod backs the revision.
pub fn sks_not_ready(at: DateTime<Utc>) -> Value {
    condition(
        "SKSReady",
        "Unknown",
        Some("NotReady"),
        Some("K8s Service is not ready"),
        at,
    )
}
