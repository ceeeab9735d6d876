//! Start-up and shutdown of `serve`: wires the store, the facts book and the API to one
//! cancellation token, runs the warm-up behind the readiness gate, and stops on SIGTERM or
//! Ctrl-C.
//!
//! Nothing at start waits for the store. The API and the watchers start at once; the
//! migrations and the history load ([`history`]) retry in the background and merge when
//! they succeed; measured writes go through the spool ([`spool`], [`writer`]) so that none
//! waits in memory for a store that is down.

use std::sync::Arc;

use anyhow::Context;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub mod apply;
pub mod deps;
pub mod engine;
pub mod follow;
pub mod get;
pub mod held;
pub mod history;
pub mod lead;
pub mod retention;
pub mod spool;
pub mod warm;
pub mod writer;

/// Errors of the service layer that are not the store's.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("cannot use the spool at {path}")]
    Spool {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the spool at {path} is locked by another process; give each replica its own")]
    SpoolInUse { path: std::path::PathBuf },
    #[error(
        "the SQLite store {path} is in use by another scaling-facts process: SQLite serves one \
         replica; run more than one on PostgreSQL"
    )]
    SqliteInUse { path: std::path::PathBuf },
}

/// Holds `<database file>.lock` for the life of the process when the store is SQLite: a
/// second replica on the same file would measure and write beside the first, each with
/// its own view, so it is refused at start with a clear error instead. A lock file that
/// cannot be made (the database's folder is not there yet) does not stop the service,
/// which starts without its store as it would without the lock.
fn lock_sqlite(config: &ServeConfig) -> Result<Option<std::fs::File>, ServiceError> {
    let Some(db) = config.sqlite_file() else {
        return Ok(None);
    };
    let path = std::path::PathBuf::from(format!("{}.lock", db.display()));
    let unlocked = |e: std::io::Error| {
        tracing::warn!(path = %path.display(), error = %e, "cannot lock the SQLite store: a second replica on it would not be refused");
        Ok(None)
    };
    let file = match std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
    {
        Ok(file) => file,
        Err(e) => return unlocked(e),
    };
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Err(ServiceError::SqliteInUse { path: db }),
        Err(std::fs::TryLockError::Error(e)) => unlocked(e),
    }
}

use crate::book::FactsBook;
use crate::config::ServeConfig;
use crate::serve::auth::Tokens;
use crate::serve::streams::StreamLimits;
use crate::serve::{self, AppState, Shared};
use crate::store::Store;
use crate::telemetry::components::Components;
use crate::telemetry::health::{Readiness, WarmupTask};
use crate::telemetry::metrics::Metrics;
use engine::{Engine, EngineSettings};
use spool::{Spool, Write};
use writer::{Outbox, Writer};

/// Everything `serve` built, before it starts listening; tests and the demo use it to run
/// the service in-process.
pub struct Service {
    pub state: AppState,
    pub listener: TcpListener,
    /// The engine's end of the write path.
    pub outbox: Outbox,
    /// What a previous process left in the spool, for the history.
    left: Vec<Write>,
    /// Where the elector publishes this replica's standing, with a Lease.
    standing: Option<tokio::sync::watch::Sender<crate::watch::lease::Standing>>,
    /// The Kubernetes API, one client for the watchers, the applier and the Lease.
    link: Arc<crate::watch::Link>,
    /// The SQLite store's lock, held until the process ends.
    _sqlite_lock: Option<std::fs::File>,
}

