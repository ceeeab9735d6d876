//! The service over a real socket on loopback: start-up with warm-up and readiness, a
//! config write, and a shutdown that does not hang on an open event stream.

mod common;

use std::time::Duration;

use scaling_facts::config::{LogFormat, ServeConfig};
use scaling_facts::measure::facts::ReleaseFacts;
use scaling_facts::service::Service;
use tokio_util::sync::CancellationToken;

fn config(db_url: &str, tokens: &std::path::Path) -> ServeConfig {
    ServeConfig {
        listen_addr: "127.0.0.1:0".parse().unwrap(),
        database: common::db_config(db_url),
        tokens_file: Some(tokens.to_owned()),
        allow_anonymous_reads: false,
        request_timeout_ms: 5_000,
        max_body_bytes: 65_536,
        header_read_timeout_ms: 10_000,
        drain_delay_ms: 300,
        shutdown_grace_ms: 2_000,
        warmup_ceiling_ms: 10_000,
        stale_after_seconds: 90,
        batch_max_releases: 1_000,
        max_streams: 1_000,
        max_streams_per_token: 100,
        log_format: LogFormat::Text,
        spool_path: None,
        measure: scaling_facts::config::MeasureConfig {
            watch_kubernetes: false,
            ..common::serve_defaults().measure
        },
        act: common::serve_defaults().act,
        lease: common::serve_defaults().lease,
    }
}

