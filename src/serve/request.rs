//! Per-request plumbing: the request id, the error envelope, metrics and the access log.
//!
//! One service does all four because they share the same facts (the request id, the
//! route, the final status) and must wrap everything else, the router included, so that
//! every response, whoever produced it, has an id and the error shape. It wraps the
//! router once, rather than each route as a router layer would: axum boxes a layered
//! route again, and clones every box on every request.

use std::cell::RefCell;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll, ready};

use axum::body::Body;
use axum::extract::FromRequestParts;
use axum::http;
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue, Method, header};
use axum::response::Response;
use bytes::Bytes;
use pin_project_lite::pin_project;
use tower::Service;

use scaling_facts_api::{ErrorBody, REQUEST_ID_HEADER};

use super::error::{PendingError, for_status};
use super::ops::NotAnError;
use crate::telemetry::http::RouteMetrics;
use crate::telemetry::metrics::Metrics;
use crate::telemetry::traces;

/// The header that carries the request id, both ways. A constant, not a static: a static
/// name is cloned at every use, a constant one built in place for nothing.
const ID_HEADER: HeaderName = HeaderName::from_static(REQUEST_ID_HEADER);

/// The id of the current request, for a handler that records it (the configuration's
/// audit trail). The envelope leaves it in the request's own header, the caller's or one
/// made there, rather than in the extensions: one more extension makes every request
/// grow, then rehash, the extensions' table.
#[derive(Debug, Clone)]
pub struct RequestId(HeaderValue);

impl RequestId {
    pub fn as_str(&self) -> &str {
        // Only visible ASCII gets in: a caller's id is checked, ours is hex.
        self.0.to_str().unwrap_or("")
    }
}

impl<S: Sync> FromRequestParts<S> for RequestId {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        // Behind the envelope the header is always there and plain; a handler driven
        // without it gets an id of its own.
        Ok(Self(
            parts
                .headers
                .get(ID_HEADER)
                .cloned()
                .unwrap_or_else(next_id),
        ))
    }
}

/// Accepts a caller's id when it is short and plain, so that traces join up across hops;
/// otherwise makes one and puts it in the request in the caller's place.
fn request_id_of<B>(req: &mut http::Request<B>) -> HeaderValue {
    let theirs = req.headers().get(ID_HEADER).filter(|v| {
        let b = v.as_bytes();
        !b.is_empty()
            && b.len() <= 64
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c))
    });
    if let Some(id) = theirs {
        return id.clone();
    }
    let id = next_id();
    req.headers_mut().insert(ID_HEADER, id.clone());
    id
}

/// The length of a made id: `<process>-<sequence>`, 8 and 12 hex digits.
const ID_LEN: usize = 8 + 1 + 12;
/// How many ids a thread renders at once.
const IDS_PER_BLOCK: usize = 256;

thread_local! {
    /// Ids rendered ahead, and how many of them are taken.
    static IDS: RefCell<(Bytes, usize)> = const { RefCell::new((Bytes::new(), IDS_PER_BLOCK)) };
}

/// `<process>-<sequence>` in hex: unique for the process's life without a random draw
/// (a system call) per request, and unique across restarts and replicas by the process
/// part, drawn once. Each thread takes a block of sequence numbers and renders them into
/// one buffer, so that an id is a slice of it: no allocation per request, and the copy
/// the response keeps is a reference count.
fn next_id() -> HeaderValue {
    let id = IDS.with_borrow_mut(|(block, taken)| {
        if *taken == IDS_PER_BLOCK {
            *block = render_block();
            *taken = 0;
        }
        let at = *taken * ID_LEN;
        *taken += 1;
        block.slice(at..at + ID_LEN)
    });
    HeaderValue::from_maybe_shared(id).expect("hex digits and a dash")
}

fn render_block() -> Bytes {
    static PROCESS: LazyLock<u32> = LazyLock::new(rand::random);
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    let first = SEQUENCE.fetch_add(IDS_PER_BLOCK as u64, Ordering::Relaxed);
    let mut process = [0u8; 8];
    hex::encode_to_slice(PROCESS.to_be_bytes(), &mut process).expect("4 bytes, 8 digits");
    let mut block = vec![0u8; ID_LEN * IDS_PER_BLOCK];
    for (n, id) in (first..).zip(block.chunks_exact_mut(ID_LEN)) {
        let (p, sequence) = id.split_at_mut(8);
        p.copy_from_slice(&process);
        sequence[0] = b'-';
        // The low 48 bits: 12 digits.
        hex::encode_to_slice(&n.to_be_bytes()[2..], &mut sequence[1..])
            .expect("6 bytes, 12 digits");
    }
    Bytes::from(block)
}

