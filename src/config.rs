//! The one command-line and environment configuration of the binary.
//!
//! Every option is a flag and an environment variable `SCALING_FACTS_...`; units are part of
//! the names (`_seconds`, `_ms`, `_bytes`) so that a value can never be read in the wrong
//! unit. Defaults are written here once and documented in README's configuration table; a
//! test keeps the two in step.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

mod act;
mod lease;
mod measure;
pub use act::ActConfig;
pub use lease::LeaseConfig;
pub use measure::MeasureConfig;

/// scaling-facts: measures Knative wakes per revision and serves the scaling facts.
#[derive(Debug, Parser)]
#[command(name = "scaling-facts", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the service: store, facts, HTTP API.
    Serve(Box<ServeConfig>),
    /// Apply the database migrations and exit.
    Migrate(DatabaseConfig),
    /// Run the simulated Knative cluster alone, and write a kubeconfig for it.
    #[cfg(feature = "sim")]
    Sim(SimConfig),
    /// The whole story on one machine: simulator, service and demo client, with a live
    /// table and a summary.
    #[cfg(feature = "sim")]
    Demo(DemoConfig),
    /// The demo client alone, against a running service and activator.
    #[cfg(feature = "sim")]
    DemoClient(DemoClientConfig),
    /// The simulator, the service and a fault schedule for a while; then every true wake
    /// is compared with the store, and one line says how it went (exit 1 if any was lost
    /// or doubled).
    #[cfg(feature = "sim")]
    Soak(SoakConfig),
    /// Print the OpenAPI document of the v1 API (the checked-in copy is `openapi/v1.json`).
    Openapi,
    /// Create a bearer token: prints the token once and the tokens-file entry that holds its hash.
    Token(TokenArgs),
}

/// Where the store lives.
#[derive(Debug, Clone, Args)]
pub struct DatabaseConfig {
    /// Database URL. `sqlite://PATH?mode=rwc` (the embedded default) or `postgres://...`
    /// (production, and required for more than one replica).
    #[arg(
        long,
        env = "SCALING_FACTS_DATABASE_URL",
        default_value = "sqlite://scaling-facts.db?mode=rwc"
    )]
    pub database_url: String,

    /// A file holding the database URL (a mounted Secret), read once at start; when set
    /// it takes the place of `--database-url`, so that a password need not sit in the
    /// process's environment.
    #[arg(long, env = "SCALING_FACTS_DATABASE_URL_FILE")]
    pub database_url_file: Option<PathBuf>,

    /// Largest number of pooled database connections.
    #[arg(
        long,
        env = "SCALING_FACTS_DATABASE_MAX_CONNECTIONS",
        default_value_t = 8
    )]
    pub database_max_connections: u32,

    /// How long a query waits for a pooled connection before the store reports itself down.
    #[arg(
        long,
        env = "SCALING_FACTS_DATABASE_ACQUIRE_TIMEOUT_MS",
        default_value_t = 2_000
    )]
    pub database_acquire_timeout_ms: u64,
}

impl DatabaseConfig {
    /// Takes the URL from `--database-url-file` when one is given. Surrounding
    /// whitespace is dropped: `kubectl create secret --from-file` keeps a final newline.
    pub fn read_url_file(&mut self) -> std::io::Result<()> {
        if let Some(path) = &self.database_url_file {
            let url = std::fs::read_to_string(path)?;
            self.database_url = url.trim().to_owned();
        }
        Ok(())
    }

    pub fn acquire_timeout(&self) -> Duration {
        Duration::from_millis(self.database_acquire_timeout_ms)
    }
}

