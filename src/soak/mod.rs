//! `scaling-facts soak`: the simulator, the service (this binary's `serve`, as a child
//! process) and a fault schedule, for as long as asked; then every wake the simulator
//! really ran is compared with the store, and one line says how it went.
//!
//! Faults, one every 1.5-4 s, drawn from a seed: the API server drops every watch, answers
//! `410 Gone`, restarts or refuses connections; the service is killed with SIGKILL or
//! stopped with SIGTERM and started again; the store goes away for 2-6 s (PostgreSQL: a
//! proxy refuses new connections and cuts the open ones; SQLite: another connection holds
//! the write lock); with `--api-away`, the API server also answers every request 503 for
//! 2-6 s and the watches then resume with the backlog. Meanwhile five services wake over
//! and over: three that serve (one slowly), one whose image never pulls (failed), and one scaled back to zero before its
//! 20-second image pull ends (aborted). An aborted wake lasts the scenario's stable window
//! (6 s), as in Knative, which keeps a revision's pods wanted that long after the last
//! request; and the aborted service's revision is created at zero, since Knative never
//! scales a new revision away before its first start either serves or fails.
//!
//! With `--replicas 2` (PostgreSQL) two services share a Lease, and the kills go to the
//! leader: SIGKILL, a SIGSTOP of 1-5 s then SIGCONT, and SIGTERM of either; at the end both
//! must serve the same facts.
//!
//! - [`child`]: the service process; [`proxy`]: the PostgreSQL outage;
//! - [`compare`]: truth against the store.

pub mod child;
pub mod compare;
pub mod proxy;
mod schedule;

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio_util::sync::CancellationToken;

use crate::config::{DatabaseConfig, SoakConfig};
use crate::store::Store;
use scaling_facts_sim::{Scenario, Simulator};

const SCENARIO: &str = r#"
seed: 23
bookmark_interval_ms: 500
config_autoscaler: {stable-window: 6s}
config_deployment: {progress-deadline: 1s}
services:
  - {namespace: shop, name: cart, timing: {provisioning_ms: 100, pulling_image_ms: 200, starting_ms: 100, terminating_ms: 50}}
  - {namespace: pay, name: ledger, timing: {provisioning_ms: {min: 10, max: 150}, pulling_image_ms: {min: 10, max: 300}, starting_ms: {min: 10, max: 150}, terminating_ms: 50}}
  - {namespace: shop, name: search, timing: {provisioning_ms: 200, pulling_image_ms: 2500, starting_ms: 300, terminating_ms: 50}}
  - {namespace: pay, name: broken, failure: image_pull_backoff, timing: {provisioning_ms: 50, pulling_image_ms: 100, starting_ms: 50, terminating_ms: 50}}
  - {namespace: shop, name: slow, start: idle, timing: {provisioning_ms: 300, pulling_image_ms: 20000, starting_ms: 300, terminating_ms: 50}}
"#;

/// What one soak found: the line it prints, and whether it passed.
#[derive(Debug)]
pub struct Outcome {
    pub line: String,
    pub tally: compare::Tally,
    /// The service's served counts agree with the stored wakes, per revision.
    pub histograms_agree: bool,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        self.tally.lost == 0 && self.tally.doubled == 0 && self.histograms_agree
    }
}

/// Where the run keeps its database.
enum Db {
    Sqlite {
        path: std::path::PathBuf,
    },
    Postgres {
        admin: String,
        name: String,
        proxy: proxy::Proxy,
    },
}

