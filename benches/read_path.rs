//! The hot read against its physical limit (README, "Benchmarks"): the service's
//! `GET /v1/releases/{release}/scaling` and `POST /v1/scaling/batch`, with a bearer token,
//! against a bare axum handler serving the same pre-serialized bytes from a `HashMap`
//! through the same HTTP/1.1 accept loop. Both servers run on a single-threaded runtime
//! pinned to core 0; `wrk` (Debian's) runs pinned to core 1.
//!
//! Each round drives both, in alternating order, at full load (throughput), then both at
//! once at a fixed rate either carries easily (p99: each of 16 connections waits 1 ms after
//! every answer); the figures printed are the medians over rounds of the service-to-bare
//! ratios.
//!
//! `cargo bench --bench read_path` (4 rounds of 5 s per figure); `-- --releases 20000` for a
//! book of that size; `READ_BENCH_ROUNDS` and `READ_BENCH_SECONDS` override the defaults.

mod common;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use chrono::Utc;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

use scaling_facts::book::FactsBook;
use scaling_facts::measure::facts::ReleaseFacts;
use scaling_facts::serve::auth::{Tokens, new_token};
use scaling_facts::serve::streams::StreamLimits;
use scaling_facts_api::BatchScalingRequest;

const BATCH: usize = 10;

/// Pins the calling thread to one CPU.
fn pin_to(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; pid 0 is the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Runs `router` on a loopback port, on a single-threaded runtime pinned to core 0.
fn spawn_server<F, Fut>(name: &str, make: F) -> SocketAddr
where
    F: FnOnce(TcpListener) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    let (tx, rx) = std::sync::mpsc::channel();
    // Named, so that `perf record -C 0` can be reported per server (`perf report --comm`).
    let thread = std::thread::Builder::new().name(name.to_owned());
    thread
        .spawn(move || {
            pin_to(0);
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
                tx.send(listener.local_addr().expect("addr")).expect("send");
                make(listener).await;
            });
        })
        .expect("thread");
    rx.recv().expect("server starts")
}

fn keys(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("svc{i}.bench")).collect()
}

/// The service's own router and accept loop, with a book of `n` idle releases.
fn start_service(n: usize, tokens: Tokens) -> (SocketAddr, Arc<FactsBook>) {
    let book = Arc::new(FactsBook::new(Duration::from_secs(90)));
    for (i, key) in keys(n).iter().enumerate() {
        let facts = ReleaseFacts::idle(key, "bench", &format!("svc{i}"), Utc::now());
        book.upsert(facts);
    }
    let shared_book = book.clone();
    let addr = spawn_server("service", move |listener| async move {
        let streams = StreamLimits::new(100, 10);
        let (state, _dir) = common::bench_state(shared_book, tokens, false, streams).await;
        common::serve(listener, state).await;
    });
    (addr, book)
}

type Bare = Arc<HashMap<String, Bytes>>;

async fn bare_scaling(State(map): State<Bare>, Path(release): Path<String>) -> impl IntoResponse {
    match map.get(&release) {
        Some(b) => ([(header::CONTENT_TYPE, "application/json")], b.clone()).into_response(),
        None => axum::http::StatusCode::NOT_FOUND.into_response(),
    }
}

