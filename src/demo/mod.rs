//! `scaling-facts demo`: the whole story on one machine. The simulator plays a small
//! Knative cluster, the service watches it (SQLite in a temporary folder), and the demo
//! client calls releases as an SDK should. A live table shows each release's state and
//! measured cold start next to the simulator's truth; after the run, a summary compares
//! measured and true percentiles per revision, counts errors by phase, and shows what
//! a chain of three cold releases costs called one after the other, prewarmed by the
//! client, and woken by the service from the dependencies the releases declare.
//!
//! - [`client`]: the demo client (also `scaling-facts demo-client`);
//! - [`report`]: the live table and the summary.

pub mod client;
pub mod report;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use tokio_util::sync::CancellationToken;

use crate::config::{DemoConfig, LogFormat, ServeConfig};
use crate::service::Service;
use client::{Plan, Score};
use scaling_facts_client::Client;
use scaling_facts_sim::{Scenario, Simulator};

const SCENARIO: &str = scaling_facts_sim::scenarios::DEMO;

/// The demo's plan over the demo scenario.
pub fn plan() -> Plan {
    Plan {
        releases: vec![
            "rel-quick".into(),
            "steady.demo".into(),
            "heavy.demo".into(),
        ],
        chain: vec![
            "chain-a.demo".into(),
            "chain-b.demo".into(),
            "chain-c.demo".into(),
        ],
        declared: vec![
            "deps-a.demo".into(),
            "deps-b.demo".into(),
            "deps-c.demo".into(),
        ],
        broken: Some("broken.demo".into()),
        // The 6 s stable window, the pod's removal, and a margin.
        pause: Duration::from_millis(8_500),
    }
}

pub async fn run(config: &DemoConfig, shutdown: CancellationToken) -> anyhow::Result<()> {
    let scenario = Scenario::parse(SCENARIO).context("the demo scenario")?;
    let sim = Simulator::start("127.0.0.1:0".parse()?, scenario, shutdown.clone())
        .await
        .context("starting the simulator")?;
    let dir = tempfile::tempdir().context("a temporary folder")?;
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig)?;

    let mut serve = serve_config(config, dir.path(), &kubeconfig, &sim.url());
    let service = match Service::build(&serve, shutdown.clone()).await {
        Ok(s) => s,
        Err(e) => {
            // The usual port is taken: any free one will do for a demo.
            tracing::debug!(error = %e, "demo port taken; using a free one");
            serve.listen_addr = "127.0.0.1:0".parse()?;
            Service::build(&serve, shutdown.clone()).await?
        }
    };
    let api_url = format!("http://{}", service.listener.local_addr()?);
    let readiness = service.state.readiness.clone();
    let serve_for_run = serve.clone();
    let server = tokio::spawn(async move { service.run(&serve_for_run).await });
    while !readiness.is_open() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The watches start as readiness opens; what changes in their first moments is dated
    // to the second (it may be a catch-up burst), so the first calls wait for them to settle.
    tokio::time::sleep(Duration::from_millis(500)).await;

    println!(
        "scaling-facts demo: a simulated Knative cluster, the service, and a client calling it."
    );
    println!(
        "  service   {api_url}   (anonymous reads on; try: curl {api_url}/v1/releases/heavy.demo/runtime)"
    );
    println!(
        "  simulator {}   (activator: {}/activator/<namespace>/<service>)",
        sim.url(),
        sim.url()
    );
    println!(
        "  running for {} s{}\n",
        config.duration_seconds,
        if config.keep_running {
            ", then kept up until Ctrl-C"
        } else {
            ""
        }
    );

    let api = Client::new(api_url.clone(), None);
    let score = Arc::new(Mutex::new(Score::default()));
    let stop_client = CancellationToken::new();
    let plan = plan();
    let driver = tokio::spawn(client::run(
        api.clone(),
        sim.url(),
        plan.clone(),
        score.clone(),
        stop_client.clone(),
    ));
    let table = report::Table::new(
        api.clone(),
        plan.clone(),
        Some(sim.cluster.clone()),
        score.clone(),
    );
    let deadline = tokio::time::Instant::now() + Duration::from_secs(config.duration_seconds);
    loop {
        table.render().await;
        tokio::select! {
            () = tokio::time::sleep_until(deadline) => break,
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
            () = shutdown.cancelled() => break,
        }
    }
    stop_client.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(30), driver).await;
    // Let the last wakes reach the service before the summary.
    tokio::time::sleep(Duration::from_secs(1)).await;
    table.render().await;
    let summary = report::summary(&api, &plan, &sim.cluster, &score).await;
    println!("{summary}");
    if config.keep_running && !shutdown.is_cancelled() {
        println!("Still running: {api_url} (Ctrl-C to stop).");
        shutdown.cancelled().await;
    }
    shutdown.cancel();
    let _ = server.await;
    sim.stop().await;
    Ok(())
}

/// `demo-client`: the client alone against a running service and activator.
pub async fn run_client(config: &crate::config::DemoClientConfig) -> anyhow::Result<()> {
    let api = Client::new(config.api_url.clone(), config.token.clone());
    let plan = Plan {
        releases: config.releases.clone(),
        chain: config.chain.clone(),
        declared: Vec::new(),
        broken: None,
        pause: Duration::from_secs_f64(config.pause_seconds.max(0.0)),
    };
    anyhow::ensure!(
        !plan.releases.is_empty() || !plan.chain.is_empty(),
        "name at least one --release or a --chain"
    );
    let score = Arc::new(Mutex::new(Score::default()));
    let stop = CancellationToken::new();
    let driver = tokio::spawn(client::run(
        api.clone(),
        config.activator_url.clone(),
        plan.clone(),
        score.clone(),
        stop.clone(),
    ));
    let table = report::Table::new(api, plan, None, score);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(config.duration_seconds);
    while tokio::time::Instant::now() < deadline {
        table.render().await;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    stop.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(30), driver).await;
    table.render().await;
    Ok(())
}

fn serve_config(
    config: &DemoConfig,
    dir: &std::path::Path,
    kubeconfig: &std::path::Path,
    sim_url: &str,
) -> ServeConfig {
    let mut serve = ServeConfig::defaults();
    serve.listen_addr = config.listen_addr;
    serve.database.database_url = format!("sqlite://{}/demo.db?mode=rwc", dir.display());
    serve.allow_anonymous_reads = true;
    serve.log_format = LogFormat::Text;
    serve.measure.kubeconfig = Some(kubeconfig.to_owned());
    // The declared chain (deps-a calls deps-b, which calls deps-c) is woken by the service
    // through the simulator's activator; the demo's rounds come every dozen seconds, so
    // the cooldown is shorter than a production default.
    serve.act.dependency_wake_url = Some(format!("{sim_url}/activator/{{namespace}}/{{service}}"));
    serve.act.dependency_wake_cooldown_seconds = 5;
    // The broken release should show as unavailable within the demo, not after a minute.
    serve.measure.image_pull_failure_after_seconds = 5;
    serve.shutdown_grace_ms = 2_000;
    // Nothing balances load in front of the demo: stop at once.
    serve.drain_delay_ms = 0;
    serve
}
