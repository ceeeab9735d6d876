//! The release binary against a store that is missing, locked, emptied or refusing, as a
//! new user would meet it (issue 10, findings 1 and 2): the facts are served from the
//! watches alone, and no measured wake is lost or counted twice, through SIGTERM and
//! SIGKILL.

mod common;

use std::time::Duration;

use scaling_facts::store::Store;
use scaling_facts_api::{ColdStarts, Outcome, WakeKind};
use sqlx::Connection;

use common::binary::{Binary, stored_wakes};
use common::{db_config, eventually, start_sim};

const SCENARIO: &str = r#"
seed: 5
services:
  - {namespace: app, name: api, timing: {provisioning_ms: 50, pulling_image_ms: 100, starting_ms: 50, terminating_ms: 50}}
  - {namespace: app, name: web, timing: {provisioning_ms: 50, pulling_image_ms: 100, starting_ms: 50, terminating_ms: 50}}
"#;

const SHORT_WARMUP: (&str, &str) = ("SCALING_FACTS_WARMUP_CEILING_MS", "1500");

async fn served_in_memory(bin: &Binary, release: &str) -> u64 {
    let r = reqwest::get(format!("{}/v1/releases/{release}/cold-starts", bin.base))
        .await
        .unwrap();
    if r.status() != 200 {
        return 0;
    }
    let report: ColdStarts = r.json().await.unwrap();
    report.revisions.iter().map(|r| r.counts.served).sum()
}

/// Wakes `svc` once (served) and lets it fall back to zero.
async fn wake(cluster: &std::sync::Arc<scaling_facts_sim::Cluster>, svc: &str) {
    cluster
        .activate("app", svc, Duration::ZERO, None)
        .await
        .expect("served");
    tokio::time::sleep(Duration::from_millis(300)).await;
    cluster.force_idle("app", &format!("{svc}-00001"));
    tokio::time::sleep(Duration::from_millis(1_200)).await;
}

async fn settle_initial(cluster: &std::sync::Arc<scaling_facts_sim::Cluster>) {
    eventually(20, "initial starts", || {
        let done = cluster
            .truth
            .wakes()
            .iter()
            .filter(|w| w.outcome.is_some())
            .count();
        (done >= 2).then_some(())
    })
    .await;
    cluster.force_idle("app", "api-00001");
    cluster.force_idle("app", "web-00001");
    tokio::time::sleep(Duration::from_millis(1_500)).await;
}