/// Everything `serve` needs.
#[derive(Debug, Clone, Args)]
pub struct ServeConfig {
    /// Address the HTTP API listens on.
    #[arg(
        long,
        env = "SCALING_FACTS_LISTEN_ADDR",
        default_value = "127.0.0.1:8080"
    )]
    pub listen_addr: SocketAddr,

    #[command(flatten)]
    pub database: DatabaseConfig,

    /// TOML file of bearer tokens (`[[token]]` entries with `name`, `sha256`, `scopes`).
    /// Without it only anonymous reads are possible, and only when allowed below.
    #[arg(long, env = "SCALING_FACTS_TOKENS_FILE")]
    pub tokens_file: Option<PathBuf>,

    /// Serve `/v1` reads without a token. Writes always need a token with a write scope.
    #[arg(
        long,
        env = "SCALING_FACTS_ALLOW_ANONYMOUS_READS",
        default_value_t = false,
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        default_missing_value = "true"
    )]
    pub allow_anonymous_reads: bool,

    /// A request that has not produced its response headers by then gets 503.
    #[arg(
        long,
        env = "SCALING_FACTS_REQUEST_TIMEOUT_MS",
        default_value_t = 10_000
    )]
    pub request_timeout_ms: u64,

    /// A connection must send a request's headers within this, counted from when it starts
    /// waiting for them; silent, idle and trickling connections are closed after it.
    #[arg(
        long,
        env = "SCALING_FACTS_HEADER_READ_TIMEOUT_MS",
        default_value_t = 10_000
    )]
    pub header_read_timeout_ms: u64,

    /// Largest accepted request body; larger bodies get 413.
    #[arg(long, env = "SCALING_FACTS_MAX_BODY_BYTES", default_value_t = 65_536)]
    pub max_body_bytes: usize,

    /// After SIGTERM or Ctrl-C, readiness answers 503 at once but the listener stays open
    /// this long, so that load balancers stop sending before connections are refused.
    #[arg(long, env = "SCALING_FACTS_DRAIN_DELAY_MS", default_value_t = 5_000)]
    pub drain_delay_ms: u64,

    /// After the drain delay, open connections get this long to finish before the
    /// process exits anyway.
    #[arg(
        long,
        env = "SCALING_FACTS_SHUTDOWN_GRACE_MS",
        default_value_t = 10_000
    )]
    pub shutdown_grace_ms: u64,

    /// Ceiling for each warm-up task (store, initial lists, histograms); readiness opens
    /// when every task has ended, succeeded or not.
    #[arg(
        long,
        env = "SCALING_FACTS_WARMUP_CEILING_MS",
        default_value_t = 30_000
    )]
    pub warmup_ceiling_ms: u64,

    /// `runtime` reads are marked `stale` when nothing was heard from the Kubernetes API
    /// for this long, or while the watch is disconnected.
    #[arg(long, env = "SCALING_FACTS_STALE_AFTER_SECONDS", default_value_t = 90)]
    pub stale_after_seconds: u64,

    /// Largest number of releases in one batch `scaling` read.
    #[arg(
        long,
        env = "SCALING_FACTS_BATCH_MAX_RELEASES",
        default_value_t = 1_000
    )]
    pub batch_max_releases: usize,

    /// Most event streams open at once, for the whole service; more get 429.
    #[arg(long, env = "SCALING_FACTS_MAX_STREAMS", default_value_t = 1_000)]
    pub max_streams: usize,

    /// Most event streams open at once for one token; more get 429. Anonymous readers
    /// count against the service's cap only.
    #[arg(
        long,
        env = "SCALING_FACTS_MAX_STREAMS_PER_TOKEN",
        default_value_t = 100
    )]
    pub max_streams_per_token: usize,

    /// The spool: a local append-only file where every measured write is synced before it
    /// goes to the store, and stays until the store has it (replayed at start). Default:
    /// beside the SQLite file (`<database file>.spool`), else `scaling-facts.spool` in the
    /// working directory. Give each replica its own; it is locked while in use.
    #[arg(long, env = "SCALING_FACTS_SPOOL_PATH")]
    pub spool_path: Option<PathBuf>,

    /// Log format: `json` (production) or `text` (a terminal).
    #[arg(long, env = "SCALING_FACTS_LOG_FORMAT", default_value = "json")]
    pub log_format: LogFormat,

    #[command(flatten)]
    pub measure: MeasureConfig,

    #[command(flatten)]
    pub act: ActConfig,

    #[command(flatten)]
    pub lease: LeaseConfig,
}

impl ServeConfig {
    /// The spool's path: as given, else derived from the database URL.
    pub fn spool_path(&self) -> PathBuf {
        if let Some(p) = &self.spool_path {
            return p.clone();
        }
        match self.sqlite_file() {
            Some(f) => PathBuf::from(format!("{}.spool", f.display())),
            None => PathBuf::from("scaling-facts.spool"),
        }
    }

    /// The SQLite database file, when the store is one (not in memory).
    pub fn sqlite_file(&self) -> Option<PathBuf> {
        let url = &self.database.database_url;
        url.strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
            .map(|rest| rest.split('?').next().unwrap_or_default())
            .filter(|f| !f.is_empty() && *f != ":memory:")
            .map(PathBuf::from)
    }

    pub fn header_read_timeout(&self) -> Duration {
        Duration::from_millis(self.header_read_timeout_ms.max(1))
    }

    pub fn drain_delay(&self) -> Duration {
        Duration::from_millis(self.drain_delay_ms)
    }

