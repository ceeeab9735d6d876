//! Slim Kubernetes objects to measurement observations: labels to identities, conditions
//! to snapshots, timestamps to chrono.

use chrono::{DateTime, Utc};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use super::types::{self, Condition, Conditions};
use crate::measure::depends;
use crate::measure::observe::{
    Cond, CondStatus, Container, DeploymentSnap, Observation, PaSnap, PodSnap, RevisionSnap,
    ServiceSnap, TemplateScaling, version_number,
};

pub const REVISION_UID_LABEL: &str = "serving.knative.dev/revisionUID";
pub const REVISION_LABEL: &str = "serving.knative.dev/revision";
const SERVICE_LABEL: &str = "serving.knative.dev/service";
const ROUTING_STATE_LABEL: &str = "serving.knative.dev/routingState";
const DEFAULT_CONTAINER_ANNOTATION: &str = "kubectl.kubernetes.io/default-container";
const QUEUE_PROXY: &str = "queue-proxy";
const FATAL: [&str; 5] = [
    "CrashLoopBackOff",
    "CreateContainerConfigError",
    "CreateContainerError",
    "InvalidImageName",
    "ErrImageNeverPull",
];

pub fn time(t: &Time) -> DateTime<Utc> {
    DateTime::from_timestamp(t.0.as_second(), t.0.subsec_nanosecond().max(0) as u32)
        .unwrap_or_default()
}

fn label<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    meta.labels.as_ref()?.get(key).map(String::as_str)
}

fn name(meta: &ObjectMeta) -> String {
    meta.name.clone().unwrap_or_default()
}

fn namespace(meta: &ObjectMeta) -> String {
    meta.namespace.clone().unwrap_or_default()
}

fn cond(c: &Condition) -> Cond {
    Cond {
        status: match c.status.as_str() {
            "True" => CondStatus::True,
            "False" => CondStatus::False,
            _ => CondStatus::Unknown,
        },
        reason: c
            .reason
            .as_deref()
            .filter(|r| !r.is_empty())
            .map(Into::into),
        message: c
            .message
            .as_deref()
            .filter(|m| !m.is_empty())
            .map(Into::into),
        since: c.last_transition_time.as_ref().map(time),
    }
}

fn get(conds: &Conditions, kind: &str) -> Option<Cond> {
    conds.get(kind).map(cond)
}

/// The release key of a Knative Service: its release-UID label, else `<name>.<namespace>`.
pub fn service(s: &types::KnativeService, release_label: &str) -> ServiceSnap {
    let ns = namespace(&s.metadata);
    let n = name(&s.metadata);
    let release = label(&s.metadata, release_label)
        .filter(|v| !v.is_empty())
        .map_or_else(|| format!("{n}.{ns}"), str::to_owned);
    ServiceSnap {
        traffic: s
            .status
            .traffic
            .iter()
            .filter_map(|t| Some((t.revision_name.clone()?, u32::try_from(t.percent?).ok()?)))
            .filter(|(_, p)| *p > 0)
            .collect(),
        uid: s.metadata.uid.clone().unwrap_or_default(),
        created: s.metadata.creation_timestamp.as_ref().map(time),
        depends_on: s
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(depends::ANNOTATION))
            .map(|v| depends::parse(v))
            .unwrap_or_default(),
        template: {
            let annotation = |k: &str| s.spec.template.metadata.annotations.get(k).cloned();
            let t = TemplateScaling {
                min_scale: annotation(TemplateScaling::MIN_SCALE),
                retention: annotation(TemplateScaling::RETENTION),
            };
            (t != TemplateScaling::default()).then(|| std::sync::Arc::new(t))
        },
        namespace: ns,
        name: n,
        release,
    }
}

