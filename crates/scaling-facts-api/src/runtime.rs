//! The runtime read: whether a request sent now would wait, and for what, read without
//! waking anything. The same JSON is the data of every `runtime` event.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::Scaling;

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