async fn serve_and_use(db_url: &str) {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    let (token, entry) =
        scaling_facts::serve::auth::new_token("editor", &["write:shop.prod".into()]).unwrap();
    std::fs::write(&tokens, entry).unwrap();
    let cfg = config(db_url, &tokens);
    let shutdown = CancellationToken::new();
    let service = Service::build(&cfg, shutdown.clone()).await.unwrap();
    let addr = service.listener.local_addr().unwrap();
    let state = service.state.clone();
    state.book.upsert(ReleaseFacts::idle(
        "shop.prod",
        "prod",
        "shop",
        common::t(0),
    ));
    let running = tokio::spawn(async move { service.run(&cfg).await });
    let base = format!("http://{addr}");
    let http = reqwest::Client::new();

    // Readiness opens once the warm-up (migrations) is done.
    let mut ready = false;
    for _ in 0..100 {
        let r = http
            .get(format!("{base}/health/ready"))
            .send()
            .await
            .unwrap();
        if r.status() == 200 {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(ready, "readiness never opened");
    let health: serde_json::Value = http
        .get(format!("{base}/health"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["status"], "ok", "{health}");

    let r = http
        .put(format!("{base}/v1/releases/shop.prod/config"))
        .bearer_auth(&token)
        .json(&serde_json::json!({"min_instances": 1, "idle_timeout_seconds": 600}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = http
        .get(format!("{base}/v1/releases/shop.prod/scaling"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error_code"], "unauthenticated");

    // An open event stream must not hold shutdown.
    let mut stream = http
        .get(format!("{base}/v1/releases/shop.prod/events"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let first = stream.chunk().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("event: runtime"));

    let started = std::time::Instant::now();
    shutdown.cancel();
    let result = tokio::time::timeout(Duration::from_secs(5), running)
        .await
        .expect("shutdown finished in time");
    result.unwrap().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the stream ended with the token, not the grace"
    );
    // The stream ended cleanly.
    while let Ok(Some(_)) = stream.chunk().await {}

    // The write survived the restart of the process.
    let store = scaling_facts::store::Store::connect(&common::db_config(db_url))
        .await
        .unwrap();
    let stored = store.config("shop.prod").await.unwrap().unwrap();
    assert_eq!(stored.desired.idle_timeout_seconds, 600);
    assert_eq!(stored.updated_by, "editor");
    store.close().await;
}

#[tokio::test]
async fn serves_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/sf.db?mode=rwc", dir.path().display());
    serve_and_use(&url).await;
}

#[tokio::test]
async fn serves_on_postgres() {
    let db = common::TestDb::postgres().await;
    let url = db.url.clone();
    serve_and_use(&url).await;
    db.finish().await;
}

/// After SIGTERM, readiness answers 503 at once while the listener stays open for the drain
/// delay, so that load balancers stop sending before any connection is refused.
#[tokio::test]
async fn readiness_closes_before_the_listener() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    std::fs::write(&tokens, "").unwrap();
    let url = format!("sqlite://{}/sf.db?mode=rwc", dir.path().display());
    let mut cfg = config(&url, &tokens);
    cfg.drain_delay_ms = 1_000;
    let shutdown = CancellationToken::new();
    let service = Service::build(&cfg, shutdown.clone()).await.unwrap();
    let base = format!("http://{}", service.listener.local_addr().unwrap());
    let ready = service.state.readiness.clone();
    let running = tokio::spawn(async move { service.run(&cfg).await });
    common::eventually(10, "ready", || ready.is_open().then_some(())).await;
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let status = |path: &'static str| {
        let http = http.clone();
        let base = base.clone();
        async move {
            http.get(format!("{base}{path}"))
                .send()
                .await
                .map(|r| r.status())
        }
    };
    assert_eq!(status("/health/ready").await.unwrap(), 200);

    let stopped = std::time::Instant::now();
    shutdown.cancel();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Draining: not ready, yet every connection is still accepted and answered.
    assert_eq!(status("/health/ready").await.unwrap(), 503);
    assert_eq!(status("/alive").await.unwrap(), 200);
    let result = tokio::time::timeout(Duration::from_secs(5), running)
        .await
        .expect("stopped in time");
    result.unwrap().unwrap();
    assert!(
        stopped.elapsed() >= Duration::from_millis(1_000),
        "the listener closed before the drain delay"
    );
    assert!(
        status("/alive").await.is_err(),
        "the listener is closed after the drain"
    );
}

/// Connections that send no request, or trickle one a byte at a time, are closed after the
/// header-read timeout, and do not hold shutdown up.
#[tokio::test]
async fn silent_and_trickling_connections_are_closed() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.toml");
    std::fs::write(&tokens, "").unwrap();
    let url = format!("sqlite://{}/sf.db?mode=rwc", dir.path().display());
    let mut cfg = config(&url, &tokens);
    cfg.header_read_timeout_ms = 1_000;
    cfg.drain_delay_ms = 0;
    let shutdown = CancellationToken::new();
    let service = Service::build(&cfg, shutdown.clone()).await.unwrap();
    let addr = service.listener.local_addr().unwrap();
    let running = tokio::spawn(async move { service.run(&cfg).await });

    // Closed: the read sees the end (or a reset) well before the 10 s bound.
    async fn closed_within(mut s: tokio::net::TcpStream, bound: Duration) -> Duration {
        let started = std::time::Instant::now();
        let mut buf = [0u8; 256];
        let read = tokio::time::timeout(bound, async {
            loop {
                match s.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        })
        .await;
        assert!(read.is_ok(), "still open after {bound:?}");
        started.elapsed()
    }
    let silent = tokio::net::TcpStream::connect(addr).await.unwrap();
    let took = closed_within(silent, Duration::from_secs(5)).await;
    assert!(
        took >= Duration::from_millis(900),
        "closed too soon: {took:?}"
    );

    let mut trickle = tokio::net::TcpStream::connect(addr).await.unwrap();
    let writer = tokio::spawn(async move {
        for b in b"GET /alive HTTP/1.1\r\nHost: x\r\n" {
            if trickle.write_all(&[*b]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        trickle
    });
    let started = std::time::Instant::now();
    let trickle = tokio::time::timeout(Duration::from_secs(15), writer)
        .await
        .unwrap()
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "a byte every 300 ms kept the connection open for {:?}",
        started.elapsed()
    );
    drop(trickle);

    // A connection that is quiet mid-headers does not hold shutdown.
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(b"GET /alive HTTP/1.1\r\n").await.unwrap();
    let stopped = std::time::Instant::now();
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(5), running)
        .await
        .expect("stopped in time")
        .unwrap()
        .unwrap();
    assert!(
        stopped.elapsed() < Duration::from_secs(2),
        "{:?}",
        stopped.elapsed()
    );
    drop(slow);
}
