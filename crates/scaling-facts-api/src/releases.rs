//! The release list: every release the service knows, with where it stands.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{Phase, RuntimeState};

/// One line of the release list.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, ToSchema)]
pub struct ReleaseSummary {
    /// The release key: its release-UID label, else `<service>.<namespace>`.
    pub release: String,
    pub namespace: String,
    pub service: String,
    pub state: RuntimeState,
    pub phase: Phase,
}

/// A Service refused a release key because another, created earlier, owns it: its facts
/// are not served under the key, and its wakes are recorded under
/// `<service>.<namespace>`. Fix its release-UID label.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
pub struct RefusedClaim {
    /// The key both claim.
    pub release: String,
    pub namespace: String,
    pub service: String,
    pub owner_namespace: String,
    pub owner_service: String,
}

/// Every known release, sorted by key.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, ToSchema)]
pub struct ReleaseList {
    pub releases: Vec<ReleaseSummary>,
    /// Services refused the release key they claim.
    #[serde(default)]
    pub refused_claims: Vec<RefusedClaim>,
}
