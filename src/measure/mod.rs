//! The measurement layer: pure data and arithmetic, free of Kubernetes, SQL and HTTP.
//!
//! - [`wake`]: a finished wake, the unit that is stored exactly once.
//! - [`histogram`]: wake latencies in an HDR histogram and its stored encoding.
//! - [`knobs`]: a revision's effective settings from annotations, ConfigMaps and defaults.
//! - [`view`]: the facts in the shape the v1 API returns them.
//! - [`facts`]: the in-memory book of every release's facts that the API reads.

pub mod facts;
pub mod histogram;
pub mod knobs;
pub mod view;
pub mod wake;
