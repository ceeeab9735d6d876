//! The editor's configuration of a release: what it asked for (`desired`), what Knative
//! runs with (`effective`), and who changed what (`audit`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

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
}

/// Desired and effective configuration of a release.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, ToSchema)]
pub struct ConfigView {
    pub release: String,
    /// Null until an editor set values.
    pub desired: Option<DesiredView>,
    /// What Knative runs with, from the revision's annotations and config-autoscaler.
    pub effective: EffectiveView,
    /// True when no desired values are set or they equal the effective ones.
    pub in_sync: bool,
    /// Newest first, at most 20.
    pub audit: Vec<AuditView>,
}
