//! Two replicas on PostgreSQL sharing a Lease, against the simulator, as two processes of
//! the release binary (README, "Architecture"):
//!
//! - the leader killed with SIGKILL in the middle of a wake: the other takes the Lease once
//!   it expired, the wake is stored once, and afterwards (the killed one started again, now
//!   following) both serve identical `scaling` facts and `cold-starts`;
//! - a leader cut off from the API server stops writing before its Lease runs out, and the
//!   other begins only after it stopped.

mod common;

use std::time::{Duration, Instant};

use scaling_facts_api::{ColdStarts, HealthReport, Outcome, ReplicaRole};
use serde_json::Value;

use common::binary::{Binary, stored_wakes};
use common::proxy::Proxy;
use common::{TestDb, eventually, start_sim};

const SCENARIO: &str = r#"
seed: 14
services:
  - namespace: app
    name: api
    timing: {provisioning_ms: 200, pulling_image_ms: 2500, starting_ms: 300, terminating_ms: 100}
"#;
const LEASE_SECONDS: u64 = 3;
const DEADLINE_MS: u64 = 2_000;

fn lease_env(identity: &str, spool: &std::path::Path) -> Vec<(&'static str, String)> {
    vec![
        ("SCALING_FACTS_LEASE_NAME", "scaling-facts-writer".into()),
        ("SCALING_FACTS_LEASE_NAMESPACE", "default".into()),
        ("SCALING_FACTS_LEASE_IDENTITY", identity.into()),
        (
            "SCALING_FACTS_LEASE_DURATION_SECONDS",
            LEASE_SECONDS.to_string(),
        ),
        (
            "SCALING_FACTS_LEASE_RENEW_DEADLINE_MS",
            DEADLINE_MS.to_string(),
        ),
        ("SCALING_FACTS_LEASE_RETRY_MS", "300".into()),
        ("SCALING_FACTS_SPOOL_PATH", spool.display().to_string()),
    ]
}

async fn replica(
    db: &str,
    kubeconfig: &std::path::Path,
    identity: &str,
    dir: &std::path::Path,
) -> Binary {
    let env = lease_env(identity, &dir.join(format!("{identity}.spool")));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Binary::start(db, kubeconfig, &env, true).await
}

async fn role(b: &Binary) -> Option<ReplicaRole> {
    let (_, body) = b.get_json("/health").await;
    serde_json::from_value::<HealthReport>(body)
        .ok()
        .map(|h| h.lease.role)
}

