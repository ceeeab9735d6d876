//! Shared test fixtures: a fresh database on each backend, and an API state with known
//! tokens and releases.
#![allow(dead_code)]

pub mod binary;
pub mod fault_run;
pub mod proxy;
pub mod soak;

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use scaling_facts::book::FactsBook;
use scaling_facts::config::DatabaseConfig;
use scaling_facts::measure::facts::ReleaseFacts;
use scaling_facts::serve::auth::Tokens;
use scaling_facts::serve::{AppState, Shared};
use scaling_facts::store::Store;
use scaling_facts::telemetry::health::Readiness;
use scaling_facts::telemetry::metrics::Metrics;
use sqlx::Connection;
use tokio_util::sync::CancellationToken;

/// Where the PostgreSQL tests connect to create their databases. A test that cannot reach
/// it fails: CI must never silently skip the production backend.
pub fn postgres_admin_url() -> String {
    std::env::var("SCALING_FACTS_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://root@127.0.0.1:5432/postgres".to_owned())
}

/// A migrated database that exists for one test.
pub struct TestDb {
    pub store: Store,
    pub url: String,
    cleanup: Cleanup,
}

enum Cleanup {
    Sqlite(tempfile::TempDir),
    Postgres { admin: String, name: String },
}

pub fn db_config(url: &str) -> DatabaseConfig {
    DatabaseConfig {
        database_url: url.to_owned(),
        database_url_file: None,
        database_max_connections: 4,
        database_acquire_timeout_ms: 5_000,
    }
}

impl TestDb {
    pub async fn sqlite() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}/test.db?mode=rwc", dir.path().display());
        let store = Store::connect(&db_config(&url))
            .await
            .expect("sqlite opens");
        store.migrate().await.expect("sqlite migrates");
        Self {
            store,
            url,
            cleanup: Cleanup::Sqlite(dir),
        }
    }

    pub async fn postgres() -> Self {
        let admin = postgres_admin_url();
        let name = format!("sf_test_{}", uuid::Uuid::new_v4().simple());
        let mut conn = sqlx::postgres::PgConnection::connect(&admin)
            .await
            .unwrap_or_else(|e| panic!("PostgreSQL must be reachable at {admin}: {e}"));
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut conn)
            .await
            .expect("create test database");
        conn.close().await.ok();
        let base = admin.rsplit_once('/').expect("URL has a database").0;
        let url = format!("{base}/{name}");
        let store = Store::connect(&db_config(&url))
            .await
            .expect("postgres opens");
        store.migrate().await.expect("postgres migrates");
        Self {
            store,
            url,
            cleanup: Cleanup::Postgres { admin, name },
        }
    }

    pub async fn of(backend: &str) -> Self {
        match backend {
            "sqlite" => Self::sqlite().await,
            "postgres" => Self::postgres().await,
            other => panic!("unknown backend {other}"),
        }
    }

    pub async fn finish(self) {
        self.store.close().await;
        if let Cleanup::Postgres { admin, name } = self.cleanup {
            let mut conn = sqlx::postgres::PgConnection::connect(&admin)
                .await
                .expect("admin connection");
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
            )))
            .execute(&mut conn)
            .await
            .expect("drop test database");
        }
    }
}

/// Runs the body once on SQLite and once on PostgreSQL, each in a fresh database.
#[macro_export]
macro_rules! on_both_backends {
    ($name:ident, $body:expr) => {
        mod $name {
            use super::*;

            #[tokio::test]
            async fn sqlite() {
                let db = common::TestDb::sqlite().await;
                ($body)(db.store.clone()).await;
                db.finish().await;
            }

            #[tokio::test]
            async fn postgres() {
                let db = common::TestDb::postgres().await;
                ($body)(db.store.clone()).await;
                db.finish().await;
            }
        }
    };
}

pub fn t(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_800_000_000 + secs, 0).unwrap()
}

/// Tokens of every scope. The token text is the name prefixed with `tok-`.
pub const TOKENS: &[(&str, &[&str])] = &[
    ("reader", &["read"]),
    ("writer", &["write"]),
    ("shop-editor", &["write:shop.prod"]),
];

pub fn token_of(name: &str) -> String {
    format!("tok-{name}")
}

pub fn tokens() -> Tokens {
    Tokens::parse(&tokens_toml()).expect("test tokens parse")
}

/// The tokens file of [`TOKENS`], for a service started from its configuration.
pub fn tokens_toml() -> String {
    use sha2::{Digest, Sha256};
    let mut text = String::new();
    for (name, scopes) in TOKENS {
        let digest = hex::encode(Sha256::digest(token_of(name).as_bytes()));
        let scopes: Vec<String> = scopes.iter().map(|s| format!("{s:?}")).collect();
        text.push_str(&format!(
            "[[token]]\nname = {name:?}\nsha256 = \"{digest}\"\nscopes = [{}]\n",
            scopes.join(", ")
        ));
    }
    text
}

/// [`tokens_toml`] written to a file in a fresh folder, for a service's `tokens_file`; the
/// folder lives as long as the returned guard.
pub fn tokens_file() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let file = dir.path().join("tokens.toml");
    std::fs::write(&file, tokens_toml()).expect("the tokens file is written");
    (dir, file)
}

pub struct TestApp {
    pub state: AppState,
    pub db: TestDb,
}

