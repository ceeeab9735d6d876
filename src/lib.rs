//! scaling-facts measures how long Knative revisions take to wake from zero and serves the
//! facts callers need to wait for them well.
//!
//! Data flows one way through the layers:
//!
//! - [`watch`] (Kubernetes, kube-rs) turns watch events into observations, and holds the
//!   Lease that picks the one writer among replicas;
//! - [`measure`] is pure: wakes, histograms and each release's facts, with no locks;
//! - [`book`] holds every release's facts for readers ([`book::FactsBook`]), serialized
//!   when they change, and broadcasts each change;
//! - [`store`] is the only place with SQL (SQLite or PostgreSQL through sqlx);
//! - [`serve`] is the axum HTTP API that reads the book and the store.
//!
//! Around them: [`config`] (the one clap configuration), [`telemetry`] (logs, Prometheus
//! metrics, the readiness gate), [`service`] (start-up, warm-up, readiness and shutdown,
//! wired to one cancellation token, the measuring engine, the write path with its spool,
//! and who writes: the only replica, or the Lease holder, every replica following the rows)
//! and, with the default feature `sim`, `demo` (the one-command demo) and `soak` (the
//! simulator, the service and faults for N minutes, compared with the truth).
//!
//! The wire contract is the crate `scaling_facts_api`, which every layer names its facts
//! with; the typed client (`scaling_facts_client`) and the simulated cluster
//! (`scaling_facts_sim`) are crates of their own that depend on the contract and on nothing
//! here.

pub mod book;
pub mod config;
#[cfg(feature = "sim")]
pub mod demo;
pub mod measure;
pub mod serve;
pub mod service;
#[cfg(feature = "sim")]
pub mod soak;
pub mod store;
pub mod telemetry;
pub mod watch;
