//! The store: the only module that speaks SQL.
//!
//! One set of queries serves both backends through sqlx's `Any` driver: SQLite (a file, the
//! embedded default) and PostgreSQL (production, several replicas). The queries use `$N`
//! placeholders, which both understand, and only the types both share (64-bit integers,
//! text, blobs); times are stored as milliseconds since the epoch. The two dialects differ
//! only in their DDL, so each has its own migrations folder with the same layout.
//!
//! - [`releases`]: releases and revisions as last seen.
//! - [`config`]: the editor's desired values and their audit trail.
//! - [`wakes`]: one row per wake, keyed by revision UID and start second.
//! - [`open`]: the wakes underway, so that a restart continues them.
//! - `faults` (with the simulator): the outages the soak stages, and what it reads back.
//!
//! Histograms are not stored: they are derived from the wakes rows when history loads.

pub mod apply;
pub mod config;
#[cfg(feature = "sim")]
pub mod faults;
pub mod open;
pub mod releases;
pub mod rests;
pub mod wakes;

use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::migrate::Migrator;
use sqlx::{AnyPool, Executor};

use crate::config::DatabaseConfig;

static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("./migrations/postgres");

/// Errors of the store layer.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database URL must start with sqlite: or postgres:, got {scheme:?}")]
    UnsupportedUrl { scheme: String },
    #[error("cannot connect to the database")]
    Connect(#[source] sqlx::Error),
    #[error("database migration failed")]
    Migrate(#[source] sqlx::migrate::MigrateError),
    #[error("database query failed")]
    Query(#[from] sqlx::Error),
    #[error("stored {what} is invalid")]
    Corrupt {
        what: &'static str,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl StoreError {
    /// Whether the same write may succeed later: the database is unreachable, busy,
    /// restarting, out of room, or was recreated without its tables. Anything else (a value
    /// it refuses, a row it cannot read) fails the same way every time, and retrying it
    /// would only hold up the writes behind it.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Connect(_) | Self::Migrate(_) => true,
            Self::Query(e) => transient_sqlx(e),
            Self::UnsupportedUrl { .. } | Self::Corrupt { .. } => false,
        }
    }

    /// The database answers but its tables are gone (recreated empty): the migrations
    /// must run again before anything can be written.
    pub fn needs_migration(&self) -> bool {
        let Self::Query(sqlx::Error::Database(e)) = self else {
            return false;
        };
        // 42P01 is PostgreSQL's undefined_table; SQLite reports a plain error (code 1).
        e.code().as_deref() == Some("42P01") || e.message().contains("no such table")
    }

    fn corrupt(what: &'static str, e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Corrupt {
            what,
            source: Box::new(e),
        }
    }
}

fn transient_sqlx(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::BeginFailed => true,
        sqlx::Error::Database(db) => {
            let code = db.code().unwrap_or_default();
            // SQLSTATEs have five characters; SQLite's extended codes at most four digits.
            if code.len() == 5 {
                // A PostgreSQL SQLSTATE: connection (08), resources (53), operator
                // intervention such as a restart (57), a rolled-back transaction (40),
                // lock not available (55P03), read-only mode (25006), missing tables.
                matches!(&code[..2], "08" | "53" | "57" | "40")
                    || code == "55P03"
                    || code == "25006"
                    || code == "42P01"
            } else {
                // An SQLite result code, extended: the low byte is the primary code.
                let primary = code.parse::<i32>().unwrap_or(0) & 0xff;
                // BUSY, LOCKED, READONLY, IOERR, FULL, CANTOPEN, PROTOCOL; and ERROR only
                // for missing tables.
                matches!(primary, 5 | 6 | 8 | 10 | 13 | 14 | 15)
                    || db.message().contains("no such table")
            }
        }
        _ => false,
    }
}

/// The `sslmode` of a PostgreSQL URL that allows a plaintext connection to a host other
/// than loopback (`prefer`, the default, falls back to plaintext silently).
fn plaintext_risk(url: &str) -> Option<&str> {
    let mode = url
        .split_once('?')
        .and_then(|(_, q)| {
            q.split('&')
                .find_map(|kv| kv.strip_prefix("sslmode=").or(kv.strip_prefix("ssl-mode=")))
        })
        .unwrap_or("prefer");
    let host = url
        .split_once("://")
        .map(|(_, rest)| rest.split(['/', '?']).next().unwrap_or_default())
        .map(|auth| auth.rsplit('@').next().unwrap_or_default())
        .map(|hp| hp.rsplit_once(':').map_or(hp, |(h, _)| h))
        .unwrap_or_default();
    let loopback = matches!(host, "" | "localhost" | "127.0.0.1" | "[::1]");
    (matches!(mode, "disable" | "allow" | "prefer") && !loopback).then_some(mode)
}

/// Which database is behind the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn of_url(url: &str) -> Result<Self, StoreError> {
        let scheme = url.split(':').next().unwrap_or_default();
        match scheme {
            "sqlite" => Ok(Self::Sqlite),
            "postgres" | "postgresql" => Ok(Self::Postgres),
            _ => Err(StoreError::UnsupportedUrl {
                scheme: scheme.to_owned(),
            }),
        }
    }
}

