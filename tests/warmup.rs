//! ADR-025's self-request warm-up, seen from outside: the binary, watching the simulator,
//! asks its own `scaling` and `runtime` reads over its socket before readiness opens. The
//! access log shows both requests (with the warm-up's request id) before the line that
//! opens readiness; with no token to give them, they are answered 401, which counts as
//! warmed, and readiness opens.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use common::start_sim;

const SCENARIO: &str = r#"
seed: 4
services:
  - namespace: w
    name: first
    timing: {provisioning_ms: 10, pulling_image_ms: 10, starting_ms: 10}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hot_reads_are_asked_over_the_socket_before_readiness_opens() {
    let (sim, _client) = start_sim(SCENARIO).await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_scaling-facts"))
        .arg("serve")
        .env("SCALING_FACTS_LISTEN_ADDR", format!("127.0.0.1:{port}"))
        .env(
            "SCALING_FACTS_DATABASE_URL",
            format!("sqlite://{}/w.db?mode=rwc", dir.path().display()),
        )
        .env("SCALING_FACTS_KUBECONFIG", &kubeconfig)
        // No tokens and no anonymous reads: every /v1 read is answered 401.
        .env("SCALING_FACTS_ALLOW_ANONYMOUS_READS", "false")
        .env("SCALING_FACTS_LOG_FORMAT", "json")
        .env("SCALING_FACTS_DRAIN_DELAY_MS", "0")
        .env(
            "RUST_LOG",
            "warn,scaling_facts::serve::request=debug,scaling_facts::telemetry::health=info,scaling_facts::service::warm=info",
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("binary starts");
    let ready = format!("http://127.0.0.1:{port}/health/ready");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(r) = reqwest::get(&ready).await
            && r.status() == 200
        {
            break;
        }
        assert!(Instant::now() < deadline, "never ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let lines: Vec<Value> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str(&l).ok())
        .collect();
    let at = |what: &dyn Fn(&Value) -> bool| lines.iter().position(what);
    let opened = at(&|l| l["message"] == "readiness open").expect("readiness opened");
    for route in [
        "/v1/releases/{release}/scaling",
        "/v1/releases/{release}/runtime",
    ] {
        let asked = at(&|l| {
            l["message"] == "request" && l["request_id"] == "warm-up" && l["route"] == route
        })
        .unwrap_or_else(|| panic!("no warm-up request of {route} in {lines:#?}"));
        assert!(asked < opened, "{route} asked after readiness opened");
        assert_eq!(lines[asked]["status"], 401, "{}", lines[asked]);
    }
    let done = at(&|l| l["message"] == "warm-up task done" && l["task"] == "self-requests")
        .expect("the self-requests counted as warmed");
    assert!(done < opened);
}
