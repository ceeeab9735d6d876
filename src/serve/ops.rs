//! Operations endpoints: liveness, readiness, detailed health, metrics, the OpenAPI
//! document. They need no token, since probes and scrapers carry none, and reveal no
//! release data.

use std::time::Instant;

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::{OpenApi, ToSchema};

use super::AppState;
use crate::store::PING_TIMEOUT;
use crate::telemetry::ErrorChain;
use crate::telemetry::health::WarmupReport;

#[derive(Debug, Serialize, ToSchema)]
pub struct Alive {
    pub status: &'static str,
}

/// Liveness only: the process answers HTTP.
#[utoipa::path(get, path = "/alive", tag = "operations",
    responses((status = 200, description = "The process is alive", body = Alive)))]
pub async fn alive() -> Json<Alive> {
    Json(Alive { status: "alive" })
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ReadyReport {
    pub ready: bool,
    pub warmup: Vec<WarmupReport>,
}

/// Readiness (ADR-025): closed until warm-up has had its chance, and again while shutting
/// down. Never checks dependencies the service can serve without.
#[utoipa::path(get, path = "/health/ready", tag = "operations",
    responses(
        (status = 200, description = "Ready for traffic", body = ReadyReport),
        (status = 503, description = "Warming up or shutting down", body = ReadyReport),
    ))]
pub async fn ready(State(state): State<AppState>) -> Response {
    let ready = state.readiness.is_open() && !state.shutdown.is_cancelled();
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body = ReadyReport {
        ready,
        warmup: state.readiness.reports(),
    };
    // Built by hand: a 503 here is an answer, not an error for the envelope to rewrite.
    let mut response = (status, Json(body)).into_response();
    response.extensions_mut().insert(NotAnError);
    response
}

/// Marks a 5xx response whose body must be kept as it is.
#[derive(Debug, Clone, Copy)]
pub struct NotAnError;

#[derive(Debug, Serialize, ToSchema)]
pub struct StoreCheck {
    /// `up` or `down`.
    pub status: &'static str,
    pub backend: String,
    pub latency_ms: u64,
    pub error: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WatchCheck {
    pub connected: bool,
    pub last_heard: Option<DateTime<Utc>>,
    pub stale: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct HealthReport {
    /// `ok`, `degraded` (a dependency is down; reads still served), `starting` or `stopping`.
    pub status: &'static str,
    pub ready: bool,
    pub releases: usize,
    pub store: StoreCheck,
    pub watch: WatchCheck,
    pub warmup: Vec<WarmupReport>,
}

/// Every check with detail; 200 when all is well, 503 otherwise.
#[utoipa::path(get, path = "/health", tag = "operations",
    responses(
        (status = 200, description = "All checks pass", body = HealthReport),
        (status = 503, description = "Starting, stopping, or a dependency is down", body = HealthReport),
    ))]
pub async fn health(State(state): State<AppState>) -> Response {
    let started = Instant::now();
    let store_error = match tokio::time::timeout(PING_TIMEOUT, state.store.ping()).await {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(ErrorChain(&e).to_string()),
        Err(_) => Some(format!("no answer within {} ms", PING_TIMEOUT.as_millis())),
    };
    let store = StoreCheck {
        status: if store_error.is_none() { "up" } else { "down" },
        backend: format!("{:?}", state.store.backend()).to_lowercase(),
        latency_ms: started.elapsed().as_millis() as u64,
        error: store_error,
    };
    let watch = state.book.watch();
    let watch = WatchCheck {
        connected: watch.connected,
        last_heard: watch.last_heard,
        stale: watch.is_stale(Utc::now()),
    };
    let ready = state.readiness.is_open() && !state.shutdown.is_cancelled();
    let status = if state.shutdown.is_cancelled() {
        "stopping"
    } else if !state.readiness.is_open() {
        "starting"
    } else if store.error.is_some() {
        "degraded"
    } else {
        "ok"
    };
    let code = if status == "ok" {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body = HealthReport {
        status,
        ready,
        releases: state.book.len(),
        store,
        watch,
        warmup: state.readiness.reports(),
    };
    let mut response = (code, Json(body)).into_response();
    response.extensions_mut().insert(NotAnError);
    response
}

/// Prometheus metrics in the OpenMetrics text format.
#[utoipa::path(get, path = "/metrics", tag = "operations",
    responses((status = 200, description = "OpenMetrics text", content_type = "application/openmetrics-text", body = String)))]
pub async fn metrics(State(state): State<AppState>) -> Response {
    state.metrics.releases_known.set(state.book.len() as i64);
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.encode(),
    )
        .into_response()
}

/// This API's OpenAPI document.
#[utoipa::path(get, path = "/openapi.json", tag = "operations",
    responses((status = 200, description = "OpenAPI 3.1 document", content_type = "application/json", body = Object)))]
pub async fn openapi() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        super::openapi::ApiDoc::openapi()
            .to_pretty_json()
            .expect("the document serializes"),
    )
        .into_response()
}
