//! Waking the releases a release declares it calls (`scaling-facts.io/depends-on`), when
//! it starts waking: a chain of cold releases then costs about its slowest start rather
//! than the sum, with no prewarm by the caller (ADR 0041, open question 3).
//!
//! Which dependencies to wake is `measure::depends`' decision (those at zero, never the
//! release itself or an unknown key); sending is the client crate's [`Prewarmer`], the
//! same guard an SDK uses: a cooldown per dependency, an in-flight flag kept in the same
//! lock, a drop guard that clears the flag on every exit path, and a kill switch checked
//! again inside the task right before the request is sent. The switch is thrown at
//! shutdown, so that nothing is sent by a service that is stopping.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::http::{Uri, header};
use scaling_facts_client::caller::{Transport, TransportError};
use scaling_facts_client::prewarm::Prewarmer;
use tokio::task::JoinHandle;

use super::get::Connection;
use crate::book::FactsBook;
use crate::measure::depends::Targets;
use scaling_facts_api::RuntimeState;

/// Requests through the configured URL: one GET per wake, held until it is answered (an
/// activator answers once the release serves).
pub struct Activator {
    template: String,
    book: Arc<FactsBook>,
    timeout: Duration,
}

/// How long a dependency's wake request may be held: Knative's activator gives up on a
/// request after 10 minutes at most.
const HOLD: Duration = Duration::from_secs(600);

impl Activator {
    /// The URL that wakes `release`, None when the release is not in the book.
    fn url(&self, release: &str) -> Option<String> {
        let entry = self.book.get(release)?;
        Some(
            self.template
                .replace("{namespace}", &entry.facts.namespace)
                .replace("{service}", &entry.facts.service)
                .replace("{release}", release),
        )
    }
}

impl Transport for Activator {
    async fn send(&self, release: &str, _deadline_ms: Option<u64>) -> Result<(), TransportError> {
        let url = self
            .url(release)
            .ok_or_else(|| TransportError::Unavailable(format!("{release} is not known")))?;
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            TransportError::Unavailable(format!("{what} {url}: {e}"))
        };
        let uri: Uri = url.parse().map_err(|e| fail("parsing", &e))?;
        let (Some(host), Some("http")) = (uri.host(), uri.scheme_str()) else {
            return Err(fail("not an http:// URL:", &""));
        };
        let port = uri.port_u16().unwrap_or(80);
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        let send = async {
            let mut connection = Connection::open(host, port)
                .await
                .map_err(TransportError::Unavailable)?;
            let agent = (header::USER_AGENT, "scaling-facts (dependency wake)");
            let status = connection
                .get(path, &[agent])
                .await
                .map_err(TransportError::Unavailable)?;
            tracing::info!(%release, status = status.as_u16(), "dependency woken");
            connection.close().await;
            Ok(())
        };
        tokio::time::timeout(self.timeout, send)
            .await
            .map_err(|_| fail("no answer in time from", &""))?
    }
}

/// The guarded waker of declared dependencies.
pub struct DependencyWakes {
    prewarmer: Prewarmer<Activator>,
    /// The prewarmer's, kept to name each wake's URL in the log.
    transport: Arc<Activator>,
    kill: Arc<AtomicBool>,
}

impl DependencyWakes {
    pub fn new(template: String, cooldown: Duration, book: Arc<FactsBook>) -> Self {
        let transport = Arc::new(Activator {
            template,
            book,
            timeout: HOLD,
        });
        let prewarmer = Prewarmer::new(transport.clone(), cooldown);
        let kill = prewarmer.kill_switch();
        Self {
            prewarmer,
            transport,
            kill,
        }
    }

    /// Stops every wake not yet sent, spawned or not.
    pub fn kill(&self) {
        self.kill.store(true, Ordering::Release);
    }

    pub fn in_flight(&self, release: &str) -> bool {
        self.prewarmer.in_flight(release)
    }

