//! The measuring loop: restores history from the store, connects to Kubernetes, and
//! feeds every watch event to the tracker, one at a time, in arrival order. What the
//! tracker produces goes to the store (recorded wakes, histograms), to the log and the
//! metrics (one line per wake), and to the facts book (changed release facts).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use tokio::sync::{mpsc, watch as signal};
use tokio_util::sync::CancellationToken;

use super::persist::{self, Write};
use crate::book::FactsBook;
use crate::measure::observe::{ServiceKey, Stamp, Via};
use crate::measure::stats::WindowSettings;
use crate::measure::tracker::{Output, Tracker, TrackerSettings};
use crate::store::Store;
use crate::telemetry::ErrorChain;
use crate::telemetry::metrics::{KindLabels, Metrics, ServiceLabels, WakeLabels};
use crate::watch::{self, Feed, KINDS, WatchSettings};
use scaling_facts_api::{Outcome, RefusedClaim, WakeRecord};

/// A kind whose last error is older than this, with no success since, counts as
/// recovered: a watch that resumed in a quiet cluster reports nothing.
const ERROR_MEMORY: Duration = Duration::from_secs(60);
const TICK: Duration = Duration::from_secs(1);
const CONNECT_RETRY: Duration = Duration::from_secs(5);

pub struct EngineSettings {
    pub tracker: TrackerSettings,
    pub watch: WatchSettings,
    pub kubeconfig: Option<PathBuf>,
}

#[derive(Default)]
struct KindHealth {
    listed: bool,
    last_ok: Option<Instant>,
    last_err: Option<Instant>,
}

impl KindHealth {
    fn healthy(&self, now: Instant) -> bool {
        self.listed
            && match (self.last_err, self.last_ok) {
                (None, _) => true,
                (Some(e), Some(ok)) if ok > e => true,
                (Some(e), _) => now.duration_since(e) > ERROR_MEMORY,
            }
    }
}

/// Handles the engine shares with the rest of the service.
pub struct Engine {
    pub book: Arc<FactsBook>,
    pub store: Store,
    pub metrics: Arc<Metrics>,
    /// Becomes true once every kind was listed and measured once.
    pub synced: signal::Sender<bool>,
    /// Becomes true once the store's history was loaded (or given up on).
    pub restored: signal::Sender<bool>,
    /// True once the migrations ran (or failed): history is read only after.
    pub migrated: signal::Receiver<bool>,
}

impl Engine {
    pub async fn run(self, settings: EngineSettings, shutdown: CancellationToken) {
        let mut tracker = Tracker::new(settings.tracker);
        self.restore(&mut tracker, &settings.tracker.window, &shutdown)
            .await;
        let (writes, write_rx) = mpsc::unbounded_channel();
        let persister = tokio::spawn(persist::run(
            self.store.clone(),
            self.metrics.clone(),
            write_rx,
            shutdown.clone(),
        ));

        let (client, starts) = loop {
            match watch::connect(settings.kubeconfig.as_deref()).await {
                Ok(c) => break c,
                Err(e) => {
                    tracing::error!(error = %ErrorChain(&e), "cannot reach Kubernetes; retrying");
                    tokio::select! {
                        () = tokio::time::sleep(CONNECT_RETRY) => {}
                        () = shutdown.cancelled() => return,
                    }
                }
            }
        };
        let (tx, mut rx) = mpsc::channel(4_096);
        let watchers = watch::spawn(&client, &starts, &settings.watch, tx, shutdown.clone());
        let mut health: HashMap<&'static str, KindHealth> =
            KINDS.iter().map(|k| (*k, KindHealth::default())).collect();
        let mut ticker = tokio::time::interval(TICK);
        loop {
            let output = tokio::select! {
                feed = rx.recv() => match feed {
                    Some(Feed::Observed(kind, obs, stamp)) => {
                        if let Some(h) = health.get_mut(kind) {
                            h.last_ok = Some(Instant::now());
                        }
                        // Every observation with its stamp, to replay an ordering a test
                        // or a cluster produced (`RUST_LOG=scaling_facts::service=trace`).
                        tracing::trace!(?stamp, ?obs, "observed");
                        tracker.apply(*obs, stamp)
                    }
                    Some(Feed::Listed(kind)) => {
                        tracing::trace!(kind, "listed");
                        if let Some(h) = health.get_mut(kind) {
                            h.listed = true;
                            h.last_ok = Some(Instant::now());
                        }
                        if !tracker.is_synced() && health.values().all(|h| h.listed) {
                            tracing::info!(revisions = tracker.revision_count(), "initial lists synced");
                            let out = tracker.mark_synced(Stamp::now(Via::Listed));
                            self.book.watch_heard(Utc::now());
                            self.synced.send_replace(true);
                            out
                        } else {
                            Output::default()
                        }
                    }
                    Some(Feed::Failed(kind)) => {
                        tracing::trace!(kind, "watch failed");
                        if let Some(h) = health.get_mut(kind) {
                            h.last_err = Some(Instant::now());
                        }
                        self.metrics.watch_errors.get_or_create(&KindLabels { kind: kind.to_owned() }).inc();
                        self.book.watch_lost();
                        Output::default()
                    }
                    None => break,
                },
                _ = ticker.tick() => {
                    let now = Instant::now();
                    if health.values().all(|h| h.healthy(now)) {
                        self.book.watch_heard(Utc::now());
                    } else {
                        self.book.watch_lost();
                    }
                    tracker.tick(Stamp::now(Via::Watched))
                }
                () = shutdown.cancelled() => break,
            };
            self.publish(&mut tracker, output, &writes);
        }
        drop(writes);
        for w in watchers {
            w.abort();
        }
        let _ = persister.await;
    }

