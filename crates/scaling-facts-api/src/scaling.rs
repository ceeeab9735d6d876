//! The scaling facts (ADR 0041 §1): what the gateway reads on every runtime-access call, one
//! release at a time or many at once.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The four scaling facts of a release (ADR 0041 §1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Scaling {
    /// Replicas kept when idle; 0 means the release scales to zero.
    pub min_instances: u32,
    /// Guaranteed minimum time the last replica stays after its last request: stable window
    /// + scale-down delay + pod retention.
    pub idle_timeout_seconds: f64,
    /// Measured time from wake request to serving: the configured percentile over recent
    /// served wakes of the active revision(s). Null until measured.
    #[schema(required = true)]
    pub expected_cold_start_seconds: Option<f64>,
    /// When the oldest current ready pod began serving; null at zero replicas.
    #[schema(required = true)]
    pub serving_since: Option<DateTime<Utc>>,
}

/// Body of the batch read.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchScalingRequest {
    /// Release keys, 1 to 1000 (the service's default limit); duplicates are answered once.
    #[schema(min_items = 1, max_items = 1000)]
    pub releases: Vec<String>,
}

/// Answer of the batch read.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, ToSchema)]
pub struct BatchScalingResponse {
    /// Scaling facts by release key, for every known release asked for.
    pub scaling: BTreeMap<String, Scaling>,
    /// The keys asked for that no release has.
    pub unknown: Vec<String>,
}