    /// `release` started waking and `targets` is what its declaration asks: wakes those at
    /// zero (each at most once per cooldown), reports the rest. Returns each dependency a
    /// request was spawned for, with its task.
    pub fn on_waking(&self, release: &str, targets: &Targets) -> Vec<(String, JoinHandle<()>)> {
        if targets.itself {
            tracing::warn!(%release, "a release declares it depends on itself; ignored");
        }
        for unknown in &targets.unknown {
            tracing::warn!(%release, dependency = %unknown, "a declared dependency is no known release");
        }
        let mut sent = Vec::with_capacity(targets.wake.len());
        for dependency in &targets.wake {
            // One at a time, so that each task is known by the dependency it wakes; the
            // prewarmer spawns at once, so they still run in parallel.
            let Some(task) = self
                .prewarmer
                .prewarm(std::slice::from_ref(dependency))
                .pop()
            else {
                continue;
            };
            let url = self.transport.url(dependency).unwrap_or_default();
            tracing::info!(%release, %dependency, %url, "waking a declared dependency at zero");
            sent.push((dependency.clone(), task));
        }
        sent
    }
}

/// Whether the book holds `release` at zero.
pub fn at_zero(book: &FactsBook, release: &str) -> bool {
    book.get(release)
        .is_some_and(|e| e.facts.state == RuntimeState::Idle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::facts::ReleaseFacts;
    use std::sync::atomic::AtomicUsize;

    /// A listener that counts connections and never answers: a held wake.
    async fn holding() -> (String, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!(
            "http://{}/activator/{{namespace}}/{{service}}",
            listener.local_addr().unwrap()
        );
        let count = Arc::new(AtomicUsize::new(0));
        let c = count.clone();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                c.fetch_add(1, Ordering::SeqCst);
                held.push(socket);
            }
        });
        (url, count)
    }

    fn wakes(url: String) -> DependencyWakes {
        let book = Arc::new(FactsBook::new(Duration::from_secs(90)));
        book.upsert(ReleaseFacts::idle(
            "cart.d",
            "d",
            "cart",
            chrono::Utc::now(),
        ));
        DependencyWakes::new(url, Duration::from_secs(30), book)
    }

    fn cart() -> Targets {
        Targets {
            wake: vec!["cart.d".into()],
            ..Targets::default()
        }
    }

    #[tokio::test]
    async fn the_kill_switch_thrown_between_spawn_and_send_sends_nothing() {
        let (url, connections) = holding().await;
        let w = wakes(url);
        // On this one-threaded runtime the task has not run yet when the switch is thrown.
        let tasks = w.on_waking("web.d", &cart());
        assert_eq!(tasks.len(), 1);
        w.kill();
        for (_, t) in tasks {
            t.await.unwrap();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(connections.load(Ordering::SeqCst), 0);
        assert!(!w.in_flight("cart.d"), "the drop guard cleared the flag");
    }

    #[tokio::test]
    async fn a_cancelled_wake_clears_its_flag_and_the_cooldown_holds() {
        let (url, connections) = holding().await;
        let w = wakes(url);
        let tasks = w.on_waking("web.d", &cart());
        // Sent, and held by the listener.
        while connections.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(w.in_flight("cart.d"));
        // A second release waking meanwhile sends nothing more.
        assert!(w.on_waking("shop.d", &cart()).is_empty());
        for (_, t) in tasks {
            t.abort();
            let _ = t.await;
        }
        assert!(!w.in_flight("cart.d"), "the drop guard cleared the flag");
        // Within the cooldown, still nothing.
        assert!(w.on_waking("web.d", &cart()).is_empty());
        assert_eq!(connections.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn the_url_names_the_release() {
        let w = wakes("http://gw/{namespace}/{service}?r={release}".into());
        assert_eq!(
            w.transport.url("cart.d").as_deref(),
            Some("http://gw/d/cart?r=cart.d")
        );
        assert_eq!(w.transport.url("ghost"), None);
    }
}
