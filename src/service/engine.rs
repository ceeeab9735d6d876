//! The measuring loop: connects to Kubernetes at once, feeds every watch event to the
//! tracker, one at a time, in arrival order, and merges the store's history whenever it
//! arrives. What the tracker produces goes to the write path (recorded wakes, wakes
//! underway), to the log and the metrics (one line per wake), and to the facts book
//! (changed release facts). Under a burst, the facts are derived once per queued run of
//! up to [`BURST`] observations rather than after each.
//!
//! The book fills from the watches alone, so a store that is down at start delays
//! nothing a caller reads. Measuring begins once the initial lists are in. When the
//! history arrives (at once, or when a store that was down answers), the tracker measures
//! everything it was fed again with it and reconciles (see `measure::tracker`'s history),
//! so a wake the last process had underway is still continued from its stored start.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use futures::FutureExt;
use tokio::sync::{mpsc, watch as signal};
use tokio_util::sync::CancellationToken;

use super::deps::DependencyWakes;
use super::history::History;
use super::lead::Leadership;
use super::off_the_clock;
use super::spool::Write;
use super::writer::Outbox;
use crate::book::FactsBook;
use crate::measure::depends;
use crate::measure::observe::{Stamp, Via};
use crate::measure::tracker::{Output, Stored, Tracker, TrackerSettings};
use crate::telemetry::ErrorChain;
use crate::telemetry::components::{Components, KindState};
use crate::telemetry::metrics::{KindLabels, Metrics};
use crate::watch::{self, Feed, KINDS, WatchSettings};
use scaling_facts_api::{RefusedClaim, RuntimeState, WakeRecord};

/// A kind whose last error is older than this, with no success since, counts as
/// recovered: a watch that resumed in a quiet cluster reports nothing.
const ERROR_MEMORY: Duration = Duration::from_secs(60);
const TICK: Duration = Duration::from_secs(1);
const CONNECT_RETRY: Duration = Duration::from_secs(5);
/// The kinds the book's releases come from: until both are listed, an empty book says
/// nothing about the cluster.
const RELEASE_KINDS: [&str; 2] = ["services", "revisions"];

pub struct EngineSettings {
    pub tracker: TrackerSettings,
    pub watch: WatchSettings,
    pub link: Arc<watch::Link>,
}

/// Observations taken before the facts are derived, when a burst is queued: enough to
/// spare a relist of 10,000 objects deriving facts 10,000 times, few enough that the facts
/// of the first are in the book within about a millisecond.
pub const BURST: usize = 256;

/// What the engine knows of each watched kind.
struct Kinds {
    health: HashMap<&'static str, KindHealth>,
    /// Every kind was listed once.
    lists_in: bool,
    /// When every kind was last healthy (the engine's start until then).
    heard: Instant,
}

#[derive(Default)]
struct KindHealth {
    listed: bool,
    errors: u64,
    last_ok: Option<Instant>,
    last_err: Option<Instant>,
    last_event: Option<chrono::DateTime<Utc>>,
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
    pub metrics: Arc<Metrics>,
    pub components: Arc<Components>,
    pub outbox: Outbox,
    /// Becomes true once every kind was listed and measuring began.
    pub synced: signal::Sender<bool>,
    /// Becomes true once the kinds the releases come from were listed: the book holds
    /// every release the cluster has.
    pub releases_listed: signal::Sender<bool>,
    /// Wakes declared dependencies when a release starts waking; None when not configured.
    pub deps: Option<Arc<DependencyWakes>>,
    /// Whether this replica writes: dependencies are woken only then, and a replica that
    /// starts writing stores its own wakes underway.
    pub leadership: Leadership,
    /// With a Lease, the rows stored since the history ([`super::follow`]): statistics are
    /// built from them.
    pub absorbed: Option<mpsc::Receiver<Vec<WakeRecord>>>,
}