    /// Every option at its documented default, as the command line gives it.
    pub fn defaults() -> Self {
        #[derive(Parser)]
        struct Only {
            #[command(flatten)]
            serve: ServeConfig,
        }
        Only::parse_from(["serve"]).serve
    }

    pub fn request_timeout(&self) -> Duration {
        Duration::from_millis(self.request_timeout_ms)
    }
    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_millis(self.shutdown_grace_ms)
    }
    pub fn warmup_ceiling(&self) -> Duration {
        Duration::from_millis(self.warmup_ceiling_ms)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Json,
    Text,
}

/// Everything `sim` needs.
#[cfg(feature = "sim")]
#[derive(Debug, Clone, Args)]
pub struct SimConfig {
    /// Loopback address of the simulated API server, activator and admin endpoints.
    #[arg(
        long,
        env = "SCALING_FACTS_SIM_LISTEN_ADDR",
        default_value = "127.0.0.1:6443"
    )]
    pub sim_listen_addr: SocketAddr,
    /// Scenario file (YAML or JSON); without one the cluster starts empty.
    #[arg(long, env = "SCALING_FACTS_SIM_SCENARIO")]
    pub scenario: Option<PathBuf>,
    /// Where to write the kubeconfig that points at the simulator.
    #[arg(
        long,
        env = "SCALING_FACTS_SIM_KUBECONFIG",
        default_value = "sim.kubeconfig"
    )]
    pub kubeconfig_out: PathBuf,
}

/// Everything `demo` needs.
#[cfg(feature = "sim")]
#[derive(Debug, Clone, Args)]
pub struct DemoConfig {
    /// How long the demo client runs before the summary.
    #[arg(
        long,
        env = "SCALING_FACTS_DEMO_DURATION_SECONDS",
        default_value_t = 120
    )]
    pub duration_seconds: u64,
    /// Keep the simulator and the service up after the summary, until Ctrl-C.
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub keep_running: bool,
    /// Where the demo's service listens (a free port when taken).
    #[arg(
        long,
        env = "SCALING_FACTS_DEMO_LISTEN_ADDR",
        default_value = "127.0.0.1:8080"
    )]
    pub listen_addr: SocketAddr,
}

/// Everything `soak` needs.
#[cfg(feature = "sim")]
#[derive(Debug, Clone, Args)]
pub struct SoakConfig {
    /// How long the faults go on.
    #[arg(
        long,
        env = "SCALING_FACTS_SOAK_DURATION_SECONDS",
        default_value_t = 120
    )]
    pub duration_seconds: u64,
    /// A PostgreSQL URL (loopback only) on which a database is created for the run and
    /// dropped after; SQLite in a temporary folder when absent.
    #[arg(long, env = "SCALING_FACTS_SOAK_DATABASE_URL")]
    pub database_url: Option<String>,
    /// Seed of the fault schedule: the same seed, the same faults in the same order.
    #[arg(long, env = "SCALING_FACTS_SOAK_SEED", default_value_t = 1)]
    pub seed: u64,
    /// Replicas of the service: 2 shares a Lease on PostgreSQL (needs `--database-url`),
    /// and the faults kill and pause whichever leads.
    #[arg(long, env = "SCALING_FACTS_SOAK_REPLICAS", default_value_t = 1,
        value_parser = clap::value_parser!(u8).range(1..=2))]
    pub replicas: u8,
    /// Adds the API server away for 2-6 s (every request answered 503, the watches then
    /// resuming with the backlog) to the fault schedule. Off by default until no wake is
    /// lost to it (docs/outages.md, "Limits, as measured").
    #[arg(
        long,
        env = "SCALING_FACTS_SOAK_API_AWAY",
        default_value_t = false,
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        default_missing_value = "true"
    )]
    pub api_away: bool,
}

/// Everything `demo-client` needs.
#[cfg(feature = "sim")]
#[derive(Debug, Clone, Args)]
pub struct DemoClientConfig {
    /// The scaling-facts service.
    #[arg(
        long,
        env = "SCALING_FACTS_API_URL",
        default_value = "http://127.0.0.1:8080"
    )]
    pub api_url: String,
    /// Bearer token with the read scope, when the service requires one.
    #[arg(long, env = "SCALING_FACTS_API_TOKEN")]
    pub token: Option<String>,
    /// The activator that requests go through (the simulator's, in a demo).
    #[arg(
        long,
        env = "SCALING_FACTS_ACTIVATOR_URL",
        default_value = "http://127.0.0.1:6443"
    )]
    pub activator_url: String,
    /// Releases to call repeatedly (`<service>.<namespace>`); repeat the flag.
    #[arg(long = "release")]
    pub releases: Vec<String>,
    /// Releases to call as a chain, with and without prewarming, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub chain: Vec<String>,
    /// Seconds between calls of a release: longer than its idle window makes every call cold.
    #[arg(long, default_value_t = 8.5)]
    pub pause_seconds: f64,
    /// How long to run before the summary.
    #[arg(long, default_value_t = 120)]
    pub duration_seconds: u64,
}