pub fn revision(r: &types::Revision) -> Option<RevisionSnap> {
    let meta = &r.metadata;
    let annotations = meta
        .annotations
        .iter()
        .flatten()
        .filter(|(k, _)| {
            k.starts_with("autoscaling.knative.dev/")
                || *k == "serving.knative.dev/progress-deadline"
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Some(RevisionSnap {
        uid: meta.uid.clone()?,
        name: name(meta),
        namespace: namespace(meta),
        service: label(meta, SERVICE_LABEL)
            .or_else(|| label(meta, "serving.knative.dev/configuration"))
            .map_or_else(|| name(meta), str::to_owned),
        created: meta
            .creation_timestamp
            .as_ref()
            .map(time)
            .unwrap_or_default(),
        annotations,
        reachable: label(meta, ROUTING_STATE_LABEL) != Some("reserve"),
    })
}

pub fn autoscaler(pa: &types::PodAutoscaler) -> Option<Observation> {
    let status = &pa.status;
    let initialized =
        get(&status.conditions, "ScaleTargetInitialized").filter(|c| c.is(CondStatus::True));
    Some(Observation::Autoscaler {
        revision_uid: label(&pa.metadata, REVISION_UID_LABEL)?.to_owned(),
        pa: PaSnap {
            version: version_number(pa.metadata.resource_version.as_deref()),
            desired: status.desired_scale,
            actual: status.actual_scale,
            // Its status, reason and time say all the machine reads; the message is
            // dropped, as every revision of a fleet keeps its PA's last condition.
            active: get(&status.conditions, "Active").map(|c| Cond { message: None, ..c }),
            initialized: initialized.is_some(),
            initialized_since: initialized.and_then(|c| c.since),
        },
    })
}

pub fn deployment(d: &types::Deployment) -> Option<Observation> {
    Some(Observation::Deployment {
        revision_uid: label(&d.metadata, REVISION_UID_LABEL)?.to_owned(),
        dep: DeploymentSnap {
            version: version_number(d.metadata.resource_version.as_deref()),
            replicas: d.spec.replicas.unwrap_or(1).max(0) as u32,
            generation: d.metadata.generation.unwrap_or(0),
        },
    })
}

fn container(state: Option<&types::ContainerState>) -> Container {
    let Some(s) = state else {
        return Container::Absent;
    };
    if let Some(w) = &s.waiting {
        return Container::Waiting {
            reason: w.reason.clone().unwrap_or_else(|| "Waiting".into()),
            message: w.message.clone(),
        };
    }
    if let Some(r) = &s.running {
        return Container::Running {
            started_at: r.started_at.as_ref().map(time),
        };
    }
    if let Some(t) = &s.terminated {
        return Container::Terminated {
            exit_code: t.exit_code,
        };
    }
    Container::Absent
}

pub fn pod(p: &types::Pod) -> Option<(String, PodSnap)> {
    let meta = &p.metadata;
    let uid = label(meta, REVISION_UID_LABEL)?.to_owned();
    let status = &p.status;
    let user_name = meta
        .annotations
        .as_ref()
        .and_then(|a| a.get(DEFAULT_CONTAINER_ANNOTATION))
        .cloned();
    let user = status.container_statuses.iter().find(|c| {
        user_name
            .as_deref()
            .map_or(c.name != QUEUE_PROXY, |n| c.name == n)
    });
    let mut state = container(user.and_then(|c| c.state.as_ref()));
    // A fatal state of the sidecar fails the pod as surely as the application's.
    for other in status
        .container_statuses
        .iter()
        .filter(|c| Some(&c.name) != user.map(|u| &u.name))
    {
        if let Container::Waiting { reason, message } = container(other.state.as_ref())
            && FATAL.contains(&reason.as_str())
        {
            state = Container::Waiting { reason, message };
        }
    }
    Some((
        uid,
        PodSnap {
            name: name(meta),
            version: version_number(meta.resource_version.as_deref()),
            created: meta
                .creation_timestamp
                .as_ref()
                .map(time)
                .unwrap_or_default(),
            deleting: meta.deletion_timestamp.as_ref().map(|at| {
                // The timestamp is when the grace period ends: the request came that long
                // before (shortening the period later keeps the difference).
                let grace = meta.deletion_grace_period_seconds.unwrap_or(0).max(0);
                time(at) - chrono::Duration::seconds(grace)
            }),
            running: status.phase.as_deref() == Some("Running"),
            scheduled: get(&status.conditions, "PodScheduled"),
            ready: get(&status.conditions, "Ready"),
            container: state,
            restarts: user.and_then(|c| c.restart_count).unwrap_or(0).max(0) as u32,
            last_exit_code: user
                .and_then(|c| c.last_state.as_ref())
                .and_then(|s| s.terminated.as_ref())
                .map(|t| t.exit_code),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_declares_the_releases_it_calls() {
        let s: types::KnativeService = serde_json::from_value(serde_json::json!({
            "metadata": {
                "name": "web", "namespace": "shop", "uid": "u1",
                "labels": {"scaling-facts.io/release-uid": "r-web"},
                "annotations": {"scaling-facts.io/depends-on": "cart.shop, r-pay"}
            }
        }))
        .unwrap();
        let snap = service(&s, "scaling-facts.io/release-uid");
        assert_eq!(snap.release, "r-web");
        assert_eq!(snap.depends_on, ["cart.shop", "r-pay"]);
        let plain: types::KnativeService = serde_json::from_value(
            serde_json::json!({"metadata": {"name": "cart", "namespace": "shop"}}),
        )
        .unwrap();
        let snap = service(&plain, "scaling-facts.io/release-uid");
        assert_eq!(
            (snap.release.as_str(), snap.depends_on.len()),
            ("cart.shop", 0)
        );
        assert_eq!(snap.template, None);
    }

    #[test]
    fn a_service_carries_its_templates_scaling_annotations_verbatim() {
        let s: types::KnativeService = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"template": {"metadata": {"annotations": {
                "autoscaling.knative.dev/min-scale": "2",
                "autoscaling.knative.dev/scale-to-zero-pod-retention-period": "1m5s",
                "autoscaling.knative.dev/window": "60s"
            }}, "spec": {"containers": [{"image": "web"}]}}}
        }))
        .unwrap();
        let snap = service(&s, "scaling-facts.io/release-uid");
        assert_eq!(
            snap.template.as_deref(),
            Some(&TemplateScaling {
                min_scale: Some("2".into()),
                retention: Some("1m5s".into()),
            })
        );
        // A null template is no template.
        let null: types::KnativeService = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "shop"}, "spec": {"template": null}
        }))
        .unwrap();
        assert_eq!(service(&null, "x").template, None);
    }

    #[test]
    fn a_pa_says_when_its_revision_first_served() {
        let pa: types::PodAutoscaler = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-00001", "namespace": "shop",
                "labels": {"serving.knative.dev/revisionUID": "rev-1"}},
            "status": {"desiredScale": 0, "actualScale": 0, "conditions": [
                {"type": "Active", "status": "False", "reason": "NoTraffic",
                    "lastTransitionTime": "2027-01-15T08:01:10Z"},
                {"type": "ScaleTargetInitialized", "status": "True",
                    "lastTransitionTime": "2027-01-15T08:00:03Z"}
            ]}
        }))
        .unwrap();
        let Some(Observation::Autoscaler { pa: snap, .. }) = autoscaler(&pa) else {
            panic!("a PA with its revision's label is observed");
        };
        let want = chrono::DateTime::parse_from_rfc3339("2027-01-15T08:00:03Z").unwrap();
        assert!(snap.initialized);
        assert_eq!(snap.initialized_since, Some(want.to_utc()));
        // Not yet initialized: no time, whatever the condition's own.
        let mut fresh = pa.clone();
        fresh.status.conditions = serde_json::from_value(serde_json::json!([
            {"type": "ScaleTargetInitialized", "status": "Unknown",
                "lastTransitionTime": "2027-01-15T08:00:00Z"}
        ]))
        .unwrap();
        let Some(Observation::Autoscaler { pa: snap, .. }) = autoscaler(&fresh) else {
            panic!("a PA with its revision's label is observed");
        };
        assert_eq!((snap.initialized, snap.initialized_since), (false, None));
    }

    #[test]
    fn a_terminating_pod_is_dated_by_its_removal_request_not_its_grace_end() {
        let pod = |meta: serde_json::Value| -> types::Pod {
            serde_json::from_value(serde_json::json!({
                "metadata": meta,
                "status": {"phase": "Running"}
            }))
            .unwrap()
        };
        let base = serde_json::json!({
            "name": "web-00001-deployment-abc", "namespace": "shop", "uid": "p1",
            "labels": {"serving.knative.dev/revisionUID": "rev-1"},
            "creationTimestamp": "2027-01-15T08:00:03Z"
        });
        let mut asked = base.clone();
        // The API server writes the end of the grace period: asked at 08:00:14.
        asked["deletionTimestamp"] = "2027-01-15T08:00:44Z".into();
        asked["deletionGracePeriodSeconds"] = 30.into();
        let (_, snap) = super::pod(&pod(asked)).unwrap();
        let want = chrono::DateTime::parse_from_rfc3339("2027-01-15T08:00:14Z").unwrap();
        assert_eq!(snap.deleting, Some(want.to_utc()));
        assert!(snap.terminating() && !snap.serving());
        // Without a grace period the timestamp is the request's own.
        let mut bare = base.clone();
        bare["deletionTimestamp"] = "2027-01-15T08:00:14Z".into();
        assert_eq!(
            super::pod(&pod(bare)).unwrap().1.deleting,
            Some(want.to_utc())
        );
        assert_eq!(super::pod(&pod(base)).unwrap().1.deleting, None);
    }

    #[test]
    fn a_deployment_keeps_its_generation_which_counts_its_scale_changes() {
        let d: types::Deployment = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-00001-deployment", "namespace": "shop",
                "resourceVersion": "812", "generation": 4,
                "labels": {"serving.knative.dev/revisionUID": "rev-1"}},
            "spec": {"replicas": 0}
        }))
        .unwrap();
        let Some(Observation::Deployment { dep, .. }) = deployment(&d) else {
            panic!("a Deployment with its revision's label is observed");
        };
        assert_eq!((dep.replicas, dep.generation, dep.version), (0, 4, 812));
    }
}
