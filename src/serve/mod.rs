//! The HTTP API (axum): the v1 reads and writes of README, "Endpoints", operations endpoints and the
//! OpenAPI document.
//!
//! [`routes`] is the one table of routes, from which both the router and the OpenAPI
//! document are built; [`app`] makes the whole router from an [`AppState`], so tests drive
//! it with `tower::ServiceExt::oneshot` and [`serve`] runs the same router on a socket.
//!
//! - [`releases`]: `scaling`, `runtime`, the batch read, `cold-starts`, the release list;
//! - [`config`]: the editor's `min_instances` and `idle_timeout_seconds`;
//! - [`events`]: Server-Sent Events of runtime changes;
//! - [`ops`]: `/alive`, `/health/ready`, `/health`, `/metrics`, `/openapi.json`;
//! - [`auth`], [`json`], [`request`], [`error`], [`streams`]: the plumbing every route
//!   shares.

pub mod auth;
pub mod config;
pub mod error;
pub mod events;
pub mod json;
pub mod openapi;
pub mod ops;
pub mod releases;
pub mod request;
pub mod streams;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower_http::timeout::TimeoutLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::book::FactsBook;
use crate::store::Store;
use crate::telemetry::health::Readiness;
use crate::telemetry::metrics::Metrics;
use auth::Tokens;
use error::ApiError;

/// What every handler can reach. Cheap to clone.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

pub struct Shared {
    pub book: Arc<FactsBook>,
    pub store: Store,
    pub tokens: Tokens,
    pub allow_anonymous_reads: bool,
    pub readiness: Arc<Readiness>,
    pub metrics: Arc<Metrics>,
    /// What the watchers, the history load and the writer report, for `/health`.
    pub components: Arc<crate::telemetry::components::Components>,
    /// Cancelled at shutdown: event streams end, readiness closes.
    pub shutdown: CancellationToken,
    pub batch_max_releases: usize,
    pub request_timeout: Duration,
    pub max_body_bytes: usize,
    /// The caps on open event streams.
    pub streams: Arc<streams::StreamLimits>,
    /// A span per request, joined to the caller's `traceparent` (traces are on).
    pub trace_requests: bool,
    /// Applies `PUT config` to Knative Services, when applying is on.
    pub applier: Option<Arc<crate::service::apply::ConfigApplier>>,
    /// Whether this replica writes: its role in `/health` and the metrics.
    pub leadership: crate::service::lead::Leadership,
}

impl std::ops::Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

impl AppState {
    pub fn new(shared: Shared) -> Self {
        Self(Arc::new(shared))
    }
}

/// Every route, declared once: the router serves these handlers and the OpenAPI document
/// is collected from their annotations, so the two cannot disagree.
pub fn routes() -> OpenApiRouter<AppState> {
    answered_from_memory().merge(waiting_on_the_store())
}

/// Routes whose handlers never wait: they read the facts book (or the registry, or a
/// constant) and answer. A timeout would only add a timer to every request.
fn answered_from_memory() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(releases::list))
        .routes(routes!(releases::scaling))
        .routes(routes!(releases::runtime))
        .routes(routes!(releases::cold_starts))
        .routes(routes!(events::release_events))
        .routes(routes!(releases::batch_scaling))
        .routes(routes!(events::all_events))
        .routes(routes!(ops::alive))
        .routes(routes!(ops::ready))
        .routes(routes!(ops::health))
        .routes(routes!(ops::metrics))
        .routes(routes!(ops::openapi))
}

/// Routes that wait on the store: [`app`] bounds them by the request timeout.
fn waiting_on_the_store() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(config::get_config, config::put_config))
}

/// The whole API: the router inside the [`request::Envelope`].
pub fn app(state: AppState) -> request::Envelope<Router> {
    // Bounds the time to response headers (503 when it passes); streams, once started,
    // are ended by the shutdown token instead.
    let bounded = waiting_on_the_store().route_layer(TimeoutLayer::with_status_code(
        StatusCode::SERVICE_UNAVAILABLE,
        state.request_timeout,
    ));
    let (router, doc) = answered_from_memory().merge(bounded).split_for_parts();
    state
        .metrics
        .http
        .prepare(doc.paths.paths.keys().map(String::as_str));
    let metrics = state.metrics.clone();
    let traced = state.trace_requests;
    request::Envelope::new(router.fallback(no_route).with_state(state), metrics, traced)
}

async fn no_route(req: Request) -> ApiError {
    ApiError::NoRoute {
        path: req.uri().path().to_owned(),
    }
}

/// How long connections are given to read a request's headers, and how long a connection
/// may sit idle (before its first request, or between requests) before it is closed.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// After `shutdown`, the listener keeps accepting this long (readiness already answers
    /// 503, so load balancers take the replica out before its connections are refused).
    pub drain: Duration,
    /// Then open connections get this long to finish.
    pub grace: Duration,
    /// A request's headers must arrive within this, counted from when the connection
    /// starts waiting for them: a silent connection, an idle keep-alive one and one that
    /// trickles a byte at a time are all closed after it.
    pub header_read: Duration,
}

/// Serves the API on `listener` until `shutdown` is cancelled and the drain delay has
/// passed, then gives open connections the grace to finish before returning anyway.
///
/// The accept loop is written out, rather than `axum::serve`, to give hyper a timer: its
/// header-read timeout needs one, and without it a connection that never sends a request
/// is held forever. HTTP/1.1 only, which is what callers of this API speak.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: CancellationToken,
    timeouts: Timeouts,
) -> std::io::Result<()> {
    let router = app(state);
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(timeouts.header_read)
        .keep_alive(true);
    let graceful = GracefulShutdown::new();
    let drained = async {
        shutdown.cancelled().await;
        tracing::info!(
            drain_ms = timeouts.drain.as_millis() as u64,
            "readiness closed; draining before the listener closes"
        );
        tokio::time::sleep(timeouts.drain).await;
    };
    tokio::pin!(drained);
    loop {
        let (tcp, _peer) = tokio::select! {
            () = &mut drained => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors, most likely: wait a little rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // Each event of a stream is one small write: with Nagle's algorithm it would wait
        // for the ACK of the one before, which the peer may delay by tens of milliseconds.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::warn!(error = %e, "cannot set TCP_NODELAY");
        }
        let service = TowerToHyperService::new(router.clone());
        let conn = graceful.watch(http.serve_connection(TokioIo::new(tcp), service));
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => Ok(()),
        () = tokio::time::sleep(timeouts.grace) => {
            tracing::warn!(grace_ms = timeouts.grace.as_millis() as u64, "connections still open after the shutdown grace; exiting anyway");
            Ok(())
        }
    }
}
