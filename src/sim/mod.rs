//! A simulated Knative cluster that speaks the Kubernetes API on loopback, so the
//! production watcher (kube-rs) runs unchanged against it, with the truth of every wake
//! known.
//!
//! - [`resources`], [`selector`], [`objects`]: the API server's kinds, label selectors,
//!   storage with one resourceVersion and a bounded history;
//! - [`api`]: list, watch, get, create, replace, patch, delete, status, over HTTP;
//! - [`knative`], [`control`], [`lifecycle`]: Knative and the kubelet in miniature;
//! - [`truth`], [`faults`], [`scenario`]: ground truth, fault injection, scenario files;
//! - [`settings`]: the control plane's own reading of Knative's settings;
//! - [`cluster`], [`admin`]: the handle, the server, the activator and admin endpoints.

pub mod admin;
pub mod api;
pub mod cluster;
pub mod control;
pub mod faults;
pub mod knative;
pub mod lifecycle;
pub mod objects;
pub mod resources;
pub mod scenario;
pub mod selector;
pub mod settings;
pub mod truth;

pub use cluster::{Cluster, Simulator};
pub use scenario::Scenario;