impl Engine {
    pub async fn run(
        mut self,
        settings: EngineSettings,
        history: impl std::future::Future<Output = Option<History>> + Send,
        shutdown: CancellationToken,
    ) {
        watch::stall::start();
        let mut tracker = Tracker::new(settings.tracker);
        let history = history.fuse();
        tokio::pin!(history);
        let (client, starts) = loop {
            match settings.link.get().await {
                Ok((client, starts)) => break (client.clone(), starts.clone()),
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
        let mut kinds = Kinds {
            health: KINDS.iter().map(|k| (*k, KindHealth::default())).collect(),
            lists_in: false,
            heard: Instant::now(),
        };
        let mut ticker = tokio::time::interval(TICK);
        let mut absorbed = self.absorbed.take();
        let mut leading = false;
        loop {
            // Starting to write: the store's wakes underway become this replica's own, so a
            // writer killed next continues what this one measured, not the last writer's.
            if self.leadership.replicated()
                && tracker.is_synced()
                && self.leadership.leading() != leading
            {
                leading = !leading;
                if leading {
                    self.outbox.push(vec![Write::Opens(tracker.open_wakes())]);
                }
            }
            let output = tokio::select! {
                Some(rows) = async { absorbed.as_mut()?.recv().await }, if tracker.history_merged() => {
                    tracker.absorb(&rows, Utc::now());
                    Output::default()
                }
                feed = rx.recv() => match feed {
                    Some(first) => {
                        // A burst (a relist, the catch-up after an outage) is measured
                        // event by event, each with its own stamp, but its facts are
                        // derived once for what was queued, not after every event.
                        // It ends where the lists are in, so that measuring begins
                        // (below) before the next observation, as it would unqueued.
                        // Nothing is taken from the queue that is not measured: the next
                        // item is asked for only while the burst has room for it.
                        let mut feed = Some(first);
                        let mut taken = 0;
                        while let Some(f) = feed.take() {
                            let out = self.on_feed(f, &mut tracker, &mut kinds);
                            self.write(out);
                            taken += 1;
                            if taken == BURST || kinds.lists_in && !tracker.is_synced() {
                                break;
                            }
                            feed = rx.try_recv().ok();
                        }
                        Output::default()
                    }
                    None => break,
                },
                loaded = &mut history => match loaded {
                    Some(h) => off_the_clock(|| {
                        tracker.merge_history(
                            Stored {
                                wakes: &h.wakes,
                                open: &h.open,
                                rests: &h.rests,
                                watching_since: h.watching_since,
                            },
                            Stamp::now(Via::Listed),
                        )
                    }),
                    None => Output::default(),
                },
                _ = ticker.tick() => {
                    let now = Instant::now();
                    self.report(&kinds.health);
                    if kinds.health.values().all(|h| h.healthy(now)) {
                        kinds.heard = now;
                        self.book.watch_heard(Utc::now());
                    } else {
                        self.book.watch_lost();
                    }
                    self.metrics
                        .watch_heard_age
                        .set(now.duration_since(kinds.heard).as_secs_f64());
                    tracker.tick(Stamp::now(Via::Watched))
                }
                () = shutdown.cancelled() => break,
            };
            self.publish(&mut tracker, output);
            // Measuring begins once the lists are in, history or not: the tracker keeps
            // what it is fed and, when the history arrives, measures it all again with it.
            if kinds.lists_in && !tracker.is_synced() {
                if !tracker.history_merged() {
                    tracing::info!(
                        "measuring before the store's history is in; it is reconciled when it arrives"
                    );
                }
                let out = off_the_clock(|| tracker.mark_synced(Stamp::now(Via::Listed)));
                self.synced.send_replace(true);
                self.publish(&mut tracker, out);
            }
        }
        if let Some(deps) = &self.deps {
            deps.kill();
        }
        for w in watchers {
            w.abort();
        }
    }

    /// Measures one item of the watchers' feed.
    fn on_feed(&self, feed: Feed, tracker: &mut Tracker, kinds: &mut Kinds) -> Output {
        let health = &mut kinds.health;
        match feed {
            Feed::Observed(kind, obs, stamp) => {
                if let Some(h) = health.get_mut(kind) {
                    h.last_ok = Some(Instant::now());
                    h.last_event = Some(stamp.wall);
                }
                // Every observation with its stamp, to replay an ordering a test or a
                // cluster produced (`RUST_LOG=scaling_facts::service=trace`).
                tracing::trace!(?stamp, ?obs, "observed");
                tracker.apply(*obs, stamp)
            }
            Feed::Listing(kind) => {
                tracker.list_begins(kind);
                Output::default()
            }
            Feed::Listed(kind) => {
                tracing::trace!(kind, "listed");
                if let Some(h) = health.get_mut(kind) {
                    h.listed = true;
                    h.last_ok = Some(Instant::now());
                }
                self.report(health);
                if RELEASE_KINDS
                    .iter()
                    .all(|k| health.get(k).is_some_and(|h| h.listed))
                {
                    self.releases_listed.send_replace(true);
                }
                if !kinds.lists_in && health.values().all(|h| h.listed) {
                    kinds.lists_in = true;
                    tracing::info!(revisions = tracker.revision_count(), "initial lists synced");
                    self.book.watch_heard(Utc::now());
                }
                let mut out = tracker.list_ends(kind, Stamp::now(Via::Listed));
                out.extend(tracker.watch_back(kind, Stamp::now(Via::Watched)));
                out
            }
            Feed::Back(kind) => {
                tracing::debug!(kind, "watch back with what it missed");
                // Healthy again now, not at its next event: a quiet kind (a ConfigMap)
                // may have nothing to deliver for a long while.
                if let Some(h) = health.get_mut(kind) {
                    h.last_ok = Some(Instant::now());
                }
                self.report(health);
                tracker.watch_back(kind, Stamp::now(Via::Watched))
            }
            Feed::Failed(kind) => {
                tracing::trace!(kind, "watch failed");
                if let Some(h) = health.get_mut(kind) {
                    h.last_err = Some(Instant::now());
                    h.errors += 1;
                }
                self.report(health);
                self.metrics
                    .watch_errors
                    .get_or_create(&KindLabels {
                        kind: kind.to_owned(),
                    })
                    .inc();
                self.book.watch_lost();
                // What it would have shown is on its way: no wake is judged over meanwhile.
                tracker.watch_down(kind, Stamp::now(Via::Watched));
                // A list cut short is evaluated with what it brought.
                tracker.list_ends(kind, Stamp::now(Via::Listed))
            }
        }
    }

    /// Each kind's state, for `/health` and the metrics.
    fn report(&self, health: &HashMap<&'static str, KindHealth>) {
        let now = Instant::now();
        let wall = Utc::now();
        for (kind, h) in health {
            let labels = KindLabels {
                kind: (*kind).to_owned(),
            };
            let age = h.last_event.map_or(0.0, |at| {
                (wall - at).to_std().unwrap_or_default().as_secs_f64()
            });
            self.metrics
                .watch_last_event_age
                .get_or_create(&labels)
                .set(age);
            self.metrics
                .watch_up
                .get_or_create(&labels)
                .set(i64::from(h.healthy(now)));
            self.components.set_kind(
                kind,
                KindState {
                    listed: h.listed,
                    healthy: h.healthy(now),
                    errors: h.errors,
                    last_event: h.last_event,
                },
            );
        }
    }

    /// Writes what one step produced, then derives the facts that changed.
    fn publish(&self, tracker: &mut Tracker, output: Output) {
        self.write(output);
        self.derive(tracker);
    }

    /// Sends a step's records to the write path, and logs and counts its wakes.
    fn write(&self, output: Output) {
        // Retractions first (a record replaced under its own key is retracted, then
        // written again); a wake before the change that closes it: a crash between the
        // two leaves the wake stored and still underway, which a restart closes, never
        // the reverse.
        let mut writes: Vec<Write> = output
            .retracted
            .into_iter()
            .map(|(revision_uid, start_second)| Write::Retract {
                revision_uid,
                start_second,
            })
            .collect();
        for r in output.wakes {
            tracing::trace!(wake = ?r.wake, "recorded");
            crate::telemetry::wakes::observe(&self.metrics, &r.service, &r.wake);
            writes.push(Write::Wake(Box::new(r.wake)));
        }
        writes.extend(output.open.into_iter().map(Write::Open));
        if !output.rests.is_empty() {
            writes.push(Write::Rests(output.rests));
        }
        if let Some(since) = output.watching_since {
            writes.push(Write::WatchingSince(since));
        }
        self.outbox.push(writes);
    }

    /// A release whose facts say waking: if the book did not, it starts now, and its
    /// declared dependencies at zero are woken with it.
    fn starts_waking(&self, tracker: &mut Tracker, release: &str) {
        let Some(deps) = &self.deps else { return };
        if !self.leadership.leading() {
            return;
        }
        let declared = tracker.declared_dependencies(release);
        let was = self.book.get(release).map(|e| e.facts.state);
        if declared.is_empty() || was == Some(RuntimeState::Waking) {
            return;
        }
        for cycle in depends::cycles_through(release, |r| tracker.declared_dependencies(r)) {
            tracing::warn!(%release, cycle = %cycle.join(" -> "), "declared dependencies form a cycle; each is woken at most once");
        }
        let book = &self.book;
        let targets = depends::targets(
            release,
            declared,
            |r| book.get(r).is_some(),
            |r| super::deps::at_zero(book, r),
        );
        let sent = deps.on_waking(release, &targets);
        self.metrics.dependency_wakes.inc_by(sent.len() as u64);
        let now = Utc::now();
        for (dependency, _task) in sent {
            tracker.note_dependency_wake(&dependency, release, now);
        }
    }

    /// The facts and cold-start reports that changed since the last call, into the book.
    fn derive(&self, tracker: &mut Tracker) {
        let changes = tracker.changed(Utc::now());
        for f in changes.facts {
            if f.state == RuntimeState::Waking {
                self.starts_waking(tracker, &f.release);
            }
            self.book.upsert(f);
        }
        for key in &changes.reports {
            if let Some(r) = tracker.report(key) {
                self.book.set_cold_starts(&r);
            }
        }
        for release in changes.removed {
            self.book.remove(&release);
        }
        for key in changes.services_gone {
            self.metrics.forget_service(&key.namespace, &key.name);
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
                        namespace: r.claimant.namespace.to_string(),
                        service: r.claimant.name.to_string(),
                        owner_namespace: r.owner.namespace.to_string(),
                        owner_service: r.owner.name.to_string(),
                    })
                    .collect(),
            );
        }
    }
}