/// Arguments of `token`.
#[derive(Debug, Clone, Args)]
pub struct TokenArgs {
    /// Name recorded in the audit trail for writes made with this token.
    #[arg(long)]
    pub name: String,
    /// Scopes: `read`, `write` (every release) or `write:<release>`; repeat for several.
    #[arg(long = "scope", required = true)]
    pub scopes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    /// A boolean flag is a bare switch and also takes a value, as README lists it.
    #[test]
    fn every_boolean_flag_takes_both_forms() {
        let serve = |args: &[&str]| -> ServeConfig {
            let argv = ["scaling-facts", "serve"].iter().chain(args);
            match Cli::try_parse_from(argv).expect("parses").command {
                Command::Serve(c) => *c,
                _ => unreachable!("serve"),
            }
        };
        type Get = fn(&ServeConfig) -> bool;
        let flags: [(&str, Get, bool); 3] = [
            (
                "--allow-anonymous-reads",
                |c| c.allow_anonymous_reads,
                false,
            ),
            ("--apply-config", |c| c.act.apply_config, false),
            ("--watch-kubernetes", |c| c.measure.watch_kubernetes, true),
        ];
        for (flag, get, default) in flags {
            assert_eq!(get(&serve(&[])), default, "{flag} unset");
            assert!(get(&serve(&[flag])), "{flag} bare");
            for value in [true, false] {
                let v = value.to_string();
                assert_eq!(get(&serve(&[flag, &v])), value, "{flag} {v}");
                assert_eq!(get(&serve(&[&format!("{flag}={v}")])), value, "{flag}={v}");
            }
            // A bare switch before another flag leaves that flag its own.
            let c = serve(&[flag, "--listen-addr", "127.0.0.1:9"]);
            assert!(
                get(&c) && c.listen_addr.to_string() == "127.0.0.1:9",
                "{flag}"
            );
        }
    }

    /// The soak's one boolean flag, likewise.
    #[cfg(feature = "sim")]
    #[test]
    fn the_soak_api_away_flag_takes_both_forms() {
        let soak = |args: &[&str]| -> bool {
            let argv = ["scaling-facts", "soak"].iter().chain(args);
            match Cli::try_parse_from(argv).expect("parses").command {
                Command::Soak(c) => c.api_away,
                _ => unreachable!("soak"),
            }
        };
        assert!(!soak(&[]), "unset");
        assert!(soak(&["--api-away"]), "bare");
        assert!(soak(&["--api-away", "--seed", "3"]), "bare before a flag");
        assert!(soak(&["--api-away=true"]) && !soak(&["--api-away", "false"]));
    }

    #[test]
    fn a_url_file_takes_the_place_of_the_url() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("url");
        std::fs::write(&file, "postgres://app:secret@db:5432/facts\n").unwrap();
        let mut db = ServeConfig::defaults().database;
        db.read_url_file().unwrap();
        assert_eq!(
            db.database_url, "sqlite://scaling-facts.db?mode=rwc",
            "no file, no change"
        );
        db.database_url_file = Some(file);
        db.read_url_file().unwrap();
        assert_eq!(db.database_url, "postgres://app:secret@db:5432/facts");
        db.database_url_file = Some(dir.path().join("missing"));
        assert!(db.read_url_file().is_err());
    }

    /// README's configuration table names every environment variable with its default.
    #[test]
    fn readme_documents_every_option() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
            .expect("README.md");
        let cmd = Cli::command();
        let serve = cmd.find_subcommand("serve").expect("serve");
        let sim = cmd.find_subcommand("sim").expect("sim");
        for arg in serve.get_arguments().chain(sim.get_arguments()) {
            let Some(env) = arg.get_env() else { continue };
            let env = env.to_string_lossy();
            let line = readme
                .lines()
                .find(|l| l.contains(&format!("`{env}`")))
                .unwrap_or_else(|| panic!("README has no row for {env}"));
            for default in arg.get_default_values() {
                let default = default.to_string_lossy();
                assert!(
                    line.contains(&format!("`{default}`")),
                    "README row for {env} lacks default `{default}`: {line}"
                );
            }
        }
    }
}
