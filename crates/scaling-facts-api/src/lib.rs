//! The v1 wire contract of scaling-facts, and nothing else.
//!
//! The service serializes these types, the client deserializes them, the simulator names the
//! outcomes of its ground truth with them, and the OpenAPI document is generated from their
//! `utoipa` derives. Keeping them in one crate with no server code is what lets a caller
//! depend on the contract without compiling the service.
//!
//! - [`scaling`]: the four scaling facts of ADR 0041 §1 and the batch read;
//! - [`runtime`]: the read that never wakes anything, and its phases;
//! - [`cold_starts`]: the per-revision report and the recorded wakes in it;
//! - [`config`]: the editor's desired values, the effective ones and the audit trail;
//! - [`releases`]: the release list;
//! - [`events`]: what each Server-Sent Event carries;
//! - [`health`]: liveness, readiness and the detailed health report;
//! - [`error`]: the one error body and its stable [`ErrorCode`]s;
//! - [`examples`]: the example values the OpenAPI document shows.
//!
//! Compatibility within v1: fields are never renamed or removed, and new fields may appear,
//! so readers must ignore what they do not know (none of these types denies unknown fields
//! on reading, except the two request bodies, which the server checks strictly). New error
//! codes may appear too: [`ErrorCode`] is `#[non_exhaustive]`, and an older reader takes a
//! newer code for [`ErrorCode::Unrecognized`]. The other enums (states, phases, outcomes)
//! change only with a new version of the API.

/// `as_str`, `Display`, `FromStr` and `ALL` for an enum whose serde names are snake_case
/// texts: the store keeps them as those texts, and metrics label by them.
macro_rules! text_enum {
    ($ty:ty { $($variant:ident => $text:literal),+ $(,)? }) => {
        impl $ty {
            /// Every variant, for whoever must name each one (a metric's label values).
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $text),+ }
            }
        }
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl FromStr for $ty {
            type Err = UnknownValue;
            fn from_str(s: &str) -> Result<Self, UnknownValue> {
                match s {
                    $($text => Ok(Self::$variant),)+
                    other => Err(UnknownValue(other.to_owned())),
                }
            }
        }
    };
}

pub mod cold_starts;
pub mod config;
pub mod error;
pub mod events;
pub mod examples;
pub mod health;
pub mod releases;
pub mod runtime;
pub mod scaling;

pub use cold_starts::{
    ColdStarts, HistogramBucket, Outcome, OutcomeCounts, Percentiles, PhaseBreakdown,
    PhaseDurations, Precision, RevisionColdStarts, UnknownValue, WakeKind, WakeRecord,
};
pub use config::{
    AppliedView, ApplyState, ApplyView, AuditView, ConfigDrift, ConfigUpdate, ConfigValues,
    ConfigView, DesiredView, EffectiveView, TemplateView,
};
pub use error::{ErrorBody, ErrorCode};
pub use events::{Lagged, StreamEvent};
pub use health::{
    Alive, AliveStatus, HealthReport, HealthStatus, HistoryCheck, HistoryStatus, KindCheck,
    LeaseCheck, ReadyReport, ReplicaRole, StoreCheck, StoreStatus, WarmupOutcome, WarmupReport,
    WatchCheck, WritesCheck, WritesStatus,
};
pub use releases::{RefusedClaim, ReleaseList, ReleaseSummary};
pub use runtime::{
    ActiveRevision, Failure, Phase, Runtime, RuntimePresence, RuntimeState, WakeProgress,
};
pub use scaling::{BatchScalingRequest, BatchScalingResponse, Scaling};

/// The deadline header (ADR 0041 §6): milliseconds the caller will still wait. A caller
/// forwards it on every hop so that a chain of calls shares one budget.
pub const DEADLINE_HEADER: &str = "Mainsequence-Request-Timeout-Ms";

/// The request id header: accepted from the caller when short and plain, made up otherwise,
/// and echoed on every response, errors included, so that logs join up across hops.
pub const REQUEST_ID_HEADER: &str = "x-request-id";
