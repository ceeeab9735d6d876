//! The release binary as a child process, for probes that a running process cannot fake:
//! SIGKILL, SIGTERM, a restart on the same database and spool.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Binary {
    pub child: Child,
    pub base: String,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Binary {
    /// Starts `serve` and returns once it listens; `wait_ready` also waits for readiness.
    pub async fn start(
        db_url: &str,
        kubeconfig: &std::path::Path,
        env: &[(&str, &str)],
        wait_ready: bool,
    ) -> Self {
        let port = free_port();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_scaling-facts"));
        cmd.arg("serve")
            .env("SCALING_FACTS_LISTEN_ADDR", format!("127.0.0.1:{port}"))
            .env("SCALING_FACTS_DATABASE_URL", db_url)
            .env("SCALING_FACTS_KUBECONFIG", kubeconfig)
            .env("SCALING_FACTS_ALLOW_ANONYMOUS_READS", "true")
            .env("SCALING_FACTS_LOG_FORMAT", "text")
            .env("SCALING_FACTS_DRAIN_DELAY_MS", "0")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("binary starts");
        let base = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        let path = if wait_ready {
            "/health/ready"
        } else {
            "/alive"
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(r) = http.get(format!("{base}{path}")).send().await
                && r.status() == 200
            {
                break;
            }
            assert!(Instant::now() < deadline, "binary never answered {path}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Self { child, base }
    }

    pub fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM, and the exit status.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        self.child.wait().unwrap()
    }

    pub async fn get_json(&self, path: &str) -> (u16, serde_json::Value) {
        let r = reqwest::get(format!("{}{path}", self.base)).await.unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(serde_json::Value::Null))
    }
}

impl Drop for Binary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The wakes (not initial starts) the store at `db_url` holds, read with a connection of
/// its own, as the probes see the database beside the running binary.
pub async fn stored_wakes(db_url: &str) -> Vec<scaling_facts_api::WakeRecord> {
    let store = scaling_facts::store::Store::connect(&super::db_config(db_url))
        .await
        .unwrap();
    let mut all = store
        .wakes_since(chrono::DateTime::UNIX_EPOCH)
        .await
        .unwrap();
    store.close().await;
    all.retain(|w| w.kind == scaling_facts_api::WakeKind::Wake);
    all
}
