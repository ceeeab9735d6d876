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
    /// Each watched kind (`services`, `revisions`, `podautoscalers`, `deployments`, `pods`,
    /// `configmaps/config-autoscaler`, `configmaps/config-deployment`: each ConfigMap has a
    /// watch of its own); empty when the service does not watch Kubernetes.
    #[serde(default)]
    pub kinds: Vec<KindCheck>,
}

/// One watched kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct KindCheck {
    pub kind: String,
    /// Listed at least once since start.
    pub listed: bool,
    /// Listed, and watching without a recent error.
    pub healthy: bool,
    /// Watch errors since start.
    pub errors: u64,
    /// When the last event of this kind arrived.
    pub last_event: Option<DateTime<Utc>>,
}

/// Whether the store's history has been loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HistoryStatus {
    /// Still trying (the store is down or migrating); measuring goes on without it.
    Loading,
    Loaded,
    /// The store answered with rows this service cannot read: measuring goes on without
    /// them.
    Failed,
}

/// The history load, which runs in the background from start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HistoryCheck {
    pub status: HistoryStatus,
    /// Wakes loaded.
    pub wakes: u64,
    /// Why the last attempt failed; shown only to callers with a valid token.
    pub error: Option<String>,
}

/// How the write path is keeping up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum WritesStatus {
    /// Writes reach the store as they are made.
    Ok,
    /// Writes have waited longer than a few seconds: the store is down or slow. They are
    /// safe in the spool.
    Behind,
    /// The spool cannot be written: writes wait in memory.
    SpoolFailing,
}

/// The write path from the measuring to the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WritesCheck {
    pub status: WritesStatus,
    /// Measured writes (wakes and wakes underway) not yet in the store.
    pub queued: u64,
    /// How long writes have waited without the queue emptying, in milliseconds.
    pub behind_ms: u64,
    /// Size of the spool file.
    pub spool_bytes: u64,
    /// Writes the store refused for good, set aside in the spool's rejected file.
    pub rejected: u64,
    /// The last store or spool error; shown only to callers with a valid token.
    pub error: Option<String>,
}

/// This replica's part in writing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReplicaRole {
    /// No Lease is configured: the only replica, which writes.
    #[default]
    Single,
    /// Holds the Lease: stores wakes, applies configs, wakes dependencies.
    Leader,
    /// Measures and serves; the leader's stored rows make its statistics.
    Follower,
}

/// The writer's Lease, as this replica sees it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct LeaseCheck {
    pub role: ReplicaRole,
    /// Who holds the Lease, when another replica does (as last seen).
    pub holder: Option<String>,
    /// Milliseconds since the leader's last successful renewal was sent.
    pub renewed_ago_ms: Option<u64>,
    /// A follower's own wake records it has not yet seen the leader store.
    pub held_wakes: u64,
}

/// The body of `/health`, on 200 and 503 alike.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HealthReport {
    pub status: HealthStatus,
    pub ready: bool,
    pub releases: usize,
    pub store: StoreCheck,
    pub watch: WatchCheck,
    pub history: HistoryCheck,
    pub writes: WritesCheck,
    pub warmup: Vec<WarmupReport>,
    /// Services refused the release key they claim (see `GET /v1/releases`).
    #[serde(default)]
    pub refused_claims: usize,
    /// Whether this replica writes (more than one replica shares a Lease).
    #[serde(default)]
    pub lease: LeaseCheck,
}
