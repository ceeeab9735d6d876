//! The facts as callers see them: the `scaling` object of ADR 0041 §1, the non-waking
//! runtime read, and the cold-start report.
//!
//! These types are the wire contract of the v1 API, so they live in the pure layer where
//! both the producers of facts (the watcher, tests) and the HTTP layer can name them. Field
//! names are never renamed; new fields may be added, and readers must tolerate them.

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

/// Whether a request sent now would be served without waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RuntimeState {
    /// Every active revision has a ready pod.
    Ready,
    /// A wake is in progress.
    Waking,
    /// Scaled to zero; a request would wake it.
    Idle,
    /// The last wake failed; see `runtime_presence.failure`.
    Unavailable,
}

/// Where a wake stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Idle,
    /// Wake requested, no pod scheduled yet.
    Provisioning,
    /// Pod scheduled, serving container not running yet (image pull and container creation).
    PullingImage,
    /// Container running, pod not ready yet.
    Starting,
    Serving,
    Failed,
}

/// The wake in progress (or the one that just failed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WakeProgress {
    /// When the first sign of the wake reached this service.
    pub requested_at: DateTime<Utc>,
    /// When Knative gives up on it: progress deadline + 30 s after `requested_at`.
    pub deadline_at: DateTime<Utc>,
    /// Milliseconds since `requested_at`, at the time of the read.
    #[serde(default)]
    pub elapsed_ms: u64,
}

/// Why the last wake failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Failure {
    /// Kubernetes or Knative reason, e.g. `ImagePullBackOff`, `CrashLoopBackOff`, `TimedOut`.
    pub reason: String,
    pub message: String,
}

/// What is running, as the Kubernetes API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RuntimePresence {
    pub phase: Phase,
    pub desired_replicas: u32,
    pub actual_replicas: u32,
    pub wake: Option<WakeProgress>,
    pub failure: Option<Failure>,
}

/// A revision receiving untagged traffic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ActiveRevision {
    pub name: String,
    pub percent: u32,
}

/// The non-waking runtime read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Runtime {
    pub release: String,
    pub state: RuntimeState,
    /// While waking: how long a caller should wait before asking again, the remaining
    /// expected start, never below 100. Null otherwise.
    pub retry_after_ms: Option<u64>,
    pub runtime_presence: RuntimePresence,
    pub scaling: Scaling,
    /// Upper bound of the idle window: stable window + scale-down delay + max(retention,
    /// grace period).
    pub idle_timeout_upper_bound_seconds: f64,
    pub active_revisions: Vec<ActiveRevision>,
    /// When these facts were last confirmed by the Kubernetes API.
    pub observed_at: DateTime<Utc>,
    /// True while the watch is disconnected or behind.
    pub stale: bool,
}

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Percentiles {
    pub count: u64,
    pub p50_ms: u64,
    pub p90_ms: u64,
    pub p95_ms: u64,
    pub p99_ms: u64,
    pub max_ms: u64,
}

/// Percentiles of each phase of served wakes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PhaseBreakdown {
    pub provisioning: Option<Percentiles>,
    pub pulling_image: Option<Percentiles>,
    pub starting: Option<Percentiles>,
}

/// Number of wakes by outcome; initial starts are counted apart.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct OutcomeCounts {
    pub served: u64,
    pub aborted: u64,
    pub failed: u64,
    pub initial: u64,
}

/// One bar of the served-wake histogram: wakes that took at most `le_ms`, above the
/// previous bar's bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct HistogramBucket {
    pub le_ms: u64,
    pub count: u64,
}

/// The cold-start report of one revision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RevisionColdStarts {
    pub revision: String,
    pub revision_uid: String,
    /// Receives traffic now.
    pub active: bool,
    pub counts: OutcomeCounts,
    /// Served wakes within the window; null until the first one.
    pub served: Option<Percentiles>,
    pub phases: PhaseBreakdown,
    pub buckets: Vec<HistogramBucket>,
    /// Newest first.
    pub recent: Vec<crate::measure::wake::WakeRecord>,
}

/// The cold-start report of a release.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ColdStarts {
    pub release: String,
    pub revisions: Vec<RevisionColdStarts>,
}
