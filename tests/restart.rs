//! The real binary, killed with SIGKILL in the middle of a wake and started again: the
//! wake is recorded once, second-precision, and nothing before it is lost or repeated.
//! Also: a kill while a recorded wake's pod still serves records nothing new, and SIGTERM
//! stops the service promptly.

mod common;

use std::process::Command;
use std::time::Duration;

use scaling_facts_api::ColdStarts;
use scaling_facts_api::{Outcome, Precision};

use common::binary::Binary;
use common::{eventually, start_sim};

const SCENARIO: &str = r#"
seed: 4
services:
  - namespace: app
    name: api
    timing: {provisioning_ms: 200, pulling_image_ms: 2500, starting_ms: 300, terminating_ms: 100}
"#;

async fn start_binary(db_url: &str, kubeconfig: &std::path::Path) -> Binary {
    Binary::start(db_url, kubeconfig, &[], true).await
}

async fn served_count(base: &str) -> u64 {
    let report: ColdStarts = reqwest::get(format!("{base}/v1/releases/api.app/cold-starts"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    report.revisions.first().map_or(0, |r| r.counts.served)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wake_cut_by_sigkill_is_recorded_once_after_restart() {
    let (sim, _client) = start_sim(SCENARIO).await;
    let cluster = sim.cluster.clone();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig).unwrap();
    let db_url = format!("sqlite://{}/sf.db?mode=rwc", dir.path().display());

    let mut bin = start_binary(&db_url, &kubeconfig).await;
    eventually(20, "initial start", || {
        cluster.truth.wakes().first().and_then(|w| w.outcome)
    })
    .await;
    cluster.force_idle("app", "api-00001");
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    for n in 1..=2u64 {
        cluster
            .activate("app", "api", Duration::ZERO, None)
            .await
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while served_count(&bin.base).await < n {
            assert!(
                std::time::Instant::now() < deadline,
                "wake {n} not recorded"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        cluster.force_idle("app", "api-00001");
        tokio::time::sleep(Duration::from_millis(1_200)).await;
    }
    let before = common::binary::stored_wakes(&db_url).await;
    assert_eq!(before.len(), 2);
    assert!(before.iter().all(|w| w.precision == Precision::Ms));

    // A third wake; SIGKILL while its image is pulling.
    let c = cluster.clone();
    let held = tokio::spawn(async move { c.activate("app", "api", Duration::ZERO, None).await });
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    bin.child.kill().unwrap(); // SIGKILL
    bin.child.wait().unwrap();
    held.await.unwrap().unwrap();
    let truth_third = cluster.truth.wakes().last().cloned().unwrap();
    assert_eq!(truth_third.outcome, Some(Outcome::Served));

    // Started again: the third wake is reconstructed from timestamps, once.
    let mut bin = start_binary(&db_url, &kubeconfig).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while served_count(&bin.base).await < 3 {
        assert!(
            std::time::Instant::now() < deadline,
            "cut wake not recorded after restart"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let after = common::binary::stored_wakes(&db_url).await;
    assert_eq!(after.len(), 3, "{after:#?}");
    assert_eq!(&after[..2], &before[..], "nothing before the kill changed");
    let third = &after[2];
    assert_eq!(
        (third.outcome, third.precision),
        (Outcome::Served, Precision::S)
    );
    let err = (third.duration_ms as i64 - truth_third.duration_ms().unwrap() as i64).abs();
    assert!(
        err <= 2_000,
        "second-precision duration within the truncation: {err} ms"
    );

    // Killed again while that pod still serves: nothing new on the next start.
    bin.child.kill().unwrap();
    bin.child.wait().unwrap();
    let mut bin = start_binary(&db_url, &kubeconfig).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        common::binary::stored_wakes(&db_url).await.len(),
        3,
        "no wake recorded twice"
    );

    // SIGTERM: a prompt, clean exit.
    let started = std::time::Instant::now();
    Command::new("kill")
        .arg("-TERM")
        .arg(bin.child.id().to_string())
        .status()
        .unwrap();
    let status = bin.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    sim.stop().await;
}
