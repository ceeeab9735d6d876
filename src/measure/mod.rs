//! The measurement layer: pure data and arithmetic, free of Kubernetes, SQL and HTTP.
//!
//! - [`wake`]: a wake underway, kept in the store until it ends (a finished one is the
//!   wire contract's `WakeRecord`, stored exactly once).
//! - [`histogram`]: wake latencies in an HDR histogram, and the packed form a revision
//!   keeps them in between wakes.
//! - [`knobs`]: a revision's effective settings from annotations, ConfigMaps and defaults.
//! - [`observe`]: what the watcher reports, as plain snapshots with their versions and
//!   arrival stamps, and the typed keys of services and revisions;
//! - [`owners`]: which Service owns a release key that several claim;
//! - [`machine`]: the per-revision wake state machine, deciding from evidence each object
//!   orders by itself; [`machine::dating`] is the one place that dates a change;
//! - [`stats`]: per-revision windows, histograms and reports;
//! - [`tracker`]: every revision's machine and stats, and the release facts they make;
//! - [`depends`]: the releases a release declares it calls, and which to wake with it;
//! - [`facts`]: a release's facts, ready to be put in the shape the v1 API returns
//!   (`scaling_facts_api`).

pub mod depends;
pub mod facts;
pub mod histogram;
pub mod knobs;
pub mod machine;
pub mod observe;
pub mod owners;
pub mod stats;
pub mod tracker;
pub mod wake;
