//! Per-request plumbing: the request id, the error envelope, metrics and the access log.
//!
//! One middleware does all four because they share the same facts (the request id, the
//! matched route, the final status) and must wrap everything else, including the timeout
//! layer, so that every response, whoever produced it, has an id and the error shape.

use std::time::Instant;

use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;

use scaling_facts_api::{ErrorBody, REQUEST_ID_HEADER};

use super::AppState;
use super::error::{PendingError, for_status};
use super::ops::NotAnError;

/// The id of the current request, in request extensions.
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

/// Accepts a caller's id when it is short and plain, so that traces join up across hops;
/// otherwise makes one.
fn request_id_of(req: &Request) -> String {
    req.headers()
        .get(REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            !v.is_empty()
                && v.len() <= 64
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        })
        .map(str::to_owned)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string())
}

pub async fn envelope(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let started = Instant::now();
    let id = request_id_of(&req);
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |p| p.as_str())
        .to_owned();
    let method = req.method().as_str().to_owned();
    req.extensions_mut().insert(RequestId(id.clone()));

    let mut response = next.run(req).await;

    let status = response.status();
    let is_error = status.is_client_error() || status.is_server_error();
    if is_error && response.extensions().get::<NotAnError>().is_none() {
        let pending = response
            .extensions_mut()
            .remove::<PendingError>()
            .unwrap_or_else(|| for_status(status));
        let body = ErrorBody {
            error_code: pending.code,
            message: pending.message,
            request_id: id.clone(),
        };
        let bytes = serde_json::to_vec(&body).expect("plain data");
        let (mut parts, _) = response.into_parts();
        parts.headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        parts.headers.remove(header::CONTENT_LENGTH);
        response = Response::from_parts(parts, Body::from(bytes));
    }
    if let Ok(v) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID_HEADER, v);
    }
    let took = started.elapsed();
    state
        .metrics
        .observe_request(&route, &method, status.as_u16(), took);
    tracing::debug!(request_id = %id, %route, %method, status = status.as_u16(), took_us = took.as_micros() as u64, "request");
    response
}