/// A handle to the database; cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    /// The last [`Store::check`], shared by every clone.
    checked: Arc<tokio::sync::Mutex<Option<Checked>>>,
}

/// How long one health check of the store is reused: `/health` may be called as often as
/// anyone likes, and the database is asked at most this often.
pub const CHECK_TTL: Duration = Duration::from_secs(2);

/// The outcome of a health check of the store.
#[derive(Debug, Clone)]
pub struct Checked {
    pub at: Instant,
    pub latency: Duration,
    /// Why the store did not answer; None when it did.
    pub error: Option<String>,
}

impl Store {
    /// Connects lazily: the pool opens connections on first use, so a database that is down
    /// at start delays nothing and shows on `/health` instead.
    pub fn connect_lazy(config: &DatabaseConfig) -> Result<Self, StoreError> {
        install_default_drivers();
        let backend = Backend::of_url(&config.database_url)?;
        if backend == Backend::Postgres
            && let Some(mode) = plaintext_risk(&config.database_url)
        {
            tracing::warn!(
                sslmode = mode,
                "the PostgreSQL connection is not required to use TLS; add sslmode=verify-full \
                 (with sslrootcert for a private CA) or sslmode=require to the database URL"
            );
        }
        let pool = AnyPoolOptions::new()
            .max_connections(config.database_max_connections)
            .acquire_timeout(config.acquire_timeout())
            .connect_lazy(&config.database_url)
            .map_err(StoreError::Connect)?;
        Ok(Self {
            pool,
            backend,
            checked: Arc::default(),
        })
    }

    /// Connects now and fails if the database cannot be reached.
    pub async fn connect(config: &DatabaseConfig) -> Result<Self, StoreError> {
        let store = Self::connect_lazy(config)?;
        store.ping().await.map_err(|e| match e {
            StoreError::Query(e) => StoreError::Connect(e),
            other => other,
        })?;
        Ok(store)
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Applies the migrations of this backend that have not run yet.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        let migrator = match self.backend {
            Backend::Sqlite => &SQLITE_MIGRATIONS,
            Backend::Postgres => &POSTGRES_MIGRATIONS,
        };
        migrator.run(&self.pool).await.map_err(StoreError::Migrate)
    }

    /// A PING-class check (`SELECT 1`), as readiness and `/health` use it.
    pub async fn ping(&self) -> Result<(), StoreError> {
        self.pool.execute("SELECT 1").await?;
        Ok(())
    }

    /// A health check, reused for [`CHECK_TTL`]: concurrent callers wait for the one check
    /// under way rather than starting their own.
    pub async fn check(&self) -> Checked {
        let mut last = self.checked.lock().await;
        if let Some(c) = last.as_ref().filter(|c| c.at.elapsed() < CHECK_TTL) {
            return c.clone();
        }
        let started = Instant::now();
        let error = match tokio::time::timeout(PING_TIMEOUT, self.ping()).await {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(crate::telemetry::ErrorChain(&e).to_string()),
            Err(_) => Some(format!("no answer within {} ms", PING_TIMEOUT.as_millis())),
        };
        let checked = Checked {
            at: Instant::now(),
            latency: started.elapsed(),
            error,
        };
        *last = Some(checked.clone());
        checked
    }

    /// Closes every connection; queries after this fail.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    pub(crate) fn pool(&self) -> &AnyPool {
        &self.pool
    }
}

/// Converts a stored non-negative integer; a negative value means the row was not written
/// by this service.
fn to_u64(what: &'static str, v: i64) -> Result<u64, StoreError> {
    u64::try_from(v).map_err(|e| StoreError::corrupt(what, e))
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn time_of(what: &'static str, ms: i64) -> Result<chrono::DateTime<chrono::Utc>, StoreError> {
    chrono::DateTime::from_timestamp_millis(ms).ok_or_else(|| StoreError::Corrupt {
        what,
        source: format!("{ms} ms is out of range").into(),
    })
}

/// How long a health check waits for the store before calling it down.
pub const PING_TIMEOUT: Duration = Duration::from_secs(2);

#[cfg(test)]
mod tests {
    use super::plaintext_risk;

    #[test]
    fn a_url_that_may_go_plaintext_is_told_apart() {
        assert_eq!(
            plaintext_risk("postgres://u@db.prod:5432/sf"),
            Some("prefer")
        );
        assert_eq!(
            plaintext_risk("postgres://u:p@db/sf?sslmode=disable"),
            Some("disable")
        );
        assert_eq!(plaintext_risk("postgres://u@db/sf?sslmode=require"), None);
        assert_eq!(
            plaintext_risk("postgres://u@db/sf?application_name=x&sslmode=verify-full"),
            None
        );
        assert_eq!(
            plaintext_risk("postgres://root@127.0.0.1:5432/postgres"),
            None
        );
        assert_eq!(plaintext_risk("postgres://root@localhost/postgres"), None);
    }
}
