//! The service under soak: this same binary's `serve`, as a child process, so that a
//! SIGKILL is a real one and a restart starts from what is on disk.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

/// How to start the service, every time the same way.
pub struct Recipe {
    pub port: u16,
    pub database_url: String,
    pub kubeconfig: PathBuf,
    pub spool: PathBuf,
    pub log: PathBuf,
    /// With more than one replica, this one's name in the shared Lease.
    pub lease_identity: Option<String>,
}

/// The Lease's timing under soak: a failover in about 4 s, so that several fit in a run.
const LEASE_ENV: [(&str, &str); 5] = [
    ("SCALING_FACTS_LEASE_NAME", "scaling-facts-soak"),
    ("SCALING_FACTS_LEASE_NAMESPACE", "default"),
    ("SCALING_FACTS_LEASE_DURATION_SECONDS", "4"),
    ("SCALING_FACTS_LEASE_RENEW_DEADLINE_MS", "2500"),
    ("SCALING_FACTS_LEASE_RETRY_MS", "500"),
];

pub struct Service {
    child: Child,
    pub base: String,
}

impl Recipe {
    pub fn start(&self) -> anyhow::Result<Service> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .with_context(|| format!("opening {}", self.log.display()))?;
        let mut command = Command::new(std::env::current_exe()?);
        if let Some(identity) = &self.lease_identity {
            command
                .envs(LEASE_ENV)
                .env("SCALING_FACTS_LEASE_IDENTITY", identity);
        }
        let child = command
            .arg("serve")
            .env(
                "SCALING_FACTS_LISTEN_ADDR",
                format!("127.0.0.1:{}", self.port),
            )
            .env("SCALING_FACTS_DATABASE_URL", &self.database_url)
            .env("SCALING_FACTS_KUBECONFIG", &self.kubeconfig)
            .env("SCALING_FACTS_SPOOL_PATH", &self.spool)
            .env("SCALING_FACTS_ALLOW_ANONYMOUS_READS", "true")
            .env("SCALING_FACTS_DRAIN_DELAY_MS", "0")
            .env("SCALING_FACTS_SHUTDOWN_GRACE_MS", "2000")
            .env("SCALING_FACTS_IMAGE_PULL_FAILURE_AFTER_SECONDS", "5")
            .env("SCALING_FACTS_DATABASE_ACQUIRE_TIMEOUT_MS", "1000")
            .env("SCALING_FACTS_LOG_FORMAT", "text")
            .env(
                "RUST_LOG",
                std::env::var("SCALING_FACTS_SOAK_SERVICE_LOG").unwrap_or_else(|_| "info".into()),
            )
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .context("starting the service")?;
        Ok(Service {
            child,
            base: format!("http://127.0.0.1:{}", self.port),
        })
    }
}

impl Service {
    /// Waits until it answers `path` with 200.
    pub async fn wait_for(&self, http: &reqwest::Client, path: &str, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Ok(r) = http.get(format!("{}{path}", self.base)).send().await
                && r.status().is_success()
            {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }

    /// Sends a signal by name (`STOP`, `CONT`).
    pub fn signal(&self, name: &str) {
        let _ = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.child.id().to_string())
            .status();
    }

    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, then waits for the exit (SIGKILL after `within`).
    pub async fn terminate(mut self, within: Duration) -> bool {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.success();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        false
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free loopback port.
pub fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}