pub async fn run(config: &SoakConfig) -> anyhow::Result<Outcome> {
    let dir = tempfile::tempdir().context("a temporary folder")?;
    let stop = CancellationToken::new();
    let scenario = Scenario::parse(SCENARIO).context("the soak scenario")?;
    let sim = Simulator::start("127.0.0.1:0".parse()?, scenario, stop.clone())
        .await
        .context("starting the simulator")?;
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig)?;
    let db = match &config.database_url {
        None => Db::Sqlite {
            path: dir.path().join("soak.db"),
        },
        Some(admin) => {
            let name = format!("sf_soak_{}", uuid::Uuid::new_v4().simple());
            crate::store::faults::create_postgres_database(admin, &name).await?;
            let target = postgres_target(admin)?;
            Db::Postgres {
                admin: admin.clone(),
                name,
                proxy: proxy::Proxy::start(target).await?,
            }
        }
    };
    let database_url = match &db {
        Db::Sqlite { path } => format!("sqlite://{}?mode=rwc", path.display()),
        Db::Postgres { admin, name, proxy } => {
            let user = admin
                .split_once("://")
                .and_then(|(_, r)| r.split_once('@'))
                .map_or("postgres", |(u, _)| u);
            format!("postgres://{user}@{}/{name}", proxy.addr)
        }
    };
    anyhow::ensure!(
        config.replicas == 1 || matches!(db, Db::Postgres { .. }),
        "more than one replica needs PostgreSQL: give --database-url"
    );
    let replicated = config.replicas > 1;
    let mut recipes = Vec::new();
    for i in 0..config.replicas {
        let suffix = if replicated {
            format!("-{i}")
        } else {
            String::new()
        };
        recipes.push(child::Recipe {
            port: child::free_port()?,
            database_url: database_url.clone(),
            kubeconfig: kubeconfig.clone(),
            spool: dir.path().join(format!("soak{suffix}.spool")),
            log: dir.path().join("service.log"),
            lease_identity: replicated.then(|| format!("soak-replica-{i}")),
        });
    }
    let outcome = schedule::Run {
        cluster: sim.cluster.clone(),
        recipes,
        db: &db,
        seed: config.seed,
        duration: Duration::from_secs(config.duration_seconds),
        api_away: config.api_away,
    }
    .go()
    .await;
    let outcome = match outcome {
        Ok(report) => {
            let store = Store::connect(&DatabaseConfig {
                database_url: database_url.clone(),
                database_url_file: None,
                database_max_connections: 2,
                database_acquire_timeout_ms: 5_000,
            })
            .await?;
            let stored = store.wakes_since(chrono::DateTime::UNIX_EPOCH).await?;
            let delay = store.longest_write_delay_ms().await?.unwrap_or(0);
            store.close().await;
            let tally = compare::compare(&sim.cluster.truth.wakes(), &stored);
            for d in &tally.detail {
                tracing::warn!("{d}");
            }
            let rows = served_per_revision(&stored);
            let agree = report.served_in_memory.iter().all(|m| *m == rows)
                && report.replicas_agree != Some(false);
            let line = format!(
                "soak {} s ({}{}, seed {}): wakes true {} / recorded {} / lost {} / doubled {} / phantom {} / wrong outcome {}; longest write delay {:.1} s; 5xx {}; histograms agree with the store{}: {}; faults {}",
                config.duration_seconds,
                match &db {
                    Db::Sqlite { .. } => "sqlite",
                    Db::Postgres { .. } => "postgres",
                },
                if replicated { ", 2 replicas" } else { "" },
                config.seed,
                tally.truth,
                tally.recorded,
                tally.lost,
                tally.doubled,
                tally.phantom,
                tally.wrong_outcome,
                delay as f64 / 1000.0,
                report.server_errors,
                if replicated {
                    " and both replicas serve identical facts"
                } else {
                    ""
                },
                if agree { "yes" } else { "no" },
                report.faults,
            );
            Ok(Outcome {
                line,
                tally,
                histograms_agree: agree,
            })
        }
        Err(e) => Err(e),
    };
    if let Db::Postgres { admin, name, .. } = &db {
        let _ = crate::store::faults::drop_postgres_database(admin, name).await;
    }
    let log = dir.path().join("service.log");
    if outcome
        .as_ref()
        .map_or(true, |o| !o.passed() || !o.tally.detail.is_empty())
    {
        // Kept for a run with any problem (a phantom or a wrong outcome too, which do not
        // fail it): the service's own account of it.
        let keep = std::env::temp_dir().join(format!("scaling-facts-soak-{}.log", config.seed));
        let _ = std::fs::copy(&log, &keep);
        tracing::warn!(log = %keep.display(), "the service's log of this run");
    }
    sim.stop().await;
    outcome
}

/// Served wakes per revision UID in the store.
pub fn served_per_revision(
    stored: &[scaling_facts_api::WakeRecord],
) -> std::collections::BTreeMap<String, u64> {
    let mut out = std::collections::BTreeMap::new();
    for w in stored.iter().filter(|w| {
        w.kind == scaling_facts_api::WakeKind::Wake
            && w.outcome == scaling_facts_api::Outcome::Served
    }) {
        *out.entry(w.revision_uid.clone()).or_insert(0) += 1;
    }
    out
}

fn postgres_target(admin: &str) -> anyhow::Result<std::net::SocketAddr> {
    let host_port = admin
        .split_once("://")
        .map(|(_, r)| r.rsplit_once('@').map_or(r, |(_, h)| h))
        .and_then(|r| r.split('/').next())
        .context("a host in the PostgreSQL URL")?;
    let with_port = if host_port.contains(':') {
        host_port.to_owned()
    } else {
        format!("{host_port}:5432")
    };
    let addr: std::net::SocketAddr = with_port
        .replace("localhost", "127.0.0.1")
        .parse()
        .context("the PostgreSQL host must be a loopback address")?;
    anyhow::ensure!(
        addr.ip().is_loopback(),
        "the soak only stages outages against a loopback database"
    );
    Ok(addr)
}

/// Shared between the drivers, the prober and the fault schedule.
type Cluster = Arc<scaling_facts_sim::Cluster>;
