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

/// Every known release, sorted by key.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, ToSchema)]
pub struct ReleaseList {
    pub releases: Vec<ReleaseSummary>,
}