async fn bare_batch(
    State(map): State<Bare>,
    axum::Json(body): axum::Json<BatchScalingRequest>,
) -> impl IntoResponse {
    let mut out = Vec::with_capacity(32 + body.releases.len() * 128);
    out.extend_from_slice(br#"{"scaling":{"#);
    for (i, key) in body
        .releases
        .iter()
        .filter(|k| map.contains_key(*k))
        .enumerate()
    {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, key).expect("vec");
        out.push(b':');
        out.extend_from_slice(&map[key]);
    }
    out.extend_from_slice(br#"},"unknown":[]}"#);
    ([(header::CONTENT_TYPE, "application/json")], out)
}

/// A router with nothing but the two handlers, behind the same kind of accept loop.
fn start_bare(map: Bare) -> SocketAddr {
    spawn_server("bare", move |listener| async move {
        let router = Router::new()
            .route("/v1/releases/{release}/scaling", get(bare_scaling))
            .route("/v1/scaling/batch", post(bare_batch))
            .with_state(map);
        let mut http = http1::Builder::new();
        http.timer(TokioTimer::new()).keep_alive(true);
        loop {
            let (tcp, _) = listener.accept().await.expect("accept");
            tcp.set_nodelay(true).expect("nodelay");
            let service = TowerToHyperService::new(router.clone());
            let conn = http.serve_connection(TokioIo::new(tcp), service);
            tokio::spawn(async move {
                let _ = conn.await;
            });
        }
    })
}

#[derive(Debug, Clone, Copy)]
struct Run {
    rps: f64,
    p99_ms: f64,
}

/// One wrk run on core 1; `script` sets the method, body and pacing.
fn wrk(url: &str, token: &str, connections: usize, seconds: u64, script: &str) -> Run {
    let file = tempfile::NamedTempFile::new().expect("script file");
    std::fs::write(file.path(), script).expect("write script");
    let out = Command::new("taskset")
        .args(["-c", "1", "wrk", "-t1", "--latency"])
        .arg(format!("-c{connections}"))
        .arg(format!("-d{seconds}s"))
        .arg("-s")
        .arg(file.path())
        .args(["-H", &format!("Authorization: Bearer {token}")])
        .arg(url)
        .output()
        .expect("wrk runs (apt-get install wrk)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains("Non-2xx"),
        "errors from {url}:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rps = text
        .lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no throughput in wrk's output:\n{text}"));
    let p99 = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("99%"))
        .map(|v| millis(v.trim()))
        .unwrap_or_else(|| panic!("no p99 in wrk's output:\n{text}"));
    Run { rps, p99_ms: p99 }
}

fn millis(v: &str) -> f64 {
    let split = v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len());
    let (n, unit) = v.split_at(split);
    let n: f64 = n.parse().unwrap_or(f64::NAN);
    match unit {
        "us" => n / 1_000.0,
        "ms" => n,
        "s" => n * 1_000.0,
        _ => f64::NAN,
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let releases = args
        .iter()
        .position(|a| a == "--releases")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(100usize);
    let rounds = env_or("READ_BENCH_ROUNDS", 4);
    let seconds = env_or("READ_BENCH_SECONDS", 5);

    let (token, entry) = new_token("bench", &["read".into()]).expect("token");
    let tokens = Tokens::parse(&entry).expect("tokens");
    let (service, book) = start_service(releases, tokens);
    let all = keys(releases);
    let bare: Bare = Arc::new(
        all.iter()
            .map(|k| (k.clone(), book.scaling_json(k).expect("known")))
            .collect(),
    );
    let bare = start_bare(bare);

    let one = &all[releases / 2];
    let batch: Vec<&String> = all
        .iter()
        .step_by((releases / BATCH).max(1))
        .take(BATCH)
        .collect();
    let body = serde_json::to_string(&serde_json::json!({ "releases": batch })).expect("json");
    let post = format!(
        "wrk.method = \"POST\"\nwrk.body = '{body}'\nwrk.headers[\"Content-Type\"] = \"application/json\"\n"
    );
    let paced = "function delay()\n  return 1\nend\n";
    let cases = [
        (
            "GET scaling",
            format!("/v1/releases/{one}/scaling"),
            String::new(),
        ),
        (
            "POST batch (10 releases)",
            "/v1/scaling/batch".to_owned(),
            post,
        ),
    ];
    println!(
        "read path: {releases} releases, {rounds} rounds of {seconds} s per figure, service and bare handler on core 0, wrk on core 1"
    );
    for (name, path, script) in &cases {
        let mut ratios = Vec::new();
        let mut p99s = Vec::new();
        let mut figures = Vec::new();
        for round in 0..rounds {
            let mut order = [("service", service), ("bare", bare)];
            if round % 2 == 1 {
                order.reverse();
            }
            let mut full = HashMap::new();
            let mut fixed = HashMap::new();
            for (who, addr) in order {
                let url = format!("http://{addr}{path}");
                // Warm the connections and the caches first.
                wrk(&url, &token, 64, 1, script);
                full.insert(who, wrk(&url, &token, 64, seconds, script));
            }
            // Both at once: a latency percentile depends on the state the machine is in
            // (an idle core takes longer to wake), which differs from one run to the
            // next; run together, both see the same machine, each at a rate far below
            // what either carries alone.
            let paced_script = format!("{script}{paced}");
            std::thread::scope(|scope| {
                let runs: Vec<_> = order
                    .iter()
                    .map(|(who, addr)| {
                        let url = format!("http://{addr}{path}");
                        let (token, paced_script) = (&token, &paced_script);
                        (
                            *who,
                            scope.spawn(move || wrk(&url, token, 16, seconds, paced_script)),
                        )
                    })
                    .collect();
                for (who, run) in runs {
                    fixed.insert(who, run.join().expect("wrk thread"));
                }
            });
            let (s, b) = (full["service"], full["bare"]);
            ratios.push(s.rps / b.rps);
            p99s.push(fixed["service"].p99_ms / fixed["bare"].p99_ms);
            figures.push(format!(
                "{:.0}/{:.0} req/s, p99 at {:.0} req/s {:.3}/{:.3} ms",
                s.rps, b.rps, fixed["bare"].rps, fixed["service"].p99_ms, fixed["bare"].p99_ms
            ));
        }
        println!("{name}: rounds (service/bare) {}", figures.join("; "));
        println!(
            "{name}: throughput ratio median {:.2} (rounds {}), fixed-rate p99 ratio median {:.2}",
            median(ratios.clone()),
            ratios
                .iter()
                .map(|r| format!("{r:.2}"))
                .collect::<Vec<_>>()
                .join(", "),
            median(p99s)
        );
    }
}