impl Service {
    /// Loads tokens, opens the store (lazily: a database that is down does not stop the
    /// service), binds the listener.
    pub async fn build(config: &ServeConfig, shutdown: CancellationToken) -> anyhow::Result<Self> {
        let tokens = match &config.tokens_file {
            Some(path) => Tokens::load(path).context("loading the tokens file")?,
            None => Tokens::default(),
        };
        if tokens.is_empty() && !config.allow_anonymous_reads {
            tracing::warn!(
                "no tokens and anonymous reads disabled: every /v1 request will get 401"
            );
        }
        if let Some(url) = &config.act.dependency_wake_url {
            anyhow::ensure!(
                url.starts_with("http://"),
                "SCALING_FACTS_DEPENDENCY_WAKE_URL must be an http:// URL, not {url}"
            );
        }
        let (standing, leadership) = lease_of(config)?;
        // Before anything is opened: a second process on the same SQLite file stops here.
        let sqlite_lock = lock_sqlite(config)?;
        let store = Store::connect_lazy(&config.database).context("opening the store")?;
        let metrics = Arc::new(Metrics::with_request_timeout(config.request_timeout()));
        let components = Arc::new(Components::default());
        let spool_path = config.spool_path();
        let (spool, left) = match Spool::open(&spool_path) {
            Ok((spool, left)) => (Some(spool), left),
            // Two processes on one spool would replay each other's writes: refuse to start.
            Err(e @ ServiceError::SpoolInUse { .. }) => return Err(e.into()),
            Err(e) => {
                tracing::error!(error = %crate::telemetry::ErrorChain(&e), "no spool: measured writes wait in memory until the store has them");
                (None, Vec::new())
            }
        };
        let left: Vec<Write> = left.into_iter().map(|(_, w)| w).collect();
        let outbox = Outbox::new(spool, left.len(), components.clone(), metrics.clone());
        let listener = TcpListener::bind(config.listen_addr)
            .await
            .with_context(|| format!("binding {}", config.listen_addr))?;
        let book = Arc::new(FactsBook::new(std::time::Duration::from_secs(
            config.stale_after_seconds,
        )));
        let link = Arc::new(crate::watch::Link::new(config.measure.kubeconfig.clone()));
        // Applying needs the cluster the watch reads: without the watch there is no
        // Service to apply to.
        let applier = (config.act.apply_config && config.measure.watch_kubernetes).then(|| {
            Arc::new(apply::ConfigApplier::new(
                link.clone(),
                store.clone(),
                book.clone(),
                metrics.clone(),
            ))
        });
        let state = AppState::new(Shared {
            book,
            store,
            tokens,
            allow_anonymous_reads: config.allow_anonymous_reads,
            readiness: Readiness::new(),
            metrics,
            components,
            shutdown,
            batch_max_releases: config.batch_max_releases,
            request_timeout: config.request_timeout(),
            max_body_bytes: config.max_body_bytes,
            streams: StreamLimits::new(config.max_streams, config.max_streams_per_token),
            trace_requests: crate::telemetry::traces::on(),
            applier,
            leadership,
        });
        Ok(Self {
            standing,
            state,
            listener,
            outbox,
            left,
            link,
            _sqlite_lock: sqlite_lock,
        })
    }

