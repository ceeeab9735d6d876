//! What the Server-Sent Event streams carry.
//!
//! Each message has an `event:` line naming its kind, a `data:` line of JSON and, for
//! changes, an `id:` line with the change's sequence number. [`StreamEvent`] describes the
//! pair of `event` and `data` for the OpenAPI document; the server writes the lines.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{ConfigDrift, Runtime};

/// One event of a stream, as `{event, data}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "event", content = "data", rename_all = "snake_case")]
pub enum StreamEvent {
    /// The release's runtime state after a change; the same JSON as the `runtime` read. A
    /// per-release stream starts with one, without an id.
    Runtime(Runtime),
    /// The release is gone; the data is its key, as a bare string.
    Removed(String),
    /// Only on the all-releases stream: the subscriber fell behind and missed changes.
    Lagged(Lagged),
    /// The Knative Service's template stopped saying what the service applied (edited by
    /// another hand), or says it again.
    ConfigDrift(ConfigDrift),
}

impl StreamEvent {
    /// The `event:` line's value.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Runtime(_) => "runtime",
            Self::Removed(_) => "removed",
            Self::Lagged(_) => "lagged",
            Self::ConfigDrift(_) => "config_drift",
        }
    }
}

/// The data of a `lagged` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Lagged {
    /// How many changes the subscriber missed; read every release again to catch up.
    pub missed: u64,
}
