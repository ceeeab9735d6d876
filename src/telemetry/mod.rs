//! Logs, metrics and the service's own health.
//!
//! - [`logs`]: the `tracing` subscriber (JSON lines with trace ids in production, text in
//!   a terminal);
//! - [`traces`]: OpenTelemetry spans per request and per recorded wake, over OTLP when
//!   configured, and nothing at all when not;
//! - [`metrics`]: Prometheus metrics with bounded labels (route, never a release key);
//! - [`http`]: the per-request series, with a slot per series so that a request does not
//!   hash its labels;
//! - [`wakes`]: the log line, metrics and span of each recorded wake;
//! - [`health`]: the readiness gate of ADR-025 and the warm-up tasks that open it;
//! - [`components`]: what the watchers, the history load and the writer report of
//!   themselves, for `/health`;
//! - [`ErrorChain`]: an error with its causes on one log line.

pub mod components;
mod error_chain;
pub mod health;
pub mod http;
pub mod logs;
pub mod metrics;
pub mod traces;
pub mod wakes;

pub use error_chain::ErrorChain;

pub use logs::{init, init_logging};