/// Holds SQLite's write lock, as another process would: every write of the service waits
/// its busy timeout and fails with `database is locked`.
async fn lock_sqlite(path: &std::path::Path) -> sqlx::SqliteConnection {
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    sqlx::raw_sql("BEGIN EXCLUSIVE")
        .execute(&mut conn)
        .await
        .unwrap();
    conn
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_missing_at_start_delays_no_fact_and_loses_no_wake() {
    let (sim, _client) = start_sim(SCENARIO).await;
    let cluster = sim.cluster.clone();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig).unwrap();
    // The database's directory does not exist yet: SQLite cannot open the file.
    let db_dir = dir.path().join("later");
    let db_url = format!("sqlite://{}/sf.db?mode=rwc", db_dir.display());
    let spool = dir.path().join("sf.spool");
    let spool_env = ("SCALING_FACTS_SPOOL_PATH", spool.to_str().unwrap());
    let bin = Binary::start(&db_url, &kubeconfig, &[SHORT_WARMUP, spool_env], true).await;

    // Ready, and serving every release's facts from the watches, with the store down.
    let (status, body) = bin.get_json("/v1/releases/api.app/scaling").await;
    assert_eq!(status, 200, "{body}");
    let (status, health) = bin.get_json("/health").await;
    assert_eq!(status, 503, "{health}");
    assert_eq!(health["status"], "degraded");
    assert_eq!(health["store"]["status"], "down");
    assert_eq!(health["history"]["status"], "loading");
    assert_eq!(
        health["watch"]["kinds"].as_array().unwrap().len(),
        scaling_facts::watch::KINDS.len()
    );

    // A wake while the store is down is measured, and waits in the spool.
    settle_initial(&cluster).await;
    wake(&cluster, "api").await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while served_in_memory(&bin, "api.app").await < 1 {
        assert!(std::time::Instant::now() < deadline, "wake not measured");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (_, health) = bin.get_json("/health").await;
    assert!(
        health["writes"]["queued"].as_u64().unwrap() >= 1,
        "{health}"
    );
    assert!(
        health["writes"]["spool_bytes"].as_u64().unwrap() > 0,
        "{health}"
    );

    // The store appears: migrations run, history loads, the spool drains into it.
    std::fs::create_dir_all(&db_dir).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (status, health) = bin.get_json("/health").await;
        if status == 200 {
            assert_eq!(health["history"]["status"], "loaded");
            assert_eq!(health["writes"]["queued"], 0);
            assert_eq!(health["writes"]["spool_bytes"], 0);
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never healthy: {health}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let stored = stored_wakes(&db_url).await;
    assert_eq!(
        stored.len(),
        1,
        "{stored:#?}\ntruth: {:#?}",
        cluster.truth.wakes()
    );
    assert_eq!(stored[0].outcome, Outcome::Served);
    drop(bin);
    sim.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_and_sigkill_with_the_store_locked_lose_no_wake_and_double_none() {
    let (sim, _client) = start_sim(SCENARIO).await;
    let cluster = sim.cluster.clone();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig).unwrap();
    let db_path = dir.path().join("sf.db");
    let db_url = format!("sqlite://{}?mode=rwc", db_path.display());
    let grace = ("SCALING_FACTS_SHUTDOWN_GRACE_MS", "1000");
    let mut bin = Binary::start(&db_url, &kubeconfig, &[grace], true).await;
    settle_initial(&cluster).await;

    // Locked: two wakes measured, none can be written; SIGTERM after the grace leaves
    // them in the spool (before, both were lost without a word).
    let lock = lock_sqlite(&db_path).await;
    wake(&cluster, "api").await;
    wake(&cluster, "web").await;
    for release in ["api.app", "web.app"] {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while served_in_memory(&bin, release).await < 1 {
            assert!(
                std::time::Instant::now() < deadline,
                "{release} not measured"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let status = bin.terminate();
    assert!(status.success(), "{status:?}");
    drop(lock);
    let spool = std::path::PathBuf::from(format!("{}.spool", db_path.display()));
    assert!(
        std::fs::metadata(&spool).unwrap().len() > 0,
        "the spool holds the writes"
    );

    // Started again: the spool is replayed.
    let mut bin = Binary::start(&db_url, &kubeconfig, &[grace], true).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while stored_wakes(&db_url).await.len() < 2 {
        assert!(std::time::Instant::now() < deadline, "spool not replayed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Locked again, a third wake measured, then SIGKILL: nothing had a chance to drain.
    let lock = lock_sqlite(&db_path).await;
    wake(&cluster, "api").await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while served_in_memory(&bin, "api.app").await < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "third wake not measured"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bin.kill();
    drop(lock);
    let bin = Binary::start(&db_url, &kubeconfig, &[grace], true).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while stored_wakes(&db_url).await.len() < 3 {
        assert!(
            std::time::Instant::now() < deadline,
            "killed wake not recovered"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let stored = stored_wakes(&db_url).await;
    assert_eq!(stored.len(), 3, "each wake once: {stored:#?}");
    assert!(stored.iter().all(|w| w.outcome == Outcome::Served));
    // The histograms are the stored wakes: the same served count per release.
    for (release, n) in [("api.app", 2), ("web.app", 1)] {
        assert_eq!(served_in_memory(&bin, release).await, n, "{release}");
    }
    drop(bin);
    sim.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_the_store_refuses_is_set_aside_and_the_next_goes_on() {
    let (sim, _client) = start_sim(SCENARIO).await;
    let cluster = sim.cluster.clone();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig).unwrap();
    let db_path = dir.path().join("sf.db");
    let db_url = format!("sqlite://{}?mode=rwc", db_path.display());
    let bin = Binary::start(&db_url, &kubeconfig, &[], true).await;
    settle_initial(&cluster).await;
    // The database refuses every wake of `api` for good (a constraint, not an outage).
    let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", db_path.display()))
        .await
        .unwrap();
    sqlx::raw_sql(
        "CREATE TRIGGER refuse_api BEFORE INSERT ON wakes WHEN NEW.release_key = 'api.app' \
         BEGIN SELECT RAISE(ABORT, 'api wakes are refused'); END",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    conn.close().await.unwrap();
    wake(&cluster, "api").await;
    wake(&cluster, "web").await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while stored_wakes(&db_url).await.is_empty() {
        assert!(std::time::Instant::now() < deadline, "web's wake held up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let stored = stored_wakes(&db_url).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].release, "web.app");
    let rejected =
        std::fs::read_to_string(format!("{}.spool.rejected", db_path.display())).unwrap();
    assert!(rejected.contains("api wakes are refused"), "{rejected}");
    assert!(rejected.contains("\"release\":\"api.app\""), "{rejected}");
    let (_, health) = bin.get_json("/health").await;
    assert_eq!(health["writes"]["rejected"], 1, "{health}");
    assert_eq!(health["writes"]["queued"], 0, "{health}");
    drop(bin);
    sim.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_database_recreated_empty_is_migrated_again() {
    let admin = common::postgres_admin_url();
    let name = format!("sf_empty_{}", uuid::Uuid::new_v4().simple());
    let mut conn = sqlx::postgres::PgConnection::connect(&admin)
        .await
        .unwrap_or_else(|e| panic!("PostgreSQL must be reachable at {admin}: {e}"));
    let create = format!("CREATE DATABASE {name}");
    sqlx::raw_sql(sqlx::AssertSqlSafe(create.clone()))
        .execute(&mut conn)
        .await
        .unwrap();
    let db_url = format!("{}/{name}", admin.rsplit_once('/').unwrap().0);
    let (sim, _client) = start_sim(SCENARIO).await;
    let cluster = sim.cluster.clone();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig).unwrap();
    let spool = dir.path().join("sf.spool");
    let bin = Binary::start(
        &db_url,
        &kubeconfig,
        &[("SCALING_FACTS_SPOOL_PATH", spool.to_str().unwrap())],
        true,
    )
    .await;
    settle_initial(&cluster).await;
    // Dropped and created again, empty, under the running service.
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE {name} WITH (FORCE)"
    )))
    .execute(&mut conn)
    .await
    .unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(create))
        .execute(&mut conn)
        .await
        .unwrap();
    wake(&cluster, "api").await;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let stored = async {
            let store = Store::connect(&db_config(&db_url)).await.ok()?;
            let w = store.wakes_since(chrono::DateTime::UNIX_EPOCH).await.ok();
            store.close().await;
            w
        }
        .await;
        if stored.is_some_and(|w| w.iter().any(|w| w.kind == WakeKind::Wake)) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never written to the new database"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    drop(bin);
    sim.stop().await;
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE {name} WITH (FORCE)"
    )))
    .execute(&mut conn)
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn never_ready_before_the_releases_are_listed() {
    // The Kubernetes API is unreachable: whatever the ceiling, an empty book says nothing
    // about the cluster, so readiness stays closed while liveness and health answer.
    let (sim, _client) = start_sim(SCENARIO).await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig).unwrap();
    sim.stop().await;
    let db_url = format!("sqlite://{}/sf.db?mode=rwc", dir.path().display());
    let bin = Binary::start(&db_url, &kubeconfig, &[SHORT_WARMUP], false).await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    let (status, ready) = bin.get_json("/health/ready").await;
    assert_eq!(status, 503, "{ready}");
    let (status, health) = bin.get_json("/health").await;
    assert_eq!(status, 503, "{health}");
    assert_eq!(health["status"], "starting", "{health}");
    assert_eq!(health["history"]["status"], "loaded", "{health}");
    let (status, _) = bin.get_json("/alive").await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_is_degraded_while_a_watch_is_down() {
    let (sim, _client) = start_sim(SCENARIO).await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    sim.write_kubeconfig(&kubeconfig).unwrap();
    let db_url = format!("sqlite://{}/sf.db?mode=rwc", dir.path().display());
    let bin = Binary::start(&db_url, &kubeconfig, &[], true).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (status, health) = bin.get_json("/health").await;
        if status == 200 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never healthy: {health}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The API server goes away: every watch fails, and `/health` says which.
    sim.stop().await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (status, health) = bin.get_json("/health").await;
        let down = health["watch"]["kinds"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|k| k["healthy"] == false)
            .count();
        if status == 503 && health["status"] == "degraded" && down > 0 {
            assert!(health["watch"]["kinds"][0]["errors"].as_u64().is_some());
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still ok without a watch: {health}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
