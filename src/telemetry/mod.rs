//! Logs, metrics and the service's own health.
//!
//! - this module: the `tracing` subscriber (JSON lines in production, text in a terminal);
//! - [`metrics`]: Prometheus metrics with bounded labels (route, never a release key);
//! - [`http`]: the per-request series, with a slot per series so that a request does not
//!   hash its labels;
//! - [`health`]: the readiness gate of ADR-025 and the warm-up tasks that open it;
//! - [`components`]: what the watchers, the history load and the writer report of
//!   themselves, for `/health`;
//! - [`ErrorChain`]: an error with its causes on one log line.

pub mod components;
mod error_chain;
pub mod health;
pub mod http;
pub mod metrics;

pub use error_chain::ErrorChain;

use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Installs the global subscriber; `RUST_LOG` overrides the default `info` level. A
/// second call (tests, the demo running several parts) keeps the first subscriber.
pub fn init_logging(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    let _ = match format {
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .try_init(),
        LogFormat::Text => builder.try_init(),
    };
}
