//! When each kind's watch last (re)started: a layer on the Kubernetes client notes the
//! moment the response to every watch request begins.
//!
//! kube-rs resumes a watch that the server ended without telling its caller, and the
//! server then sends at once everything that changed since the version it resumes from.
//! Those events arrive late by however long the watch was away (kube-rs asks again at
//! once, so that is the response time), yet look like any other. When a watch response
//! took more than a few milliseconds to begin, the watcher marks the events of its first
//! moments as [`Via::Resumed`], so that the measuring layer dates them by their objects
//! instead of by their arrival.
//!
//! [`Via::Resumed`]: crate::measure::observe::Via::Resumed

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::http::Request;
use tower::{Layer, Service};

/// How long after a watch response begins its events may still be the catch-up burst.
pub const CATCH_UP: Duration = Duration::from_millis(50);
/// A watch whose response took less than this to begin held nothing back for longer: its
/// catch-up events are as good as streamed.
pub const NEGLIGIBLE_WAIT: Duration = Duration::from_millis(5);

/// The latest watch response of each resource plural (`deployments`, `pods`...): when it
/// began, and how long the request had waited for it.
#[derive(Debug, Clone, Default)]
pub struct WatchStarts(Arc<Mutex<HashMap<String, (Instant, Duration)>>>);

impl WatchStarts {
    /// Whether an event of `plural` arriving `now` may belong to a catch-up burst that
    /// arrived late by more than a few milliseconds.
    pub fn catching_up(&self, plural: &str, now: Instant) -> bool {
        self.lock().get(plural).is_some_and(|(start, waited)| {
            *waited >= NEGLIGIBLE_WAIT && now.saturating_duration_since(*start) < CATCH_UP
        })
    }

    fn note(&self, plural: String, requested: Instant) {
        let now = Instant::now();
        self.lock()
            .insert(plural, (now, now.saturating_duration_since(requested)));
    }

    // Plain inserts and reads: a poisoned map is still a consistent map.
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Instant, Duration)>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The resource plural of a watch request (`?watch=true` or `?watch=1`), if it is one.
fn watched_plural<B>(req: &Request<B>) -> Option<String> {
    let query = req.uri().query()?;
    let watching = query
        .split('&')
        .any(|kv| kv == "watch=true" || kv == "watch=1");
    watching
        .then(|| req.uri().path().rsplit('/').next().map(str::to_owned))
        .flatten()
}

impl<S> Layer<S> for WatchStarts {
    type Service = Noting<S>;

    fn layer(&self, inner: S) -> Noting<S> {
        Noting {
            inner,
            starts: self.clone(),
        }
    }
}

/// The client's service, noting when watch responses begin.
#[derive(Debug, Clone)]
pub struct Noting<S> {
    inner: S,
    starts: WatchStarts,
}

type Pinned<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S, B> Service<Request<B>> for Noting<S>
where
    S: Service<Request<B>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pinned<Result<S::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let plural = watched_plural(&req);
        let starts = self.starts.clone();
        let requested = Instant::now();
        let response = self.inner.call(req);
        Box::pin(async move {
            let r = response.await;
            if let (Some(plural), Ok(_)) = (plural, &r) {
                starts.note(plural, requested);
            }
            r
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_watch_requests_are_noted_by_their_plural() {
        let watch =
            Request::get("/apis/apps/v1/namespaces/a/deployments?labelSelector=x&watch=true")
                .body(())
                .unwrap();
        assert_eq!(watched_plural(&watch).as_deref(), Some("deployments"));
        let list = Request::get("/api/v1/pods?limit=500").body(()).unwrap();
        assert_eq!(watched_plural(&list), None);
        let starts = WatchStarts::default();
        starts.note("pods".into(), Instant::now() - Duration::from_millis(150));
        assert!(
            starts.catching_up("pods", Instant::now()),
            "a slow response held events back"
        );
        assert!(!starts.catching_up("deployments", Instant::now()));
        starts.note("deployments".into(), Instant::now());
        assert!(
            !starts.catching_up("deployments", Instant::now()),
            "a prompt one did not"
        );
    }
}
