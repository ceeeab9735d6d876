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
use scaling_facts_api::{
    BatchScalingRequest, BatchScalingResponse, ColdStarts, ReleaseList, ReleaseSummary, Runtime,
    Scaling, examples,
};

use super::AppState;
use super::auth::Caller;
use super::error::ApiError;
use super::json::ApiJson;
use super::openapi::{BatchErrors, FleetReadErrors, ReleaseReadErrors};

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
    get, path = "/v1/releases/{release}/scaling", tag = "releases", operation_id = "getScaling",
    params(("release" = String, Path, description = "Release UID label value, or `<service>.<namespace>`", example = "steady.demo")),
    responses(
        (status = 200, description = "The scaling facts", body = Scaling, example = examples::scaling),
        ReleaseReadErrors,
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
    get, path = "/v1/releases/{release}/runtime", tag = "releases", operation_id = "getRuntime",
    params(("release" = String, Path, description = "Release key", example = "steady.demo")),
    responses(
        (status = 200, description = "Runtime state, presence, scaling facts", body = Runtime, example = examples::runtime),
        ReleaseReadErrors,
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
    get, path = "/v1/releases/{release}/cold-starts", tag = "releases", operation_id = "getColdStarts",
    params(("release" = String, Path, description = "Release key", example = "steady.demo")),
    responses(
        (status = 200, description = "Counts, percentiles, phases, buckets, recent wakes", body = ColdStarts, example = examples::cold_starts),
        ReleaseReadErrors,
    ),
    security(("bearer" = []), ())
)]
pub async fn cold_starts(
    State(state): State<AppState>,
    caller: Caller,
    Path(release): Path<String>,
) -> Result<Response, ApiError> {
    caller.require_read(&state)?;
    let entry = state.book.get(&release).ok_or_else(|| unknown(&release))?;
    Ok(json_bytes(entry.cold_starts_json.clone()))
}

/// The scaling facts of many releases in one call.
#[utoipa::path(
    post, path = "/v1/scaling/batch", tag = "releases", operation_id = "getScalingBatch",
    request_body(content = BatchScalingRequest, example = examples::batch_request),
    responses(
        (status = 200, description = "Scaling facts of the known releases", body = BatchScalingResponse, example = examples::batch_response),
        BatchErrors,
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

/// Every known release with its state, sorted by key.
#[utoipa::path(
    get, path = "/v1/releases", tag = "releases", operation_id = "listReleases",
    responses(
        (status = 200, description = "Known releases", body = ReleaseList, example = examples::release_list),
        FleetReadErrors,
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
    Ok(Json(ReleaseList {
        releases,
        refused_claims: state.book.refused().to_vec(),
    }))
}
