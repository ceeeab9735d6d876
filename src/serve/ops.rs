//! Operations endpoints: liveness, readiness, detailed health, metrics, the OpenAPI
//! document. They need no token, since probes and scrapers carry none, and reveal no
//! release data.

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use scaling_facts_api::{
    Alive, AliveStatus, HealthReport, HealthStatus, HistoryCheck, HistoryStatus, KindCheck,
    LeaseCheck, ReadyReport, StoreCheck, StoreStatus, WarmupOutcome, WatchCheck, WritesCheck,
    WritesStatus, examples,
};

use crate::telemetry::components::HistoryState;

/// Writes waiting this long without the queue emptying mean the store is not keeping up.
const WRITES_BEHIND_AFTER: std::time::Duration = std::time::Duration::from_secs(10);

use super::AppState;
use super::auth::Caller;
use super::error::ApiError;
use super::openapi::OpsErrors;

/// Liveness only: the process answers HTTP.
#[utoipa::path(get, path = "/alive", tag = "operations", operation_id = "getAlive",
    responses(
        (status = 200, description = "The process is alive", body = Alive, example = examples::alive),
        OpsErrors,
    ))]
pub async fn alive() -> Json<Alive> {
    Json(Alive {
        status: AliveStatus::Alive,
    })
}

/// Readiness (ADR-025): closed until warm-up has had its chance, and again while shutting
/// down. Never checks dependencies the service can serve without.
#[utoipa::path(get, path = "/health/ready", tag = "operations", operation_id = "getReadiness",
    responses(
        (status = 200, description = "Ready for traffic", body = ReadyReport, example = examples::ready),
        (status = 503, description = "Warming up or shutting down", body = ReadyReport, example = examples::not_ready),
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

/// Every check; 200 when all is well, 503 otherwise. The reasons behind a failed check
/// (a database's own error text, a warm-up task's failure) are shown only to callers with a
/// valid token: anonymous probes learn what is down, not why. The store is asked at most
/// once per `CHECK_TTL`, however often this is called.
#[utoipa::path(get, path = "/health", tag = "operations", operation_id = "getHealth",
    responses(
        (status = 200, description = "All checks pass", body = HealthReport, example = examples::health),
        (status = 503, description = "Starting, stopping, or a dependency is down", body = HealthReport, example = examples::degraded),
    ))]
pub async fn health(State(state): State<AppState>, caller: Result<Caller, ApiError>) -> Response {
    let detailed = matches!(caller, Ok(Caller::Token(_)));
    let checked = state.store.check().await;
    let store = StoreCheck {
        status: if checked.error.is_none() {
            StoreStatus::Up
        } else {
            StoreStatus::Down
        },
        backend: format!("{:?}", state.store.backend()).to_lowercase(),
        latency_ms: checked.latency.as_millis() as u64,
        error: checked.error.filter(|_| detailed),
    };
    let watch = state.book.watch();
    let watch = WatchCheck {
        connected: watch.connected,
        last_heard: watch.last_heard,
        stale: watch.is_stale(Utc::now()),
        kinds: state
            .components
            .kinds()
            .into_iter()
            .map(|(kind, k)| KindCheck {
                kind: kind.to_owned(),
                listed: k.listed,
                healthy: k.healthy,
                errors: k.errors,
                last_event: k.last_event,
            })
            .collect(),
    };
    let history = match state.components.history() {
        HistoryState::Loading { error } => HistoryCheck {
            status: HistoryStatus::Loading,
            wakes: 0,
            error: error.filter(|_| detailed),
        },
        HistoryState::Loaded { wakes } => HistoryCheck {
            status: HistoryStatus::Loaded,
            wakes,
            error: None,
        },
        HistoryState::Failed { error } => HistoryCheck {
            status: HistoryStatus::Failed,
            wakes: 0,
            error: Some(error).filter(|_| detailed),
        },
    };
    let w = state.components.writes();
    let behind = w.behind(std::time::Instant::now());
    let writes = WritesCheck {
        status: if w.spool_error.is_some() {
            WritesStatus::SpoolFailing
        } else if behind >= WRITES_BEHIND_AFTER {
            WritesStatus::Behind
        } else {
            WritesStatus::Ok
        },
        queued: w.queued(),
        behind_ms: behind.as_millis() as u64,
        spool_bytes: w.spool_bytes,
        rejected: w.rejected,
        error: w.spool_error.or(w.store_error).filter(|_| detailed),
    };
    let watch_down = watch.kinds.iter().any(|k| !k.healthy);
    let ready = state.readiness.is_open() && !state.shutdown.is_cancelled();
    let status = if state.shutdown.is_cancelled() {
        HealthStatus::Stopping
    } else if !state.readiness.is_open() {
        HealthStatus::Starting
    } else if store.status == StoreStatus::Down
        || watch_down
        || history.status != HistoryStatus::Loaded
        || writes.status != WritesStatus::Ok
    {
        HealthStatus::Degraded
    } else {
        HealthStatus::Ok
    };
    let code = if status == HealthStatus::Ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let lead = &state.leadership;
    let lease = LeaseCheck {
        role: lead.role(),
        holder: lead.holder(),
        renewed_ago_ms: lead.renewed_age().map(|a| a.as_millis() as u64),
        held_wakes: state.metrics.wakes_held.get().max(0) as u64,
    };
    let body = HealthReport {
        lease,
        status,
        ready,
        releases: state.book.len(),
        refused_claims: state.book.refused().len(),
        store,
        watch,
        history,
        writes,
        warmup: state
            .readiness
            .reports()
            .into_iter()
            .map(|mut r| {
                if !detailed && let WarmupOutcome::Failed(why) = &mut r.outcome {
                    *why = "failed; the reason is shown with a token".into();
                }
                r
            })
            .collect(),
    };
    let mut response = (code, Json(body)).into_response();
    response.extensions_mut().insert(NotAnError);
    response
}

/// Prometheus metrics in the OpenMetrics text format.
#[utoipa::path(get, path = "/metrics", tag = "operations", operation_id = "getMetrics",
    responses(
        (status = 200, description = "OpenMetrics text", content_type = "application/openmetrics-text", body = String,
            example = json!("# TYPE scaling_facts_releases_known gauge\nscaling_facts_releases_known 7\n# EOF\n")),
        OpsErrors,
    ))]
pub async fn metrics(State(state): State<AppState>) -> Response {
    state.metrics.releases_known.set(state.book.len() as i64);
    let lead = &state.leadership;
    state.metrics.leader.set(i64::from(lead.leading()));
    state
        .metrics
        .lease_renewed_age
        .set(lead.renewed_age().map_or(0.0, |a| a.as_secs_f64()));
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
#[utoipa::path(get, path = "/openapi.json", tag = "operations", operation_id = "getOpenApi",
    responses(
        (status = 200, description = "OpenAPI 3.1 document", content_type = "application/json", body = Object,
            example = json!({"openapi": "3.1.0", "info": {"title": "scaling-facts", "version": "0.1.0"}, "paths": {}})),
        OpsErrors,
    ))]
pub async fn openapi() -> Response {
    static TEXT: std::sync::LazyLock<bytes::Bytes> =
        std::sync::LazyLock::new(|| super::openapi::document().into());
    ([(header::CONTENT_TYPE, "application/json")], TEXT.clone()).into_response()
}
