//! The editor's configuration of a release: what it asked for (`desired`), what the service
//! applied to the Knative Service (`applied`, `apply`), what Knative runs with
//! (`effective`), whether the Service was edited by hand since (`drift`), and who changed
//! what (`audit`).

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::UnknownValue;

/// Body of `PUT config`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfigUpdate {
    /// Replicas kept when idle, 0 to 1000.
    #[schema(maximum = 1000)]
    pub min_instances: u32,
    /// Guaranteed idle window in whole seconds: at least the revision's stable window plus
    /// scale-down delay, at most that plus 3600. The bounds here are Knative's widest (a
    /// stable window of 6 s to 1 h, a delay and a retention of up to 1 h each); a value
    /// outside the revision's own range is refused with 422 naming it.
    #[schema(minimum = 6, maximum = 10800)]
    pub idle_timeout_seconds: u32,
}

/// What an editor last asked for.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, ToSchema)]
pub struct DesiredView {
    pub min_instances: u32,
    pub idle_timeout_seconds: u32,
    pub updated_by: String,
    pub updated_at: DateTime<Utc>,
}

/// What Knative runs with.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, ToSchema)]
pub struct EffectiveView {
    pub min_instances: u32,
    pub idle_timeout_seconds: f64,
}

/// One side of an audited change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
pub struct ConfigValues {
    pub min_instances: u32,
    pub idle_timeout_seconds: u32,
}

/// One change of the desired values.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, ToSchema)]
pub struct AuditView {
    pub actor: String,
    pub request_id: String,
    pub changed_at: DateTime<Utc>,
    /// Null for the first change of a release.
    pub old: Option<ConfigValues>,
    pub new: ConfigValues,
    /// What became of applying this change to the Knative Service.
    pub apply_state: ApplyState,
    /// Why it was not applied: the conflict, the refusal, or the last error.
    pub apply_message: Option<String>,
}

/// Where applying the desired values to the Knative Service stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApplyState {
    /// Applying is off (`SCALING_FACTS_APPLY_CONFIG`): the values are stored only.
    NotApplied,
    /// Stored, the apply not yet tried.
    Pending,
    /// The Knative Service's template carries the values.
    Applied,
    /// The API server could not take the apply; it is tried again with backoff.
    Retrying,
    /// Another field manager set one of the annotations to another value; nothing was
    /// overwritten. Resolve it in the cluster, then `PUT` again.
    Conflict,
    /// Refused for good (the Service is gone, or the service may not patch it).
    Failed,
    /// A later change replaced this one before it was applied.
    Superseded,
}

/// The two template annotations as the service last applied them, verbatim.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, ToSchema)]
pub struct AppliedView {
    /// `autoscaling.knative.dev/min-scale`.
    pub min_scale: String,
    /// `autoscaling.knative.dev/scale-to-zero-pod-retention-period`: the idle window
    /// asked for less the stable window and the scale-down delay.
    pub retention: String,
    pub applied_at: DateTime<Utc>,
}

/// The same two annotations as the Knative Service's template has them now.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, ToSchema)]
pub struct TemplateView {
    pub min_scale: Option<String>,
    pub retention: Option<String>,
}

/// How applying the desired values went.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, ToSchema)]
pub struct ApplyView {
    pub state: ApplyState,
    /// The conflict (naming the other field manager and field), the refusal, or the last
    /// error; null once applied.
    pub message: Option<String>,
    pub attempts: u32,
    pub last_attempt_at: Option<DateTime<Utc>>,
}

/// The data of a `config_drift` event: the Knative Service's template stopped (or went
/// back to) saying what the service applied.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, ToSchema)]
pub struct ConfigDrift {
    pub release: String,
    /// True when the template differs from what was applied.
    pub drift: bool,
    pub applied: AppliedView,
    pub template: TemplateView,
}

/// Desired, applied and effective configuration of a release.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, ToSchema)]
pub struct ConfigView {
    pub release: String,
    /// Null until an editor set values.
    pub desired: Option<DesiredView>,
    /// How applying the desired values went; null until an editor set values.
    pub apply: Option<ApplyView>,
    /// What the service last applied to the Knative Service; null if it never did.
    pub applied: Option<AppliedView>,
    /// The Knative Service template's two annotations now.
    pub template: TemplateView,
    /// True when the template no longer says what was applied: the Service was edited
    /// by another hand since.
    pub drift: bool,
    /// What Knative runs with, from the revision's annotations and config-autoscaler.
    pub effective: EffectiveView,
    /// True when no desired values are set or they equal the effective ones.
    pub in_sync: bool,
    /// Newest first, at most 20.
    pub audit: Vec<AuditView>,
}

text_enum!(ApplyState {
    NotApplied => "not_applied",
    Pending => "pending",
    Applied => "applied",
    Retrying => "retrying",
    Conflict => "conflict",
    Failed => "failed",
    Superseded => "superseded",
});