/// Gives the request its id, then the response its id, the error shape,
/// its metrics and its access-log line. A tower service rather than
/// `middleware::from_fn`, which boxes the inner service and its future per request.
#[derive(Clone)]
pub struct Envelope<S> {
    inner: S,
    metrics: Arc<Metrics>,
    /// Make a span per request (traces are on); when off, no span is made at all.
    traced: bool,
}

impl<S> Envelope<S> {
    pub fn new(inner: S, metrics: Arc<Metrics>, traced: bool) -> Self {
        Self {
            inner,
            metrics,
            traced,
        }
    }
}

/// Generic over the body: the server hands hyper's own, the tests axum's.
impl<S, B> Service<http::Request<B>> for Envelope<S>
where
    S: Service<http::Request<B>, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Enveloped<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: http::Request<B>) -> Self::Future {
        // From the CPU's time-stamp counter where it is invariant: two readings of the
        // system clock cost more than the lookup the hot read does.
        let started = quanta::Instant::now();
        let id = request_id_of(&mut req);
        let route = self.metrics.http.for_path(req.uri().path());
        let method = req.method().clone();
        let span = self
            .traced
            .then(|| traces::request_span(&method, route.name(), req.headers()));
        let inner = match &span {
            Some(span) => span.in_scope(|| self.inner.call(req)),
            None => self.inner.call(req),
        };
        Enveloped {
            inner,
            span,
            done: Some(Done {
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
    started: quanta::Instant,
    id: HeaderValue,
    route: &'static RouteMetrics,
    method: Method,
}

pin_project! {
    /// The inner response, finished by [`Done::finish`].
    pub struct Enveloped<F> {
        #[pin]
        inner: F,
        // The request's span, entered while the handler runs; None when traces are off.
        span: Option<tracing::Span>,
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
        let _entered = this.span.as_ref().map(tracing::Span::enter);
        let Ok(response) = ready!(this.inner.poll(cx));
        let done = this.done.take().expect("polled after completion");
        let response = done.finish(response);
        if let Some(span) = this.span.as_ref() {
            let id = response
                .headers()
                .get(ID_HEADER)
                .and_then(|v| v.to_str().ok());
            traces::finish_request(span, response.status().as_u16(), id.unwrap_or(""));
        }
        Poll::Ready(Ok(response))
    }
}

impl Done {
    fn finish(self, mut response: Response) -> Response {
        let Self {
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
                request_id: id.to_str().unwrap_or("").to_owned(),
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
        route.observe(&method, status.as_u16(), took);
        tracing::debug!(request_id = id.to_str().unwrap_or(""), route = route.name(), %method, status = status.as_u16(), took_us = took.as_micros() as u64, "request");
        response.headers_mut().insert(ID_HEADER, id);
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_ids_are_distinct_and_plain() {
        // Past one block, so that a second is rendered.
        let ids: Vec<HeaderValue> = (0..IDS_PER_BLOCK + 2).map(|_| next_id()).collect();
        let distinct: std::collections::HashSet<&HeaderValue> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
        for id in &ids {
            let id = id.to_str().unwrap();
            assert_eq!(id.len(), 21);
            assert!(id.bytes().all(|c| c.is_ascii_hexdigit() || c == b'-'));
            assert_eq!(&id[..9], &ids[0].to_str().unwrap()[..9], "one process part");
        }
    }

    #[test]
    fn a_callers_plain_id_is_kept_and_another_replaced() {
        let id_of = |v: &str| {
            let mut req = http::Request::builder()
                .header(REQUEST_ID_HEADER, v)
                .body(Body::empty())
                .unwrap();
            let id = request_id_of(&mut req);
            // The request carries the id the response will.
            assert_eq!(req.headers().get(REQUEST_ID_HEADER), Some(&id));
            id.to_str().unwrap().to_owned()
        };
        assert_eq!(id_of("gw-42.a_b"), "gw-42.a_b");
        assert_ne!(id_of("has space"), "has space");
        assert_ne!(id_of(&"x".repeat(65)), "x".repeat(65));
    }
}
