//! The v1 reads: `scaling` (the gateway's hot path), `runtime` (the read that never
//! wakes anything), the batch `scaling` read, `cold-starts`, and the release list.
//!
//! Every read answers from the facts book; none touches Kubernetes or the store, which is
//! why `runtime` cannot wake a release and why reads keep working while the store is down.

use std::io::Write;

use axum::Json;
use axum::extract::{FromRequest, Path, Request, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use chrono::Utc;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::AppState;
use super::auth::Caller;
use super::error::{ApiError, ErrorBody};
use super::json::ApiJson;
use crate::measure::view::{ColdStarts, Phase, Runtime, RuntimeState, Scaling};

fn unknown(release: &str) -> ApiError {
    ApiError::UnknownRelease {
        release: release.to_owned(),
    }
}

fn json_bytes(bytes: Bytes) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], bytes).into_response()
}

/// The scaling facts of one release (ADR 0041 §1).
#[utoipa::path(
    get, path = "/v1/releases/{release}/scaling", tag = "releases",
    params(("release" = String, Path, description = "Release UID label value, or `<service>.<namespace>`")),
    responses(
        (status = 200, description = "The scaling facts", body = Scaling),
        (status = 401, description = "No or invalid token", body = ErrorBody),
        (status = 404, description = "Unknown release", body = ErrorBody),
    ),
    security(("bearer" = []), ())
)]
pub async fn scaling(
    State(state): State<AppState>,
    caller: Caller,
    Path(release): Path<String>,
) -> Result<Response, ApiError> {
    caller.require_read(&state)?;
    let bytes = state
        .book
        .scaling_json(&release)
        .ok_or_else(|| unknown(&release))?;
    Ok(json_bytes(bytes))
}

/// The runtime state of one release, read without waking it.
#[utoipa::path(
    get, path = "/v1/releases/{release}/runtime", tag = "releases",
    params(("release" = String, Path, description = "Release key")),
    responses(
        (status = 200, description = "Runtime state, presence, scaling facts", body = Runtime),
        (status = 401, description = "No or invalid token", body = ErrorBody),
        (status = 404, description = "Unknown release", body = ErrorBody),
    ),
    security(("bearer" = []), ())
)]
pub async fn runtime(
    State(state): State<AppState>,
    caller: Caller,
    Path(release): Path<String>,
) -> Result<Json<Runtime>, ApiError> {
    caller.require_read(&state)?;
    let entry = state.book.get(&release).ok_or_else(|| unknown(&release))?;
    Ok(Json(entry.facts.runtime_at(Utc::now(), state.book.watch())))
}

/// The cold-start report of one release, per revision.
#[utoipa::path(
    get, path = "/v1/releases/{release}/cold-starts", tag = "releases",
    params(("release" = String, Path, description = "Release key")),
    responses(
        (status = 200, description = "Counts, percentiles, phases, buckets, recent wakes", body = ColdStarts),
        (status = 401, description = "No or invalid token", body = ErrorBody),
        (status = 404, description = "Unknown release", body = ErrorBody),
    ),
    security(("bearer" = []), ())
)]
pub async fn cold_starts(
    State(state): State<AppState>,
    caller: Caller,
    Path(release): Path<String>,
) -> Result<Json<ColdStarts>, ApiError> {
    caller.require_read(&state)?;
    let entry = state.book.get(&release).ok_or_else(|| unknown(&release))?;
    Ok(Json(ColdStarts::clone(&entry.cold_starts)))
}

/// Body of the batch read.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchScalingRequest {
    /// Release keys; duplicates are answered once.
    pub releases: Vec<String>,
}

/// Answer of the batch read.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
pub struct BatchScalingResponse {
    /// Scaling facts by release key, for every known release asked for.
    pub scaling: std::collections::BTreeMap<String, Scaling>,
    /// The keys asked for that no release has.
    pub unknown: Vec<String>,
}

/// The scaling facts of many releases in one call.
#[utoipa::path(
    post, path = "/v1/scaling/batch", tag = "releases",
    request_body = BatchScalingRequest,
    responses(
        (status = 200, description = "Scaling facts of the known releases", body = BatchScalingResponse),
        (status = 401, description = "No or invalid token", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
        (status = 422, description = "Invalid body", body = ErrorBody),
    ),
    security(("bearer" = []), ())
)]
pub async fn batch_scaling(
    State(state): State<AppState>,
    caller: Caller,
    request: Request,
) -> Result<Response, ApiError> {
    caller.require_read(&state)?;
    let ApiJson(body) = ApiJson::<BatchScalingRequest>::from_request(request, &state).await?;
    let max = state.batch_max_releases;
    if body.releases.is_empty() || body.releases.len() > max {
        return Err(ApiError::invalid(
            "releases",
            format!(
                "must hold 1 to {max} release keys, got {}",
                body.releases.len()
            ),
        ));
    }
    let mut keys = body.releases;
    keys.sort_unstable();
    keys.dedup();
    // Splice the precomputed `scaling` bytes instead of re-serializing each object.
    let mut out = Vec::with_capacity(32 + keys.len() * 128);
    let mut unknown = Vec::new();
    out.extend_from_slice(br#"{"scaling":{"#);
    let mut first = true;
    for key in keys {
        match state.book.scaling_json(&key) {
            Some(bytes) => {
                if !first {
                    out.push(b',');
                }
                first = false;
                serde_json::to_writer(&mut out, &key).expect("writing to a Vec");
                out.push(b':');
                out.extend_from_slice(&bytes);
            }
            None => unknown.push(key),
        }
    }
    out.extend_from_slice(br#"},"unknown":"#);
    serde_json::to_writer(&mut out, &unknown).expect("writing to a Vec");
    out.write_all(b"}").expect("writing to a Vec");
    Ok(json_bytes(Bytes::from(out)))
}

/// One line of the release list.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
pub struct ReleaseSummary {
    pub release: String,
    pub namespace: String,
    pub service: String,
    pub state: RuntimeState,
    pub phase: Phase,
}

#[derive(Debug, Deserialize, Serialize, ToSchema)]
pub struct ReleaseList {
    pub releases: Vec<ReleaseSummary>,
}

/// Every known release with its state, sorted by key.
#[utoipa::path(
    get, path = "/v1/releases", tag = "releases",
    responses(
        (status = 200, description = "Known releases", body = ReleaseList),
        (status = 401, description = "No or invalid token", body = ErrorBody),
    ),
    security(("bearer" = []), ())
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<ReleaseList>, ApiError> {
    caller.require_read(&state)?;
    let releases = state
        .book
        .release_keys()
        .into_iter()
        .filter_map(|k| state.book.get(&k))
        .map(|e| ReleaseSummary {
            release: e.facts.release.clone(),
            namespace: e.facts.namespace.clone(),
            service: e.facts.service.clone(),
            state: e.facts.state,
            phase: e.facts.presence.phase,
        })
        .collect();
    Ok(Json(ReleaseList { releases }))
}
