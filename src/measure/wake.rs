//! The wakes underway, and each revision's last rest, as the store keeps them.
//!
//! A finished wake is a [`scaling_facts_api::WakeRecord`], part of the wire contract. A wake
//! that has begun but not ended is this module's: it is persisted while it lasts so that a
//! restart continues it, and it is identified like a record, by its revision UID and the
//! whole second it started in. Between wakes, the state a revision was last seen at rest
//! in ([`Rest`]) is persisted too: a restart compares its lists with it, as a running
//! process compares them with its memory, to see a wake that went by unseen.

use chrono::{DateTime, Utc};
use scaling_facts_api::{Failure, WakeKind};
use serde::{Deserialize, Serialize};

/// A wake underway, kept in the store while it lasts so that a restart (even after
/// SIGKILL) continues it instead of forgetting it: its end may come while the service is
/// down, and the cluster keeps no trace of when it began.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenWake {
    pub revision_uid: String,
    pub kind: WakeKind,
    pub start_second: i64,
    pub requested_at: DateTime<Utc>,
    /// When the first of its streams fell, as the machine waits out the abort's grace
    /// for a late pod: a process killed then still knows the end, which the cluster
    /// may not show once the next wake began.
    #[serde(default)]
    pub ended_at: Option<DateTime<Utc>>,
    /// That end is only an upper bound: a replayed fall, which carries no date.
    #[serde(default)]
    pub ended_undated: bool,
    /// Why its pods were not serving, as they last showed (a pull error, a crash loop):
    /// Knative's give-up may come while the process is down and the pods are gone by its
    /// restart, and the failure still names its cause.
    #[serde(default)]
    pub trouble: Option<Failure>,
}

impl OpenWake {
    pub fn new(revision_uid: &str, u: Underway) -> Self {
        Self {
            revision_uid: revision_uid.to_owned(),
            kind: u.kind,
            start_second: u.start_second,
            requested_at: u.requested_at,
            ended_at: u.ended_at,
            ended_undated: u.ended_undated,
            trouble: u.trouble,
        }
    }

    pub fn underway(&self) -> Underway {
        Underway {
            kind: self.kind,
            requested_at: self.requested_at,
            start_second: self.start_second,
            ended_at: self.ended_at,
            ended_undated: self.ended_undated,
            trouble: self.trouble.clone(),
        }
    }
}

/// A revision's wake underway as its machine knows it, without the revision.
#[derive(Debug, Clone, PartialEq)]
pub struct Underway {
    pub kind: WakeKind,
    pub requested_at: DateTime<Utc>,
    pub start_second: i64,
    pub ended_at: Option<DateTime<Utc>>,
    pub ended_undated: bool,
    pub trouble: Option<Failure>,
}

/// A change to a revision's wakes underway, for the store: each replaces every row the
/// store holds for the revision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpenChange {
    /// Its one wake underway.
    Opened(OpenWake),
    /// It has none.
    Closed { revision_uid: String },
    /// Its wakes underway, oldest first: the older ended while a watch was down and wait
    /// for their verdicts, which a backlog still to come may give. A process killed then
    /// continues each, not only the oldest.
    Several {
        revision_uid: String,
        wakes: Vec<OpenWake>,
    },
}

impl OpenChange {
    /// The change that makes `wakes` (oldest first) the revision's wakes underway.
    pub fn of(revision_uid: &str, wakes: &[Underway]) -> Self {
        match wakes {
            [] => Self::Closed {
                revision_uid: revision_uid.to_owned(),
            },
            [one] => Self::Opened(OpenWake::new(revision_uid, one.clone())),
            several => Self::Several {
                revision_uid: revision_uid.to_owned(),
                wakes: (several.iter())
                    .map(|u| OpenWake::new(revision_uid, u.clone()))
                    .collect(),
            },
        }
    }

    pub fn revision_uid(&self) -> &str {
        match self {
            Self::Opened(w) => &w.revision_uid,
            Self::Closed { revision_uid } | Self::Several { revision_uid, .. } => revision_uid,
        }
    }

    /// The revision's wakes underway after the change, oldest first.
    pub fn wakes(&self) -> &[OpenWake] {
        match self {
            Self::Opened(w) => std::slice::from_ref(w),
            Self::Closed { .. } => &[],
            Self::Several { wakes, .. } => wakes,
        }
    }
}

/// What a revision's objects showed when it was last seen at rest: a restarted process
/// starts from it, so that a whole wake that went by while no process watched (the API
/// server away, the process rescheduled) still shows in its lists, as a Deployment whose
/// generation moved on or a PA `Active=False` condition newer than this one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rest {
    pub revision_uid: String,
    pub at: RestAt,
}

/// A revision's rest without the revision: each stream's part is None when that stream
/// was not at zero (or not yet seen) when the rest was taken. With every part None, the
/// revision was seen being created, before any of its objects rested: its initial start
/// is the service's to record, whatever a process restarted in an outage finds left of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RestAt {
    /// The Deployment's `metadata.generation` at zero, and when it was seen so.
    pub deployment: Option<(i64, DateTime<Utc>)>,
    /// The PA's `Active=False` condition at zero, and when it was seen so.
    pub autoscaler: Option<PaRest>,
    /// The start second of the last wake known to have ended when it was taken: a wake
    /// recorded with a later one is newer than this rest (which the clocks of lagging
    /// streams cannot tell).
    pub after_start: Option<i64>,
}

/// The PA's `Active=False` condition at rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaRest {
    /// `TimedOut` (Knative gave up) rather than `NoTraffic`.
    pub timed_out: bool,
    /// `ScaleTargetInitialized=True`: the revision had served.
    pub initialized: bool,
    /// Its `lastTransitionTime`.
    pub since: DateTime<Utc>,
    pub seen: DateTime<Utc>,
}