    /// Loads recorded wakes and histograms of the window, retrying while the store is
    /// down, until it works or the service stops.
    async fn restore(
        &self,
        tracker: &mut Tracker,
        window: &WindowSettings,
        shutdown: &CancellationToken,
    ) {
        let mut migrated = self.migrated.clone();
        tokio::select! {
            _ = migrated.wait_for(|m| *m) => {}
            () = shutdown.cancelled() => return,
        }
        let since = Utc::now() - window.max_age;
        let mut delay = Duration::from_millis(200);
        loop {
            let loaded = async {
                let wakes = self.store.wakes_since(since).await?;
                let hists = self.store.histograms_since(since).await?;
                let open = self.store.open_wakes().await?;
                Ok::<_, crate::store::StoreError>((wakes, hists, open))
            }
            .await;
            match loaded {
                Ok((wakes, hists, open)) => {
                    let hists: Vec<_> = hists
                        .into_iter()
                        .map(|h| (h.revision_uid, h.series, h.bucket_start, h.histogram))
                        .collect();
                    tracker.restore(&wakes, &open, &hists, Utc::now());
                    tracing::info!(
                        wakes = wakes.len(),
                        underway = open.len(),
                        histograms = hists.len(),
                        "history restored"
                    );
                    break;
                }
                Err(e) => {
                    tracing::warn!(error = %ErrorChain(&e), "cannot load history yet; retrying");
                    tokio::select! {
                        () = tokio::time::sleep(delay) => {}
                        () = shutdown.cancelled() => break,
                    }
                    delay = (delay * 2).min(Duration::from_secs(10));
                }
            }
        }
        self.restored.send_replace(true);
    }

    fn publish(
        &self,
        tracker: &mut Tracker,
        output: Output,
        writes: &mpsc::UnboundedSender<Write>,
    ) {
        for r in output.wakes {
            tracing::trace!(wake = ?r.wake, "recorded");
            self.observe_wake(&r.service, &r.wake);
            let _ = writes.send(Write::Wake(Box::new(r.wake)));
        }
        for h in output.histograms {
            let _ = writes.send(Write::Histogram(Box::new(h)));
        }
        for o in output.open {
            let _ = writes.send(Write::Open(Box::new(o)));
        }
        let changes = tracker.changed(Utc::now());
        for f in changes.facts {
            self.book.upsert(f);
        }
        for r in changes.reports {
            self.book.set_cold_starts(r);
        }
        for release in changes.removed {
            self.book.remove(&release);
        }
        if let Some(refused) = changes.refused {
            for r in &refused {
                tracing::warn!(
                    release = %r.release, claimant = %format!("{}/{}", r.claimant.namespace, r.claimant.name),
                    owner = %format!("{}/{}", r.owner.namespace, r.owner.name),
                    "a Service claims a release key another owns; refused (fix its release-UID label)"
                );
            }
            self.metrics
                .release_claims_refused
                .set(refused.len() as i64);
            self.book.set_refused(
                refused
                    .into_iter()
                    .map(|r| RefusedClaim {
                        release: r.release,
                        namespace: r.claimant.namespace,
                        service: r.claimant.name,
                        owner_namespace: r.owner.namespace,
                        owner_service: r.owner.name,
                    })
                    .collect(),
            );
        }
    }

    /// The one log line and the metrics of a recorded wake.
    fn observe_wake(&self, key: &ServiceKey, w: &WakeRecord) {
        tracing::info!(
            release = %w.release, revision = %w.revision, kind = %w.kind, outcome = %w.outcome,
            duration_ms = w.duration_ms, provisioning_ms = w.phases.provisioning_ms,
            pulling_image_ms = w.phases.pulling_image_ms, starting_ms = w.phases.starting_ms,
            precision = %w.precision, failure_reason = w.failure_reason.as_deref(),
            requested_at = %w.requested_at.to_rfc3339(), "wake recorded"
        );
        let (namespace, service) = (key.namespace.clone(), key.name.clone());
        self.metrics
            .wakes
            .get_or_create(&WakeLabels {
                namespace: namespace.clone(),
                service: service.clone(),
                kind: w.kind.to_string(),
                outcome: w.outcome.to_string(),
            })
            .inc();
        if w.outcome == Outcome::Served {
            self.metrics
                .wake_duration
                .get_or_create(&ServiceLabels { namespace, service })
                .observe(w.duration_ms as f64 / 1000.0);
        }
    }
}