    /// Serves until the shutdown token is cancelled. Warm-up runs beside the server so that
    /// `/alive` and `/health` answer while readiness is still closed.
    pub async fn run(self, config: &ServeConfig) -> anyhow::Result<()> {
        let state = self.state.clone();
        let shutdown = state.shutdown.clone();
        let addr = self.listener.local_addr()?;
        tracing::info!(%addr, backend = ?state.store.backend(), "serving");
        let (migrated_tx, mut migrated) = tokio::sync::watch::channel(false);
        // The first prune waits for the tables: on a fresh database it would fail and
        // wait a whole interval.
        let prune_after = migrated.clone();
        let (loaded_tx, mut loaded) = tokio::sync::watch::channel(false);
        let replicated = state.leadership.replicated();
        // With a Lease, the writes a previous process left are the writer's to settle
        // (stored while leading, else held), not counted from the spool.
        let left = if replicated { Vec::new() } else { self.left };
        let (last_id_tx, last_id) = tokio::sync::oneshot::channel();
        // Migrations, then the history, retried until they succeed.
        let history = {
            let load = history::load(
                state.store.clone(),
                config.measure.tracker().window.max_age,
                left,
                state.components.clone(),
                migrated_tx,
                shutdown.clone(),
            );
            tokio::spawn(async move {
                let h = load.await;
                if let Some(h) = &h {
                    let _ = last_id_tx.send(h.last_id);
                }
                loaded_tx.send_replace(true);
                h
            })
        };
        // Every replica follows the stored rows from where the history ends.
        let (absorb_tx, absorbed) = tokio::sync::mpsc::channel(64);
        let following = replicated.then(|| {
            let (store, outbox, shutdown) =
                (state.store.clone(), self.outbox.clone(), shutdown.clone());
            tokio::spawn(async move {
                if let Ok(after) = last_id.await {
                    follow::run(store, after, outbox, absorb_tx, shutdown).await;
                }
            })
        });
        // The Lease is held until the writer is done: released earlier, another replica
        // could start writing while this one still drains its queue.
        let lease_stop = CancellationToken::new();
        let electing = self.standing.map(|tx| {
            let settings = crate::watch::lease::LeaseSettings {
                name: config.lease.lease_name.clone().unwrap_or_default(),
                namespace: config.lease.lease_namespace.clone(),
                identity: config.lease.identity(),
                duration: config.lease.duration(),
                renew_deadline: config.lease.renew_deadline(),
                retry: config.lease.retry(),
            };
            tracing::info!(lease = %settings.name, identity = %settings.identity, "replicas share a Lease: writing only while holding it");
            tokio::spawn(elect(self.link.clone(), settings, tx, lease_stop.clone()))
        });
        // The writer starts once the history is read: what it reads must be what the
        // store held before this process, or a replay would meet its own future wakes.
        // Until then writes wait in the spool.
        let writing = {
            let writer = Writer {
                store: state.store.clone(),
                outbox: self.outbox.clone(),
                grace: config.shutdown_grace(),
                leadership: state.leadership.clone(),
            };
            let mut loaded = loaded.clone();
            let shutdown = shutdown.clone();
            let components = state.components.clone();
            tokio::spawn(async move {
                let ready = tokio::select! {
                    l = loaded.wait_for(|l| *l) => l.is_ok(),
                    () = shutdown.cancelled() => false,
                };
                if ready {
                    writer.run(shutdown).await;
                } else {
                    let queued = components.writes().queued();
                    if queued > 0 {
                        tracing::warn!(
                            queued,
                            "shutdown before the store was ready: writes stay in the spool and are replayed at the next start"
                        );
                    }
                }
            })
        };
        let mut tasks = vec![
            WarmupTask::new("store", async move {
                migrated
                    .wait_for(|m| *m)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }),
            WarmupTask::new("history", async move {
                loaded
                    .wait_for(|l| *l)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }),
        ];
        let (releases_tx, mut releases_listed) = tokio::sync::watch::channel(false);
        let engine = if config.measure.watch_kubernetes {
            let (synced, mut synced_rx) = tokio::sync::watch::channel(false);
            let deps = config.act.dependency_wake_url.clone().map(|url| {
                Arc::new(deps::DependencyWakes::new(
                    url,
                    config.act.dependency_wake_cooldown(),
                    state.book.clone(),
                ))
            });
            let engine = Engine {
                deps,
                book: state.book.clone(),
                metrics: state.metrics.clone(),
                components: state.components.clone(),
                outbox: self.outbox.clone(),
                synced,
                releases_listed: releases_tx,
                leadership: state.leadership.clone(),
                absorbed: replicated.then_some(absorbed),
            };
            let settings = EngineSettings {
                tracker: crate::measure::tracker::TrackerSettings {
                    stats_from_store: replicated,
                    ..config.measure.tracker()
                },
                watch: config.measure.watch(),
                link: self.link.clone(),
            };
            let history = async move { history.await.ok().flatten() };
            let handle = tokio::spawn(engine.run(settings, history, shutdown.clone()));
            tasks.push(WarmupTask::new("initial-sync", async move {
                synced_rx
                    .wait_for(|s| *s)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }));
            Some(handle)
        } else {
            // Nothing to list: the book is whatever the caller put in it.
            releases_tx.send_replace(true);
            drop(history);
            None
        };
        let warmup = {
            let state = state.clone();
            let ceiling = config.warmup_ceiling();
            // Once the releases are in the book, the hot reads are asked over the socket.
            let then = vec![WarmupTask::new(
                "self-requests",
                warm::self_requests(addr, state.book.clone()),
            )];
            tokio::spawn(async move {
                // Never ready with an empty book while the cluster may have releases: the
                // releases' kinds must have been listed, however long that takes.
                let hold = async move {
                    if !*releases_listed.borrow() {
                        tracing::info!(
                            "readiness waits until Knative Services and Revisions are listed"
                        );
                    }
                    let _ = releases_listed.wait_for(|l| *l).await;
                };
                tokio::select! {
                    () = state.readiness.warm_up(tasks, ceiling, hold, then) => {}
                    () = state.shutdown.cancelled() => {}
                }
            })
        };
        let applying = state
            .applier
            .clone()
            .map(|a| tokio::spawn(a.run(state.leadership.clone(), shutdown.clone())));
        let pruning = tokio::spawn(retention::run(
            state.leadership.clone(),
            state.store.clone(),
            prune_after,
            config.measure.retention(),
            config.measure.prune_interval(),
            shutdown.clone(),
        ));
        let served = serve::serve(
            self.listener,
            state.clone(),
            shutdown.clone(),
            serve::Timeouts {
                drain: config.drain_delay(),
                grace: config.shutdown_grace(),
                header_read: config.header_read_timeout(),
            },
        )
        .await;
        warmup.abort();
        pruning.abort();
        if let Some(applying) = applying {
            let _ = applying.await;
        }
        if let Some(engine) = engine {
            let _ = engine.await;
        }
        // The writer has the grace to store what is queued; the rest stays in the spool.
        let _ = writing.await;
        if let Some(following) = following {
            following.abort();
        }
        lease_stop.cancel();
        if let Some(electing) = electing {
            let _ = electing.await;
        }
        state.store.close().await;
        tracing::info!("stopped");
        served.context("HTTP server failed")
    }
}

