//! Per-request plumbing: the request id, the error envelope, metrics and the access log.
//!
//! One layer does all four because they share the same facts (the request id, the
//! matched route, the final status) and must wrap everything else, including the timeout
//! layer, so that every response, whoever produced it, has an id and the error shape.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};

use axum::body::Body;
use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderValue, Method, header};
use axum::response::Response;
use pin_project_lite::pin_project;
use tower::{Layer, Service};

use scaling_facts_api::{ErrorBody, REQUEST_ID_HEADER};

use super::AppState;
use super::error::{PendingError, for_status};
use super::ops::NotAnError;
use crate::telemetry::http::UNMATCHED;

/// The id of the current request, in request extensions: the caller's, or one made here.
#[derive(Debug, Clone)]
pub struct RequestId(HeaderValue);

impl RequestId {
    pub fn as_str(&self) -> &str {
        // Only visible ASCII gets in: a caller's id is checked, ours is hex.
        self.0.to_str().unwrap_or("")
    }
}

/// Accepts a caller's id when it is short and plain, so that traces join up across hops;
/// otherwise makes one.
fn request_id_of(req: &Request) -> RequestId {
    let theirs = req.headers().get(REQUEST_ID_HEADER).filter(|v| {
        let b = v.as_bytes();
        !b.is_empty()
            && b.len() <= 64
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c))
    });
    RequestId(theirs.cloned().unwrap_or_else(next_id))
}

/// `<process>-<sequence>` in hex: unique for the process's life without a random draw
/// (a system call) per request, and unique across restarts and replicas by the process
/// part, drawn once.
fn next_id() -> HeaderValue {
    static PROCESS: LazyLock<u32> = LazyLock::new(rand::random);
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    let n = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    let mut buf = [0u8; 8 + 1 + 12];
    let (process, sequence) = buf.split_at_mut(8);
    hex::encode_to_slice(PROCESS.to_be_bytes(), process).expect("4 bytes, 8 digits");
    sequence[0] = b'-';
    // The low 48 bits: 12 digits.
    hex::encode_to_slice(&n.to_be_bytes()[2..], &mut sequence[1..]).expect("6 bytes, 12 digits");
    HeaderValue::from_bytes(&buf).expect("hex digits and a dash")
}

/// The layer that puts [`Envelope`] around every route.
#[derive(Clone)]
pub struct EnvelopeLayer(pub AppState);

impl<S> Layer<S> for EnvelopeLayer {
    type Service = Envelope<S>;

    fn layer(&self, inner: S) -> Envelope<S> {
        Envelope {
            inner,
            state: self.0.clone(),
        }
    }
}

/// Gives the request its id, then the response its id, the error shape,
/// its metrics and its access-log line. A tower service rather than
/// `middleware::from_fn`, which boxes the inner service and its future per request.
#[derive(Clone)]
pub struct Envelope<S> {
    inner: S,
    state: AppState,
}

impl<S> Service<Request> for Envelope<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Enveloped<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request) -> Self::Future {
        // From the CPU's time-stamp counter where it is invariant: two readings of the
        // system clock cost more than the lookup the hot read does.
        let started = quanta::Instant::now();
        let id = request_id_of(&req);
        let route = req.extensions().get::<MatchedPath>().cloned();
        let method = req.method().clone();
        req.extensions_mut().insert(id.clone());
        Enveloped {
            inner: self.inner.call(req),
            done: Some(Done {
                state: self.state.clone(),
                started,
                id,
                route,
                method,
            }),
        }
    }
}

/// What the response needs from the request.
struct Done {
    state: AppState,
    started: quanta::Instant,
    id: RequestId,
    route: Option<MatchedPath>,
    method: Method,
}

pin_project! {
    /// The inner response, finished by [`Done::finish`].
    pub struct Enveloped<F> {
        #[pin]
        inner: F,
        done: Option<Done>,
    }
}

impl<F> Future for Enveloped<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Ok(response) = ready!(this.inner.poll(cx));
        let done = this.done.take().expect("polled after completion");
        Poll::Ready(Ok(done.finish(response)))
    }
}

impl Done {
    fn finish(self, mut response: Response) -> Response {
        let Self {
            state,
            started,
            id,
            route,
            method,
        } = self;
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
                request_id: id.as_str().to_owned(),
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
        let took = started.elapsed();
        let route = route.as_ref().map_or(UNMATCHED, MatchedPath::as_str);
        state
            .metrics
            .http
            .observe(route, &method, status.as_u16(), took);
        tracing::debug!(request_id = id.as_str(), %route, %method, status = status.as_u16(), took_us = took.as_micros() as u64, "request");
        response.headers_mut().insert(REQUEST_ID_HEADER, id.0);
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_ids_are_distinct_and_plain() {
        let (a, b) = (next_id(), next_id());
        assert_ne!(a, b);
        let a = a.to_str().unwrap();
        assert_eq!(a.len(), 21);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit() || c == b'-'));
    }

    #[test]
    fn a_callers_plain_id_is_kept_and_another_replaced() {
        let with = |v: &str| {
            Request::builder()
                .header(REQUEST_ID_HEADER, v)
                .body(Body::empty())
                .unwrap()
        };
        assert_eq!(request_id_of(&with("gw-42.a_b")).as_str(), "gw-42.a_b");
        assert_ne!(request_id_of(&with("has space")).as_str(), "has space");
        assert_ne!(
            request_id_of(&with(&"x".repeat(65))).as_str(),
            "x".repeat(65)
        );
    }
}
