//! The service at fleet scale, as a platform team runs it (README, "Benchmarks"): the
//! simulator holds a scenario's cluster in this process, and the `scaling-facts serve`
//! binary runs as a child process against it, so that its resident memory is its own.
//!
//! Each round starts a fresh service on a fresh SQLite store, measures the time until
//! `/health/ready` opens and until `/health` counts every release in the book, then reads
//! the child's `VmRSS` (and `VmHWM`, its peak) from `/proc`. It prints the medians over the
//! rounds and the highest peak.
//!
//! `cargo bench --bench scale` runs the 10,000-revision scenario (2,000 Services);
//! `cargo bench --bench scale -- 100k` the 100,000-revision one (20,000 Services).
//! `SCALE_BENCH_ROUNDS` sets the rounds (default 3).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

#[path = "common/figures.rs"]
mod figures;
use figures::median;

struct Round {
    ready_s: f64,
    synced_s: f64,
    /// Releases in the book at the end of the round, and those of the scenario missing.
    releases: u64,
    missing: Vec<String>,
    rss_mib: f64,
    peak_mib: f64,
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("bound").port()
}

/// A field of `/proc/<pid>/status`, in MiB.
fn status_mib(pid: u32, field: &str) -> f64 {
    figures::status_kib(&pid.to_string(), field) as f64 / 1024.0
}

/// Starts the service against `kubeconfig` with its store in `dir`.
fn start(kubeconfig: &std::path::Path, dir: &std::path::Path, port: u16) -> Child {
    Command::new(env!("CARGO_BIN_EXE_scaling-facts"))
        .arg("serve")
        .env("SCALING_FACTS_LISTEN_ADDR", format!("127.0.0.1:{port}"))
        .env(
            "SCALING_FACTS_DATABASE_URL",
            format!("sqlite://{}/scale.db?mode=rwc", dir.display()),
        )
        .env("SCALING_FACTS_SPOOL_PATH", dir.join("scale.spool"))
        .env("SCALING_FACTS_KUBECONFIG", kubeconfig)
        .env("SCALING_FACTS_ALLOW_ANONYMOUS_READS", "true")
        .env("SCALING_FACTS_DRAIN_DELAY_MS", "0")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the service binary starts")
}

async fn round(kubeconfig: &std::path::Path, releases: u64) -> Round {
    let dir = tempfile::tempdir().expect("temp dir");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let start_at = Instant::now();
    let mut child = start(kubeconfig, dir.path(), port);
    let pid = child.id();
    let deadline = start_at + Duration::from_secs(120);
    let mut ready_s = None;
    // A release the sync lost never comes: 10 s after readiness the book is what it is.
    let mut settle: Option<Instant> = None;
    let mut count = 0;
    let synced_s = loop {
        assert!(
            Instant::now() < deadline,
            "the service did not become ready in 120 s"
        );
        if settle.is_some_and(|s| Instant::now() > s) {
            break f64::NAN;
        }
        if ready_s.is_none()
            && let Ok(r) = http.get(format!("{base}/health/ready")).send().await
            && r.status() == 200
        {
            ready_s = Some(start_at.elapsed().as_secs_f64());
            settle = Some(Instant::now() + Duration::from_secs(10));
        }
        if ready_s.is_some()
            && let Ok(r) = http.get(format!("{base}/health")).send().await
            && let Ok(health) = r.json::<serde_json::Value>().await
        {
            count = health["releases"].as_u64().unwrap_or(0);
            if count == releases {
                break start_at.elapsed().as_secs_f64();
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let missing = if count == releases {
        Vec::new()
    } else {
        missing_releases(&http, &base, releases).await
    };
    let r = Round {
        ready_s: ready_s.expect("ready before synced"),
        synced_s,
        releases: count,
        missing,
        rss_mib: status_mib(pid, "VmRSS:"),
        peak_mib: status_mib(pid, "VmHWM:"),
    };
    child.kill().expect("kill");
    child.wait().expect("reaped");
    r
}

/// The scenario's releases (`svc-N.scale`) that `GET /v1/releases` does not list.
async fn missing_releases(http: &reqwest::Client, base: &str, releases: u64) -> Vec<String> {
    let listed: serde_json::Value = http
        .get(format!("{base}/v1/releases"))
        .send()
        .await
        .expect("releases")
        .json()
        .await
        .expect("json");
    let have: std::collections::BTreeSet<&str> = listed["releases"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["release"].as_str())
        .collect();
    (0..releases)
        .map(|i| format!("svc-{i}.scale"))
        .filter(|r| !have.contains(r.as_str()))
        .collect()
}

fn main() {
    // `cargo bench` passes `--bench`; a name filter may follow.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let (scenario, services, budget_s, budget_mib) = match filter.as_deref() {
        Some("100k") => ("scale-100k.yaml", 20_000u64, 10.0, 256.0),
        _ => ("scale-10k.yaml", 2_000, 5.0, 48.0),
    };
    let rounds: usize = std::env::var("SCALE_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let path = format!(
            "{}/crates/scaling-facts-sim/scenarios/{scenario}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(path).expect("scenario");
        let scenario = scaling_facts_sim::Scenario::parse(&text).expect("scenario parses");
        let shutdown = CancellationToken::new();
        let sim = scaling_facts_sim::Simulator::start(
            "127.0.0.1:0".parse().expect("addr"),
            scenario,
            shutdown.clone(),
        )
        .await
        .expect("simulator");
        let dir = tempfile::tempdir().expect("temp dir");
        let kubeconfig = dir.path().join("kubeconfig");
        sim.write_kubeconfig(&kubeconfig).expect("kubeconfig");
        let mut all = Vec::new();
        for i in 0..rounds {
            let r = round(&kubeconfig, services).await;
            println!(
                "round {}: ready {:.2} s, {} of {services} releases in the book ({:.2} s), VmRSS {:.1} MiB, VmHWM {:.1} MiB{}",
                i + 1,
                r.ready_s,
                r.releases,
                r.synced_s,
                r.rss_mib,
                r.peak_mib,
                if r.missing.is_empty() {
                    String::new()
                } else {
                    format!("; missing {:?}", r.missing)
                }
            );
            all.push(r);
        }
        let complete: Vec<&Round> = all.iter().filter(|r| r.missing.is_empty()).collect();
        println!(
            "the service on {} revisions ({services} services), {rounds} rounds: every release in the book after {} of {rounds} syncs, after {:.2} s (median of those; budget {budget_s} s), ready after {:.2} s; VmRSS then {:.1} MiB (median; budget {budget_mib} MiB), peak VmHWM {:.1} MiB (highest)",
            services * 5,
            complete.len(),
            median(complete.iter().map(|r| r.synced_s).collect()),
            median(all.iter().map(|r| r.ready_s).collect()),
            median(all.iter().map(|r| r.rss_mib).collect()),
            all.iter().map(|r| r.peak_mib).fold(0.0, f64::max),
        );
        sim.stop().await;
    });
}