async fn until_role(b: &Binary, want: ReplicaRole, within: Duration) -> Instant {
    let deadline = Instant::now() + within;
    loop {
        if role(b).await == Some(want) {
            return Instant::now();
        }
        assert!(
            Instant::now() < deadline,
            "{} never became {want:?}",
            b.base
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

async fn cold_starts(b: &Binary) -> ColdStarts {
    let (status, body) = b.get_json("/v1/releases/api.app/cold-starts").await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_value(body).unwrap()
}

async fn served(b: &Binary) -> u64 {
    let (status, body) = b.get_json("/v1/releases/api.app/cold-starts").await;
    if status != 200 {
        return 0;
    }
    serde_json::from_value::<ColdStarts>(body)
        .ok()
        .and_then(|r| r.revisions.first().map(|r| r.counts.served))
        .unwrap_or(0)
}

/// The `scaling` facts without the moment each replica derived them.
async fn scaling(b: &Binary) -> Value {
    let (status, mut body) = b.get_json("/v1/releases/api.app/scaling").await;
    assert_eq!(status, 200, "{body}");
    if let Some(m) = body.as_object_mut() {
        m.remove("updated_at");
    }
    body
}

async fn until_served(bins: &[&Binary], n: u64, within: Duration) {
    let deadline = Instant::now() + within;
    for b in bins {
        while served(b).await < n {
            assert!(
                Instant::now() < deadline,
                "{} never counted {n} served wakes",
                b.base
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leader_killed_mid_wake_the_wake_is_stored_once_and_both_agree() {
    let (sim, _client) = start_sim(SCENARIO).await;
    let cluster = sim.cluster.clone();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig).unwrap();
    let db = TestDb::postgres().await;

    let mut a = replica(&db.url, &kubeconfig, "replica-a", dir.path()).await;
    until_role(&a, ReplicaRole::Leader, Duration::from_secs(10)).await;
    let b = replica(&db.url, &kubeconfig, "replica-b", dir.path()).await;
    until_role(&b, ReplicaRole::Follower, Duration::from_secs(10)).await;
    eventually(20, "initial start", || {
        cluster.truth.wakes().first().and_then(|w| w.outcome)
    })
    .await;

    // One wake with both up: the leader stores it, both count it.
    cluster.force_idle("app", "api-00001");
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    cluster
        .activate("app", "api", Duration::ZERO, None)
        .await
        .unwrap();
    until_served(&[&a, &b], 1, Duration::from_secs(10)).await;
    cluster.force_idle("app", "api-00001");
    tokio::time::sleep(Duration::from_millis(1_200)).await;

    // A second; the leader is killed while its image pulls.
    let c = cluster.clone();
    let held = tokio::spawn(async move { c.activate("app", "api", Duration::ZERO, None).await });
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    a.kill();
    let killed = Instant::now();
    held.await.unwrap().unwrap();
    let taken = until_role(
        &b,
        ReplicaRole::Leader,
        Duration::from_secs(4 * LEASE_SECONDS),
    )
    .await;
    assert!(
        taken.duration_since(killed) >= Duration::from_millis(DEADLINE_MS),
        "took a Lease {:?} after its holder died, before it could have expired",
        taken.duration_since(killed)
    );
    until_served(&[&b], 2, Duration::from_secs(10)).await;

    // Started again, the killed one follows and counts what is stored.
    let a = replica(&db.url, &kubeconfig, "replica-a", dir.path()).await;
    until_role(&a, ReplicaRole::Follower, Duration::from_secs(10)).await;
    until_served(&[&a, &b], 2, Duration::from_secs(10)).await;

    let truth: Vec<_> = cluster
        .truth
        .wakes()
        .into_iter()
        .filter(|w| w.kind == scaling_facts_api::WakeKind::Wake)
        .collect();
    assert_eq!(truth.len(), 2);
    assert!(truth.iter().all(|w| w.outcome == Some(Outcome::Served)));
    let stored = stored_wakes(&db.url).await;
    assert_eq!(stored.len(), 2, "each wake stored once: {stored:#?}");
    for (t, s) in truth.iter().zip(&stored) {
        let err = (s.duration_ms as i64 - t.duration_ms().unwrap() as i64).abs();
        assert!(
            err <= 2_000,
            "stored {} ms against a true {} ms",
            s.duration_ms,
            t.duration_ms().unwrap()
        );
    }
    // Identical answers from both.
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let (sa, sb) = (scaling(&a).await, scaling(&b).await);
        let (ca, cb) = (cold_starts(&a).await, cold_starts(&b).await);
        if sa == sb && ca == cb {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the replicas disagree:\n{sa}\n{sb}\n{ca:?}\n{cb:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop((a, b));
    sim.stop().await;
    db.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partitioned_leader_stops_writing_before_its_lease_runs_out() {
    let (sim, client) = start_sim(SCENARIO).await;
    let dir = tempfile::tempdir().unwrap();
    let proxy = Proxy::start(sim.url().trim_start_matches("http://").parse().unwrap()).await;
    let cut_off = dir.path().join("cut-off.kubeconfig");
    std::fs::write(
        &cut_off,
        sim.kubeconfig_yaml().replace(&sim.url(), &proxy.url()),
    )
    .unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig).unwrap();
    let db = TestDb::postgres().await;

    let a = replica(&db.url, &cut_off, "replica-a", dir.path()).await;
    until_role(&a, ReplicaRole::Leader, Duration::from_secs(10)).await;
    let b = replica(&db.url, &kubeconfig, "replica-b", dir.path()).await;
    until_role(&b, ReplicaRole::Follower, Duration::from_secs(10)).await;

    proxy.cut();
    let cut = Instant::now();
    let lease: k8s_openapi::api::coordination::v1::Lease =
        kube::Api::namespaced(client.clone(), "default")
            .get("scaling-facts-writer")
            .await
            .unwrap();
    let spec = lease.spec.unwrap();
    let renewed = chrono::DateTime::<chrono::Utc>::from_timestamp_micros(
        spec.renew_time.unwrap().0.as_microsecond(),
    )
    .unwrap();
    let expiry =
        renewed + chrono::TimeDelta::seconds(i64::from(spec.lease_duration_seconds.unwrap()));
    // Sampled every 25 ms: the cut-off one stops, then (never at once) the other starts.
    let stopped = loop {
        let (ra, rb) = (role(&a).await, role(&b).await);
        assert!(
            !(ra == Some(ReplicaRole::Leader) && rb == Some(ReplicaRole::Leader)),
            "two leaders"
        );
        if ra == Some(ReplicaRole::Follower) {
            break (Instant::now(), chrono::Utc::now());
        }
        assert!(
            cut.elapsed() < Duration::from_secs(2 * LEASE_SECONDS),
            "still leading"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    assert!(
        stopped.1 < expiry,
        "stopped writing at {}, after the Lease ran out at {expiry}",
        stopped.1
    );
    let (_, metrics) = {
        let r = reqwest::get(format!("{}/metrics", a.base)).await.unwrap();
        (r.status(), r.text().await.unwrap())
    };
    assert!(metrics.contains("scaling_facts_leader 0"), "{metrics}");
    let taken = until_role(
        &b,
        ReplicaRole::Leader,
        Duration::from_secs(4 * LEASE_SECONDS),
    )
    .await;
    assert!(taken > stopped.0);
    drop((a, b));
    sim.stop().await;
    db.finish().await;
}
