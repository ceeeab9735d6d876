//! Start-up and shutdown of `serve`: wires the store, the facts book and the API to one
//! cancellation token, runs the warm-up behind the readiness gate, and stops on SIGTERM or
//! Ctrl-C.

use std::sync::Arc;

use anyhow::Context;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub mod engine;
pub mod persist;
pub mod retention;

use crate::book::FactsBook;
use crate::config::ServeConfig;
use crate::serve::auth::Tokens;
use crate::serve::streams::StreamLimits;
use crate::serve::{self, AppState, Shared};
use crate::store::Store;
use crate::telemetry::health::{Readiness, WarmupTask};
use crate::telemetry::metrics::Metrics;
use engine::{Engine, EngineSettings};

/// Everything `serve` built, before it starts listening; tests and the demo use it to run
/// the service in-process.
pub struct Service {
    pub state: AppState,
    pub listener: TcpListener,
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
        let store = Store::connect_lazy(&config.database).context("opening the store")?;
        let listener = TcpListener::bind(config.listen_addr)
            .await
            .with_context(|| format!("binding {}", config.listen_addr))?;
        let state = AppState::new(Shared {
            book: Arc::new(FactsBook::new(std::time::Duration::from_secs(
                config.stale_after_seconds,
            ))),
            store,
            tokens,
            allow_anonymous_reads: config.allow_anonymous_reads,
            readiness: Readiness::new(),
            metrics: Arc::new(Metrics::new()),
            shutdown,
            batch_max_releases: config.batch_max_releases,
            request_timeout: config.request_timeout(),
            max_body_bytes: config.max_body_bytes,
            streams: StreamLimits::new(config.max_streams, config.max_streams_per_token),
        });
        Ok(Self { state, listener })
    }

    /// Serves until the shutdown token is cancelled. Warm-up runs beside the server so that
    /// `/alive` and `/health` answer while readiness is still closed.
    pub async fn run(self, config: &ServeConfig) -> anyhow::Result<()> {
        let state = self.state.clone();
        let shutdown = state.shutdown.clone();
        let addr = self.listener.local_addr()?;
        tracing::info!(%addr, backend = ?state.store.backend(), "serving");
        let (migrated_tx, migrated) = tokio::sync::watch::channel(false);
        let (engine, engine_tasks) = if config.measure.watch_kubernetes {
            let (synced, mut synced_rx) = tokio::sync::watch::channel(false);
            let (restored, mut restored_rx) = tokio::sync::watch::channel(false);
            let engine = Engine {
                book: state.book.clone(),
                store: state.store.clone(),
                metrics: state.metrics.clone(),
                synced,
                restored,
                migrated,
            };
            let settings = EngineSettings {
                tracker: config.measure.tracker(),
                watch: config.measure.watch(),
                kubeconfig: config.measure.kubeconfig.clone(),
            };
            let handle = tokio::spawn(engine.run(settings, shutdown.clone()));
            let tasks = vec![
                WarmupTask::new("history", async move {
                    restored_rx
                        .wait_for(|r| *r)
                        .await
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                }),
                WarmupTask::new("initial-sync", async move {
                    synced_rx
                        .wait_for(|s| *s)
                        .await
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                }),
            ];
            (Some(handle), tasks)
        } else {
            (None, Vec::new())
        };
        let warmup = {
            let state = state.clone();
            let ceiling = config.warmup_ceiling();
            tokio::spawn(async move {
                let store = state.store.clone();
                let mut tasks = vec![WarmupTask::new("store", async move {
                    let done = store.migrate().await;
                    migrated_tx.send_replace(true);
                    done.map_err(|e| crate::telemetry::ErrorChain(&e).to_string())
                })];
                tasks.extend(engine_tasks);
                tokio::select! {
                    () = state.readiness.warm_up(tasks, ceiling) => {}
                    () = state.shutdown.cancelled() => {}
                }
            })
        };
        let pruning = tokio::spawn(retention::run(
            state.store.clone(),
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
        if let Some(engine) = engine {
            // The engine stops with the token and drains its queued writes first.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(10), engine).await;
        }
        state.store.close().await;
        tracing::info!("stopped");
        served.context("HTTP server failed")
    }
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
