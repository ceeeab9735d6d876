//! One recorded wake: the unit of measurement, persisted once per wake.
//!
//! A wake is identified by its revision UID and the whole second it started in. That key
//! is what makes recording idempotent: a restarted service, a relist after `410 Gone`, or a
//! second replica that reconstructs the same wake all produce the same key, and the store
//! keeps the first.

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

/// How precisely the wake was timed: `ms` when this service saw the watch events as they
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
}

/// A wake underway, kept in the store while it lasts so that a restart (even after
/// SIGKILL) continues it instead of forgetting it: its end may come while the service is
/// down, and the cluster keeps no trace of when it began.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenWake {
    pub revision_uid: String,
    pub kind: WakeKind,
    pub start_second: i64,
    pub requested_at: DateTime<Utc>,
}

/// A change to the wakes underway, for the store.
#[derive(Debug, Clone, PartialEq)]
pub enum OpenChange {
    Opened(OpenWake),
    Closed { revision_uid: String },
}

macro_rules! text_enum {
    ($ty:ty { $($variant:ident => $text:literal),+ $(,)? }) => {
        impl $ty {
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

text_enum!(WakeKind { Initial => "initial", Wake => "wake" });
text_enum!(Outcome { Served => "served", Aborted => "aborted", Failed => "failed" });
text_enum!(Precision { Ms => "ms", S => "s" });

/// A stored text that names no known variant.
#[derive(Debug, thiserror::Error)]
#[error("unknown value {0:?}")]
pub struct UnknownValue(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips() {
        for k in [WakeKind::Initial, WakeKind::Wake] {
            assert_eq!(k.as_str().parse::<WakeKind>().unwrap(), k);
        }
        for o in [Outcome::Served, Outcome::Aborted, Outcome::Failed] {
            assert_eq!(o.to_string().parse::<Outcome>().unwrap(), o);
        }
        assert_eq!("s".parse::<Precision>().unwrap(), Precision::S);
        assert!("minutes".parse::<Precision>().is_err());
    }
}
