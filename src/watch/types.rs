//! Slim Kubernetes types: only the fields the measurement reads, so a watch event costs
//! little to decode and nothing of it outlives its conversion to an observation.

use std::borrow::Cow;
use std::collections::BTreeMap;

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::Resource;
use serde::{Deserialize, Deserializer};

/// The metadata fields used; everything else (managedFields above all) is skipped.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct SlimMeta {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    resource_version: Option<String>,
    /// A Deployment's counts its scale changes: what tells a wake that went by unseen.
    generation: Option<i64>,
    labels: Option<BTreeMap<String, String>>,
    annotations: Option<BTreeMap<String, String>>,
    creation_timestamp: Option<Time>,
    deletion_timestamp: Option<Time>,
    deletion_grace_period_seconds: Option<i64>,
}

fn slim_meta<'de, D: Deserializer<'de>>(d: D) -> Result<ObjectMeta, D::Error> {
    let m = SlimMeta::deserialize(d)?;
    Ok(ObjectMeta {
        name: m.name,
        namespace: m.namespace,
        uid: m.uid,
        resource_version: m.resource_version,
        generation: m.generation,
        labels: m.labels,
        annotations: m.annotations,
        creation_timestamp: m.creation_timestamp,
        deletion_timestamp: m.deletion_timestamp,
        deletion_grace_period_seconds: m.deletion_grace_period_seconds,
        ..ObjectMeta::default()
    })
}

macro_rules! slim_resource {
    ($ty:ident, $kind:literal, $group:literal, $version:literal, $plural:literal) => {
        impl Resource for $ty {
            type DynamicType = ();
            type Scope = NamespaceResourceScope;
            fn kind(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($kind)
            }
            fn group(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($group)
            }
            fn version(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($version)
            }
            fn plural(_: &()) -> Cow<'_, str> {
                Cow::Borrowed($plural)
            }
            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

/// A condition as Kubernetes and Knative write it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub reason: Option<String>,
    pub message: Option<String>,
    pub last_transition_time: Option<Time>,
}

/// Conditions, looked up by type.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Conditions(pub Vec<Condition>);

impl Conditions {
    pub fn get(&self, kind: &str) -> Option<&Condition> {
        self.0.iter().find(|c| c.type_ == kind)
    }
}

fn null_as_default<'de, D: Deserializer<'de>, T: Default + Deserialize<'de>>(
    d: D,
) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

#[derive(Debug, Clone, Deserialize)]
pub struct KnativeService {
    #[serde(deserialize_with = "slim_meta")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "null_as_default")]
    pub spec: ServiceSpec,
    #[serde(default, deserialize_with = "null_as_default")]
    pub status: ServiceStatus,
}

/// The Service's spec: only its revision template's annotations, where the editor's
/// settings are applied and a hand edit shows as drift.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ServiceSpec {
    #[serde(default, deserialize_with = "null_as_default")]
    pub template: RevisionTemplate,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct RevisionTemplate {
    #[serde(default, deserialize_with = "null_as_default")]
    pub metadata: TemplateMeta,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct TemplateMeta {
    #[serde(default, deserialize_with = "null_as_default")]
    pub annotations: BTreeMap<String, String>,
}
slim_resource!(
    KnativeService,
    "Service",
    "serving.knative.dev",
    "v1",
    "services"
);

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ServiceStatus {
    #[serde(default, deserialize_with = "null_as_default")]
    pub traffic: Vec<TrafficTarget>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrafficTarget {
    pub revision_name: Option<String>,
    pub percent: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Revision {
    #[serde(deserialize_with = "slim_meta")]
    pub metadata: ObjectMeta,
}
slim_resource!(
    Revision,
    "Revision",
    "serving.knative.dev",
    "v1",
    "revisions"
);

#[derive(Debug, Clone, Deserialize)]
pub struct PodAutoscaler {
    #[serde(deserialize_with = "slim_meta")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "null_as_default")]
    pub status: PaStatus,
}
slim_resource!(
    PodAutoscaler,
    "PodAutoscaler",
    "autoscaling.internal.knative.dev",
    "v1alpha1",
    "podautoscalers"
);

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaStatus {
    pub desired_scale: Option<i32>,
    pub actual_scale: Option<i32>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub conditions: Conditions,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Deployment {
    #[serde(deserialize_with = "slim_meta")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "null_as_default")]
    pub spec: DeploymentSpec,
}
slim_resource!(Deployment, "Deployment", "apps", "v1", "deployments");

#[derive(Debug, Clone, Default, Deserialize)]
pub struct DeploymentSpec {
    pub replicas: Option<i32>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Pod {
    #[serde(deserialize_with = "slim_meta")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "null_as_default")]
    pub status: PodStatus,
}
slim_resource!(Pod, "Pod", "", "v1", "pods");

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodStatus {
    pub phase: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub conditions: Conditions,
    #[serde(default, deserialize_with = "null_as_default")]
    pub container_statuses: Vec<ContainerStatus>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStatus {
    pub name: String,
    #[serde(default)]
    pub state: Option<ContainerState>,
    #[serde(default)]
    pub last_state: Option<ContainerState>,
    #[serde(default)]
    pub restart_count: Option<i32>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerState {
    pub waiting: Option<Waiting>,
    pub running: Option<Running>,
    pub terminated: Option<Terminated>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Waiting {
    pub reason: Option<String>,
    pub message: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Running {
    pub started_at: Option<Time>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Terminated {
    pub exit_code: i32,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ConfigMap {
    #[serde(deserialize_with = "slim_meta")]
    pub metadata: ObjectMeta,
    #[serde(default, deserialize_with = "null_as_default")]
    pub data: BTreeMap<String, String>,
}
slim_resource!(ConfigMap, "ConfigMap", "", "v1", "configmaps");
