//! A simulated Knative cluster that speaks the Kubernetes API on loopback, so the
//! production watcher (kube-rs) runs unchanged against it, with the truth of every wake
//! known.
//!
//! - [`resources`], [`selector`], [`objects`]: the API server's kinds, label selectors,
//!   storage with one resourceVersion and a bounded history;
//! - [`audit`]: every distinct request, as RBAC sees it;
//! - [`managed`]: field managers and server-side apply conflicts;
//! - [`api`]: list, watch, get, create, replace, patch, delete, status, over HTTP;
//! - [`knative`], [`control`], [`lifecycle`]: Knative and the kubelet in miniature;
//! - [`truth`], [`faults`], [`scenario`]: ground truth, fault injection, scenario files;
//! - [`settings`]: the control plane's own reading of Knative's settings;
//! - [`cluster`], [`admin`]: the handle, the server, the activator and admin endpoints;
//! - [`scenarios`]: the scenario files shipped with the crate.
//!
//! It shares nothing with the service it exercises but the wire contract
//! (`scaling_facts_api`, for the outcomes of its ground truth and the deadline header): its
//! reading of Knative's settings is its own, so that a misreading in the service is caught
//! by a disagreement instead of being copied.

pub mod admin;
pub mod api;
pub mod audit;
pub mod cluster;
pub mod control;
pub mod faults;
pub mod knative;
pub mod lifecycle;
pub mod managed;
pub mod objects;
pub mod resources;
pub mod scenario;
pub mod selector;
pub mod settings;
pub mod truth;

/// The scenario files under `scenarios/`, embedded so that a binary needs no files beside it.
pub mod scenarios {
    /// The demo's releases: sub-second, ~2.5 s and ~6 s starts, a chain of three, a broken one.
    pub const DEMO: &str = include_str!("../scenarios/demo.yaml");
    /// Two services with different cold-start profiles and one that cannot wake.
    pub const BASIC: &str = include_str!("../scenarios/basic.yaml");
    /// 10,000 revisions, for the initial-sync and memory benchmarks.
    pub const SCALE_10K: &str = include_str!("../scenarios/scale-10k.yaml");
}

pub use cluster::{Cluster, Simulator};
pub use scenario::Scenario;
