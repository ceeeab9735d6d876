//! The operations reads: liveness, readiness (ADR-025) and the detailed health report.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The body of `/alive`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Alive {
    /// Always `alive`.
    pub status: AliveStatus,
}

/// The one value of [`Alive::status`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AliveStatus {
    Alive,
}

/// How a warm-up task ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case", tag = "status", content = "detail")]
pub enum WarmupOutcome {
    Pending,
    Ok,
    /// The detail says why.
    Failed(String),
    TimedOut,
}

/// One warm-up task and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct WarmupReport {
    pub task: String,
    #[serde(flatten)]
    pub outcome: WarmupOutcome,
    /// Null while pending.
    pub took_ms: Option<u64>,
}

/// The body of `/health/ready`, on 200 and 503 alike.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ReadyReport {
    pub ready: bool,
    pub warmup: Vec<WarmupReport>,
}

/// Overall health.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HealthStatus {
    Ok,
    /// A dependency is down; reads are still served.
    Degraded,
    Starting,
    Stopping,
}

/// Whether the store answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StoreStatus {
    Up,
    Down,
}

/// The store's check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StoreCheck {
    pub status: StoreStatus,
    /// `sqlite` or `postgres`.
    pub backend: String,
    pub latency_ms: u64,
    /// Why the store did not answer; shown only to callers with a valid token.
    pub error: Option<String>,
}

/// The Kubernetes watch's check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WatchCheck {
    pub connected: bool,
    pub last_heard: Option<DateTime<Utc>>,
    pub stale: bool,
}

/// The body of `/health`, on 200 and 503 alike.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HealthReport {
    pub status: HealthStatus,
    pub ready: bool,
    pub releases: usize,
    pub store: StoreCheck,
    pub watch: WatchCheck,
    pub warmup: Vec<WarmupReport>,
    /// Services refused the release key they claim (see `GET /v1/releases`).
    #[serde(default)]
    pub refused_claims: usize,
}