/// An API over a fresh SQLite store, with `shop.prod` and `cart.prod` known.
pub async fn test_app(allow_anonymous_reads: bool) -> TestApp {
    let db = TestDb::sqlite().await;
    let state = state_with(db.store.clone(), allow_anonymous_reads);
    state
        .book
        .upsert(ReleaseFacts::idle("shop.prod", "prod", "shop", t(0)));
    state
        .book
        .upsert(ReleaseFacts::idle("cart.prod", "prod", "cart", t(0)));
    TestApp { state, db }
}

pub fn state_with(store: Store, allow_anonymous_reads: bool) -> AppState {
    AppState::new(shared_with(store, allow_anonymous_reads))
}

/// What [`state_with`] wraps, for a test that changes a field first.
pub fn shared_with(store: Store, allow_anonymous_reads: bool) -> Shared {
    // The fixture's database is migrated and holds no history: loaded, as far as health goes.
    let components = Arc::new(scaling_facts::telemetry::components::Components::default());
    components.set_history(scaling_facts::telemetry::components::HistoryState::Loaded { wakes: 0 });
    Shared {
        book: Arc::new(FactsBook::new(Duration::from_secs(90))),
        store,
        tokens: tokens(),
        allow_anonymous_reads,
        readiness: Readiness::opened(),
        metrics: Arc::new(Metrics::new()),
        components,
        shutdown: CancellationToken::new(),
        batch_max_releases: 100,
        request_timeout: Duration::from_secs(5),
        max_body_bytes: 4_096,
        streams: scaling_facts::serve::streams::StreamLimits::new(6, 3),
        trace_requests: false,
        applier: None,
        leadership: scaling_facts::service::lead::Leadership::single(),
    }
}

/// A simulator on a free loopback port, and a kube-rs client configured through the
/// kubeconfig it writes, exactly as `serve` would be.
pub async fn start_sim(scenario_yaml: &str) -> (scaling_facts_sim::Simulator, kube::Client) {
    let scenario = scaling_facts_sim::Scenario::parse(scenario_yaml).expect("scenario parses");
    let sim = scaling_facts_sim::Simulator::start(
        "127.0.0.1:0".parse().unwrap(),
        scenario,
        CancellationToken::new(),
    )
    .await
    .expect("simulator starts");
    let client = kube_client(&sim.kubeconfig_yaml()).await;
    (sim, client)
}

pub async fn kube_client(kubeconfig_yaml: &str) -> kube::Client {
    let kubeconfig =
        kube::config::Kubeconfig::from_yaml(kubeconfig_yaml).expect("kubeconfig parses");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("kubeconfig loads");
    kube::Client::try_from(config).expect("client builds")
}

/// Polls `f` every 20 ms until it returns Some, for at most `secs` seconds.
pub async fn eventually<T>(secs: u64, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The `ApiResource` of a simulator kind, for `Api<DynamicObject>`.
pub fn api_resource(kind: scaling_facts_sim::resources::Kind) -> kube::api::ApiResource {
    kube::api::ApiResource {
        group: kind.group.to_owned(),
        version: kind.version.to_owned(),
        api_version: kind.api_version(),
        kind: kind.kind.to_owned(),
        plural: kind.plural.to_owned(),
    }
}

/// The `serve` options as the command line defaults them.
pub fn serve_defaults() -> scaling_facts::config::ServeConfig {
    scaling_facts::config::ServeConfig::defaults()
}

/// The service running in-process against a simulator.
pub struct RunningService {
    pub state: AppState,
    pub base: String,
    pub shutdown: CancellationToken,
    handle: tokio::task::JoinHandle<anyhow::Result<()>>,
    _dir: tempfile::TempDir,
}

impl RunningService {
    /// Starts `serve` on a free loopback port, watching the simulator through a kubeconfig
    /// file, and waits until it is ready.
    pub async fn start(
        sim: &scaling_facts_sim::Simulator,
        db_url: &str,
        tweak: impl FnOnce(&mut scaling_facts::config::ServeConfig),
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        sim.write_kubeconfig(&kubeconfig).unwrap();
        let mut cfg = serve_defaults();
        cfg.listen_addr = "127.0.0.1:0".parse().unwrap();
        cfg.database = db_config(db_url);
        cfg.allow_anonymous_reads = true;
        cfg.log_format = scaling_facts::config::LogFormat::Text;
        // No load balancer to drain from.
        cfg.drain_delay_ms = 0;
        cfg.measure.kubeconfig = Some(kubeconfig);
        tweak(&mut cfg);
        let shutdown = CancellationToken::new();
        let service = scaling_facts::service::Service::build(&cfg, shutdown.clone())
            .await
            .unwrap();
        let base = format!("http://{}", service.listener.local_addr().unwrap());
        let state = service.state.clone();
        let handle = tokio::spawn(async move { service.run(&cfg).await });
        let ready = state.readiness.clone();
        eventually(30, "service ready", || ready.is_open().then_some(())).await;
        Self {
            state,
            base,
            shutdown,
            handle,
            _dir: dir,
        }
    }

    pub async fn get<T: serde::de::DeserializeOwned>(&self, path: &str) -> T {
        let r = reqwest::get(format!("{}{path}", self.base)).await.unwrap();
        assert!(r.status().is_success(), "GET {path}: {}", r.status());
        r.json().await.unwrap()
    }

    pub async fn stop(self) {
        self.shutdown.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(15), self.handle).await;
    }
}
