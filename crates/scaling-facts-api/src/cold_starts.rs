//! The cold-start report: per revision, what its wakes cost and how they ended, and the
//! recorded wakes themselves.
//!
//! A wake is identified by its revision UID and the whole second it started in
//! (`start_second`), which every observer derives alike from object timestamps; that is why
//! a restarted or second replica records the same wake once.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// An initial start (revision created until its first ready pod) or a wake from zero.
/// Initial starts never count toward `expected_cold_start_seconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum WakeKind {
    Initial,
    Wake,
}

/// How a wake ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A pod became ready; the only outcome that enters the histogram.
    Served,
    /// Desired replicas went back to zero before any pod was ready.
    Aborted,
    /// The wake could not complete; `failure_reason` says why.
    Failed,
}

/// How precisely the wake was timed: `ms` when the service saw the watch events as they
/// happened, `s` when it was reconstructed from whole-second object timestamps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    Ms,
    S,
}

/// Milliseconds spent in each phase; absent when the wake never reached the phase's end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PhaseDurations {
    pub provisioning_ms: Option<u64>,
    pub pulling_image_ms: Option<u64>,
    pub starting_ms: Option<u64>,
}

/// A finished wake, as stored and reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WakeRecord {
    pub release: String,
    pub revision: String,
    pub revision_uid: String,
    pub kind: WakeKind,
    pub outcome: Outcome,
    pub requested_at: DateTime<Utc>,
    /// The wake's identity with the revision UID: the whole second Kubernetes stamped on
    /// its start (the PodAutoscaler's `Active=Unknown Queued` transition, else the first
    /// pod's creation, else the revision's creation for an initial start). Taken from
    /// object timestamps, so every observer, before or after a restart, derives the same.
    pub start_second: i64,
    /// When the first pod of the wake became ready; null unless served.
    pub serving_at: Option<DateTime<Utc>>,
    /// From `requested_at` to serving (served) or to the end of the wake (otherwise).
    pub duration_ms: u64,
    pub phases: PhaseDurations,
    pub precision: Precision,
    pub failure_reason: Option<String>,
    pub failure_message: Option<String>,
    /// The release whose wake woke this one through its `scaling-facts.io/depends-on`
    /// declaration; null for a wake a caller or Knative began.
    #[serde(default)]
    pub caused_by: Option<String>,
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
    pub recent: Vec<WakeRecord>,
}

/// The cold-start report of a release.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ColdStarts {
    pub release: String,
    pub revisions: Vec<RevisionColdStarts>,
}

// The wire text of each variant, which is also how the store keeps it.
text_enum!(WakeKind { Initial => "initial", Wake => "wake" });
text_enum!(Outcome { Served => "served", Aborted => "aborted", Failed => "failed" });
text_enum!(Precision { Ms => "ms", S => "s" });

/// A text that names no known variant.
#[derive(Debug, thiserror::Error)]
#[error("unknown value {0:?}")]
pub struct UnknownValue(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips_and_matches_serde() {
        for k in [WakeKind::Initial, WakeKind::Wake] {
            assert_eq!(k.as_str().parse::<WakeKind>().unwrap(), k);
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
        }
        for o in [Outcome::Served, Outcome::Aborted, Outcome::Failed] {
            assert_eq!(o.to_string().parse::<Outcome>().unwrap(), o);
            assert_eq!(serde_json::to_value(o).unwrap(), o.as_str());
        }
        for p in [Precision::Ms, Precision::S] {
            assert_eq!(serde_json::to_value(p).unwrap(), p.as_str());
        }
        assert_eq!("s".parse::<Precision>().unwrap(), Precision::S);
        assert!("minutes".parse::<Precision>().is_err());
    }
}
