//! Fan-out (README, "Benchmarks"): how long a change of one release takes to reach every
//! one of its event-stream subscribers, and what an open stream costs the service.
//!
//! The service runs in this process (its router and accept loop, on a two-worker
//! runtime, with a book of one release); the subscribers run in a child process (this
//! binary again, with `--subscribers`), so that both sides have a whole file-descriptor
//! limit and the service's memory is measured alone. Once every subscriber has the
//! current state, the service's resident memory is read again, then the release changes
//! a few times; the child reports when each subscriber saw each change, by the same clock.
//!
//! `cargo bench --bench fanout` (10,000 subscribers, 5 changes); `FANOUT_SUBSCRIBERS`
//! and `FANOUT_CHANGES` override.

mod common;
#[path = "common/figures.rs"]
mod figures;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write as _};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chrono::Utc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use scaling_facts::book::FactsBook;
use scaling_facts::measure::facts::ReleaseFacts;
use scaling_facts::serve::auth::Tokens;
use scaling_facts::serve::streams::StreamLimits;
use scaling_facts_api::{Phase, RuntimeState};

const RELEASE: &str = "shop.bench";

fn micros_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_micros() as u64
}

/// The process's resident memory, from `/proc/self/status`.
fn rss_bytes() -> u64 {
    figures::status_kib("self", "VmRSS:") * 1024
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn facts(n: usize) -> ReleaseFacts {
    let mut f = ReleaseFacts::idle(RELEASE, "bench", "shop", Utc::now());
    if n % 2 == 1 {
        f.state = RuntimeState::Waking;
        f.presence.phase = Phase::Provisioning;
        f.presence.desired_replicas = 1;
    }
    f
}

async fn start_service(book: Arc<FactsBook>, streams: usize) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let limits = StreamLimits::new(streams, streams);
    // The store is connected before this returns, so that it is in the memory read before
    // the streams open.
    let (state, dir) = common::bench_state(book, Tokens::default(), true, limits).await;
    tokio::spawn(async move {
        let _dir = dir;
        common::serve(listener, state).await;
    });
    addr
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    let rank = ((p / 100.0 * sorted.len() as f64).ceil() as usize).max(1);
    sorted[rank - 1]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--subscribers") {
        let addr = args[i + 1].parse().expect("address");
        let n = args[i + 2].parse().expect("count");
        let changes = args[i + 3].parse().expect("changes");
        subscribers(addr, n, changes);
        return;
    }
    let n = env_or("FANOUT_SUBSCRIBERS", 10_000);
    let changes = env_or("FANOUT_CHANGES", 5);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let book = Arc::new(FactsBook::new(Duration::from_secs(90)));
    book.upsert(facts(0));
    let addr = rt.block_on(start_service(book.clone(), n + 16));
    let before = rss_bytes();

    let mut child = Command::new(std::env::current_exe().expect("this binary"))
        .args(["--subscribers", &addr.to_string(), &n.to_string()])
        .arg(changes.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .expect("subscriber process");
    let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
    let mut next = || lines.next().expect("a line").expect("readable");
    let ready = next();
    assert_eq!(ready, "ready", "subscribers: {ready}");
    // Let the streams settle (their first event written, buffers shrunk) before reading.
    std::thread::sleep(Duration::from_millis(500));
    let after = rss_bytes();
    println!(
        "fan-out: {n} subscribers of one release; service RSS {:.1} MiB before, {:.1} MiB with every stream open: {:.0} bytes per stream",
        before as f64 / 1048576.0,
        after as f64 / 1048576.0,
        after.saturating_sub(before) as f64 / n as f64
    );

    let mut p99s = Vec::new();
    for c in 1..=changes {
        std::thread::sleep(Duration::from_millis(500));
        let sent = micros_now();
        book.upsert(facts(c));
        let line = next();
        let mut words = line.split_whitespace();
        assert_eq!(words.next(), Some("arrivals"), "subscribers: {line}");
        let mut took: Vec<u64> = words
            .skip(1)
            .map(|t| t.parse::<u64>().expect("micros").saturating_sub(sent))
            .collect();
        assert_eq!(took.len(), n, "every subscriber saw change {c}");
        took.sort_unstable();
        let ms = |us: u64| us as f64 / 1000.0;
        println!(
            "change {c}: reached all {n} in p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            ms(percentile(&took, 50.0)),
            ms(percentile(&took, 99.0)),
            ms(*took.last().expect("some"))
        );
        p99s.push(percentile(&took, 99.0));
    }
    p99s.sort_unstable();
    println!(
        "fan-out: median over {changes} changes of the p99: {:.1} ms (budget 100 ms)",
        p99s[p99s.len() / 2] as f64 / 1000.0
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// The child: opens `n` streams, says `ready` once each has the current state, then for
/// each of `changes` changes prints `arrivals <seq> <micros>...`, one time per stream.
fn subscribers(addr: SocketAddr, n: usize, changes: usize) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let ready = Arc::new(AtomicUsize::new(0));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(u64, u64)>();
        // A few hundred connects at a time: the listener's backlog is finite.
        for batch in (0..n).collect::<Vec<_>>().chunks(256) {
            let mut opened = Vec::new();
            for _ in batch {
                opened.push(tokio::spawn(subscribe(addr, ready.clone(), tx.clone())));
            }
            for o in opened {
                o.await.expect("task");
            }
        }
        while ready.load(Ordering::Acquire) < n {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        println!("ready");
        std::io::stdout().flush().expect("stdout");
        let mut seen: HashMap<u64, Vec<u64>> = HashMap::new();
        let mut done = 0;
        while done < changes {
            let (seq, at) = rx.recv().await.expect("streams open");
            let arrivals = seen.entry(seq).or_default();
            arrivals.push(at);
            if arrivals.len() == n {
                let times: Vec<String> = arrivals.iter().map(u64::to_string).collect();
                println!("arrivals {seq} {}", times.join(" "));
                std::io::stdout().flush().expect("stdout");
                done += 1;
            }
        }
    });
}

/// Opens one stream; the task it spawns reads it for the life of the process.
async fn subscribe(
    addr: SocketAddr,
    ready: Arc<AtomicUsize>,
    tx: tokio::sync::mpsc::UnboundedSender<(u64, u64)>,
) {
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    tcp.set_nodelay(true).expect("nodelay");
    let request = format!("GET /v1/releases/{RELEASE}/events HTTP/1.1\r\nHost: bench\r\n\r\n");
    tcp.write_all(request.as_bytes()).await.expect("request");
    tokio::spawn(async move {
        let mut buf = Vec::with_capacity(4096);
        let mut chunk = [0u8; 4096];
        let mut first = true;
        loop {
            let read = tcp.read(&mut chunk).await.expect("read");
            assert!(read > 0, "the service closed a stream");
            let at = micros_now();
            buf.extend_from_slice(&chunk[..read]);
            // Whole lines only; an event's lines arrive in one chunk of the response.
            let Some(end) = buf.iter().rposition(|&b| b == b'\n') else {
                continue;
            };
            for line in buf[..=end].split(|&b| b == b'\n') {
                if first && line.starts_with(b"event: runtime") {
                    first = false;
                    ready.fetch_add(1, Ordering::AcqRel);
                } else if let Some(id) = line.strip_prefix(b"id: ") {
                    let seq = std::str::from_utf8(id)
                        .ok()
                        .and_then(|s| s.trim().parse().ok());
                    if let Some(seq) = seq {
                        let _ = tx.send((seq, at));
                    }
                }
            }
            buf.drain(..=end);
        }
    });
}
