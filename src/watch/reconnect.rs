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

use axum::http::{Request, Response};
use tower::{Layer, Service};

/// How long after a watch response begins its events may still be the catch-up burst.
pub const CATCH_UP: Duration = Duration::from_millis(50);
/// A watch that follows a list and whose response began less than this after the list was
/// asked for held nothing back for longer: its first events are as good as streamed (the
/// measurement's own tolerance for a live wake is 10 ms). The wait counts from the list's
/// request, not the watch's: the list's snapshot may be that old, and what changed after it
/// comes in the watch's first moments, however promptly the watch itself is answered.
pub const NEGLIGIBLE_WAIT: Duration = Duration::from_millis(10);

/// The latest watch request and response of each resource plural.
#[derive(Debug, Clone, Copy)]
struct Latest {
    /// When the requests since the last watch were a list, when its first page was asked
    /// for (the watch that follows starts from its snapshot).
    listed: Option<Instant>,
    /// When the watch response began, how long after the list or the watch's own request,
    /// and whether it followed a list.
    watch: Option<(Instant, Duration, bool)>,
}

/// What the client saw of each plural's watches (`deployments`, `pods`...).
#[derive(Debug, Clone, Default)]
pub struct WatchStarts(Arc<Mutex<HashMap<String, Latest>>>);

impl WatchStarts {
    /// Whether an event of `plural` arriving `now` may belong to a catch-up burst: the
    /// first moments of a watch that resumed after another ended (the gap between the two
    /// is not seen here), or that followed a list but waited for its response.
    pub fn catching_up(&self, plural: &str, now: Instant) -> bool {
        let Some(Latest {
            watch: Some((start, waited, after_list)),
            ..
        }) = self.lock().get(plural).copied()
        else {
            return false;
        };
        (!after_list || waited >= NEGLIGIBLE_WAIT)
            && now.saturating_duration_since(start) < CATCH_UP
    }

    /// When the latest watch response of `plural` began, if after `since`: a watch that
    /// failed then is flowing again.
    pub fn began_after(&self, plural: &str, since: Instant) -> Option<Instant> {
        let (start, ..) = self.lock().get(plural)?.watch?;
        (start > since).then_some(start)
    }

    /// Notes a request for `plural` made `now`; for a watch, returns when the list it
    /// follows was asked for, if it follows one.
    fn requested(&self, plural: &str, watch: bool, now: Instant) -> Option<Instant> {
        let mut map = self.lock();
        let latest = map.entry(plural.to_owned()).or_insert(Latest {
            listed: None,
            watch: None,
        });
        if watch {
            latest.listed.take()
        } else {
            // A paged list's snapshot is its first page's: keep the earliest request.
            latest.listed.get_or_insert(now);
            None
        }
    }

    /// A watch response began: `since` is its list's request when it follows one, else
    /// its own request.
    fn began(&self, plural: String, since: Instant, after_list: bool) {
        let now = Instant::now();
        if let Some(latest) = self.lock().get_mut(&plural) {
            latest.watch = Some((now, now.saturating_duration_since(since), after_list));
        }
    }

    // Plain inserts and reads: a poisoned map is still a consistent map.
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Latest>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The watched kind a collection request is for, and whether it is a watch (`?watch=true`
/// or `?watch=1`): its resource plural, followed by `/<name>` when a field selector
/// narrows it to one object (the ConfigMaps, each watched by name, as the watch layer
/// names them).
fn collection<B>(req: &Request<B>) -> Option<(String, bool)> {
    let query = req.uri().query().unwrap_or("");
    let watch = query
        .split('&')
        .any(|kv| kv == "watch=true" || kv == "watch=1");
    let mut kind = req.uri().path().rsplit('/').next()?.to_owned();
    let named = query.split('&').find_map(|kv| {
        kv.strip_prefix("fieldSelector=metadata.name%3D")
            .or_else(|| kv.strip_prefix("fieldSelector=metadata.name="))
    });
    if let Some(name) = named {
        kind.push('/');
        kind.push_str(name);
    }
    Some((kind, watch))
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

impl<S, B, RB> Service<Request<B>> for Noting<S>
where
    S: Service<Request<B>, Response = Response<RB>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pinned<Result<S::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let seen = collection(&req);
        let requested = Instant::now();
        let list = seen
            .as_ref()
            .and_then(|(plural, watch)| self.starts.requested(plural, *watch, requested));
        let starts = self.starts.clone();
        let response = self.inner.call(req);
        Box::pin(async move {
            let r = response.await;
            // An error status (a 503 while the API server is away) begins no watch.
            if let (Some((plural, true)), Ok(ok)) = (seen, &r)
                && ok.status().is_success()
            {
                starts.began(plural, list.unwrap_or(requested), list.is_some());
            }
            r
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(uri: &str) -> Request<()> {
        Request::get(uri).body(()).unwrap()
    }

    #[test]
    fn a_resumed_watch_is_catching_up_and_one_after_a_prompt_list_is_not() {
        let watch = req("/apis/apps/v1/namespaces/a/deployments?labelSelector=x&watch=true");
        assert_eq!(collection(&watch), Some(("deployments".into(), true)));
        let starts = WatchStarts::default();
        let now = Instant::now();
        // A list, then a watch answered at once: live.
        let named = Request::get(
            "/api/v1/namespaces/knative-serving/configmaps?fieldSelector=metadata.name%3Dconfig-autoscaler&watch=true",
        )
        .body(())
        .unwrap();
        assert_eq!(
            collection(&named),
            Some(("configmaps/config-autoscaler".to_owned(), true))
        );
        assert_eq!(starts.requested("pods", false, now), None);
        let list = starts.requested("pods", true, now);
        assert_eq!(list, Some(now));
        starts.began("pods".into(), now, true);
        assert!(!starts.catching_up("pods", Instant::now()));
        // The same watch, answered late: catching up.
        starts.began("pods".into(), now - Duration::from_millis(150), true);
        assert!(starts.catching_up("pods", Instant::now()));
        // A watch after a watch (the first ended): catching up, however prompt.
        assert_eq!(starts.requested("pods", true, now), None);
        starts.began("pods".into(), Instant::now(), false);
        assert!(starts.catching_up("pods", Instant::now()));
        assert!(!starts.catching_up("deployments", Instant::now()));
    }

    #[tokio::test]
    async fn a_prompt_watch_long_after_its_list_is_catching_up() {
        // The list's snapshot is 30 ms old when the watch begins: what changed meanwhile
        // arrives at once, however quickly the watch itself was answered.
        let starts = WatchStarts::default();
        let asked = Instant::now();
        assert_eq!(starts.requested("pods", false, asked), None);
        tokio::time::sleep(Duration::from_millis(30)).await;
        let list = starts.requested("pods", true, Instant::now());
        assert_eq!(list, Some(asked));
        starts.began("pods".into(), list.unwrap(), true);
        assert!(starts.catching_up("pods", Instant::now()));
    }
}
