//! scaling-facts measures how long Knative revisions take to wake from zero and serves the
//! facts callers need to wait for them well.
//!
//! Data flows one way through the layers:
//!
//! - `watch` (Kubernetes, a later issue) turns watch events into transitions;
//! - [`measure`] is pure: wakes, histograms, and the in-memory [`measure::facts::FactsBook`];
//! - [`store`] is the only place with SQL (SQLite or PostgreSQL through sqlx);
//! - [`serve`] is the axum HTTP API that reads the book and the store.
//!
//! Around them: [`config`] (the one clap configuration), [`telemetry`] (logs and
//! Prometheus metrics) and [`service`] (start-up, warm-up, readiness and shutdown, wired
//! to one cancellation token).

pub mod client;
pub mod config;
pub mod measure;
pub mod serve;
pub mod service;
pub mod sim;
pub mod store;
pub mod telemetry;
pub mod watch;