/// The Lease's standing and the leadership it gives, when a Lease is configured; refuses
/// settings under which one would not be safe.
#[allow(clippy::type_complexity)]
fn lease_of(
    config: &ServeConfig,
) -> anyhow::Result<(
    Option<tokio::sync::watch::Sender<crate::watch::lease::Standing>>,
    lead::Leadership,
)> {
    let Some(name) = &config.lease.lease_name else {
        return Ok((None, lead::Leadership::single()));
    };
    if let Some(problem) = config.lease.problem() {
        anyhow::bail!(problem);
    }
    anyhow::ensure!(
        !config.database.database_url.starts_with("sqlite:"),
        "SCALING_FACTS_LEASE_NAME={name} needs a store the replicas share: SQLite serves one replica; use PostgreSQL"
    );
    anyhow::ensure!(
        config.measure.watch_kubernetes,
        "SCALING_FACTS_LEASE_NAME={name} needs the Kubernetes API (the Lease lives there), but watching Kubernetes is off"
    );
    let (tx, rx) = tokio::sync::watch::channel(crate::watch::lease::Standing::Unknown);
    Ok((Some(tx), lead::Leadership::by_lease(rx)))
}

/// Connects (retrying) and holds the Lease until `stop`.
async fn elect(
    link: Arc<crate::watch::Link>,
    settings: crate::watch::lease::LeaseSettings,
    standing: tokio::sync::watch::Sender<crate::watch::lease::Standing>,
    stop: CancellationToken,
) {
    let client = loop {
        match link.get().await {
            Ok((client, _)) => break client.clone(),
            Err(e) => {
                tracing::warn!(error = %crate::telemetry::ErrorChain(&e), "cannot reach Kubernetes for the Lease; retrying");
                tokio::select! {
                    () = tokio::time::sleep(settings.retry) => {}
                    () = stop.cancelled() => return,
                }
            }
        }
    };
    crate::watch::lease::Elector::new(client, settings)
        .run(standing, stop)
        .await;
}

/// Cancels `token` on SIGTERM or Ctrl-C.
pub fn cancel_on_signals(token: CancellationToken) {
    tokio::spawn(async move {
        let ctrl_c = tokio::signal::ctrl_c();
        #[cfg(unix)]
        {
            let mut term = match tokio::signal::unix::signal(
                tokio::signal::unix::SignalKind::terminate(),
            ) {
                Ok(s) => s,
                Err(e) => {
                    tracing::error!(error = %e, "cannot listen for SIGTERM; only Ctrl-C stops the service");
                    let _ = ctrl_c.await;
                    token.cancel();
                    return;
                }
            };
            tokio::select! {
                _ = ctrl_c => tracing::info!("Ctrl-C: shutting down"),
                _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
            }
        }
        #[cfg(not(unix))]
        {
            let _ = ctrl_c.await;
        }
        token.cancel();
    });
}

/// Runs `f`, which may take a while (the history's replay, a spool's `fdatasync`), on a
/// worker the runtime can spare: the tasks queued behind the engine move to another. The
/// watchers stamp each event when their task runs, so one kept waiting stamps its events
/// late yet as streamed (the 30-minute soak once recorded a 430 ms wake as 1 ms, half a
/// second late, both its events stamped during a 720 ms replay of the history).
pub(crate) fn off_the_clock<T>(f: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}
