//! What the benches share: the service's own state and accept loop around a facts book,
//! as `main` would build them, with an SQLite store in a temporary directory.

use std::sync::Arc;
use std::time::Duration;

use tempfile::TempDir;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use scaling_facts::book::FactsBook;
use scaling_facts::config::DatabaseConfig;
use scaling_facts::serve::auth::Tokens;
use scaling_facts::serve::streams::StreamLimits;
use scaling_facts::serve::{AppState, Shared, Timeouts};
use scaling_facts::store::Store;
use scaling_facts::telemetry::components::{Components, HistoryState};
use scaling_facts::telemetry::health::Readiness;
use scaling_facts::telemetry::metrics::Metrics;

/// The service's state over `book`, and the directory its store lives in (keep it).
pub async fn bench_state(
    book: Arc<FactsBook>,
    tokens: Tokens,
    allow_anonymous_reads: bool,
    streams: Arc<StreamLimits>,
) -> (AppState, TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}/bench.db?mode=rwc", dir.path().display());
    let store = Store::connect(&DatabaseConfig {
        database_url: url,
        database_url_file: None,
        database_max_connections: 2,
        database_acquire_timeout_ms: 5_000,
    })
    .await
    .expect("store");
    let components = Arc::new(Components::default());
    components.set_history(HistoryState::Loaded { wakes: 0 });
    let state = AppState::new(Shared {
        book,
        store,
        tokens,
        allow_anonymous_reads,
        readiness: Readiness::opened(),
        metrics: Arc::new(Metrics::new()),
        components,
        shutdown: CancellationToken::new(),
        batch_max_releases: 100,
        request_timeout: Duration::from_secs(5),
        max_body_bytes: 65_536,
        streams,
        trace_requests: false,
        applier: None,
        leadership: scaling_facts::service::lead::Leadership::single(),
    });
    (state, dir)
}

/// Serves the API on `listener` until the process ends.
pub async fn serve(listener: TcpListener, state: AppState) {
    let timeouts = Timeouts {
        drain: Duration::ZERO,
        grace: Duration::from_secs(1),
        header_read: Duration::from_secs(10),
    };
    scaling_facts::serve::serve(listener, state, CancellationToken::new(), timeouts)
        .await
        .expect("serve");
}
