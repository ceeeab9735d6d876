//! The wakes underway, as the store keeps them.
//!
//! A finished wake is a [`scaling_facts_api::WakeRecord`], part of the wire contract. A wake
//! that has begun but not ended is this module's: it is persisted while it lasts so that a
//! restart continues it, and it is identified like a record, by its revision UID and the
//! whole second it started in.

use chrono::{DateTime, Utc};
use scaling_facts_api::WakeKind;
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
}

/// A change to the wakes underway, for the store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpenChange {
    Opened(OpenWake),
    Closed { revision_uid: String },
}
