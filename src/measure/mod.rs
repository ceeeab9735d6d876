//! The measurement layer: pure data and arithmetic, free of Kubernetes, SQL and HTTP.
//!
//! - [`wake`]: a finished wake, the unit that is stored exactly once.
//! - [`histogram`]: wake latencies in an HDR histogram and its stored encoding.
//! - [`knobs`]: a revision's effective settings from annotations, ConfigMaps and defaults.
//! - [`observe`]: what the watcher reports, as plain snapshots with their versions and
//!   arrival stamps, and the typed keys of services and revisions;
//! - [`machine`]: the per-revision wake state machine, deciding from evidence each object
//!   orders by itself; [`machine::dating`] is the one place that dates a change;
//! - [`stats`]: per-revision windows, histograms and reports;
//! - [`tracker`]: every revision's machine and stats, and the release facts they make;
//! - [`view`]: the facts in the shape the v1 API returns them;
//! - [`facts`]: the in-memory book of every release's facts that the API reads.

pub mod facts;
pub mod histogram;
pub mod knobs;
pub mod machine;
pub mod observe;
pub mod stats;
pub mod tracker;
pub mod view;
pub mod wake;
