//! The simulated cluster: storage, Knative control plane, faults and ground truth behind
//! one handle, and the HTTP server that exposes the Kubernetes API, the activator and the
//! admin endpoints on one loopback port.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::routing::{any, get, post};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use super::control::Control;
use super::faults::Faults;
use super::objects::Objects;
use super::scenario::Scenario;
use super::truth::Truth;
use super::{admin, api};

pub struct Cluster {
    objects: Mutex<Objects>,
    pub faults: Faults,
    pub truth: Truth,
    /// Every distinct request the API server was asked, as RBAC sees it.
    pub audit: crate::audit::Audit,
    pub(crate) control: Control,
    bookmark_interval: Duration,
    /// Ends every background task of the simulator.
    pub shutdown: CancellationToken,
}

impl Cluster {
    pub fn new(scenario: &Scenario, shutdown: CancellationToken) -> Arc<Self> {
        Arc::new(Self {
            objects: Mutex::new(Objects::new(scenario.history_events)),
            faults: Faults::default(),
            truth: Truth::default(),
            audit: Default::default(),
            control: Control::new(scenario.seed, scenario.kpa_write_order),
            bookmark_interval: Duration::from_millis(scenario.bookmark_interval_ms.max(50)),
            shutdown,
        })
    }

    // The lock is held only for plain map operations; a poisoned lock still holds a
    // consistent store.
    pub fn lock(&self) -> MutexGuard<'_, Objects> {
        self.objects.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn bookmark_interval(&self) -> Duration {
        self.bookmark_interval
    }

    /// An API server restart: history lost, versions jump, every watch dropped.
    pub fn restart_api_server(&self) {
        self.lock().restart(1_000);
        self.faults.drop_watches();
    }
}

/// A listener that drops new connections while the refuse fault is on.
struct FaultyListener {
    inner: TcpListener,
    cluster: Arc<Cluster>,
}

impl axum::serve::Listener for FaultyListener {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (TcpStream, SocketAddr) {
        loop {
            let (stream, addr) = axum::serve::Listener::accept(&mut self.inner).await;
            if self.cluster.faults.refusing() {
                drop(stream);
                continue;
            }
            // As the Kubernetes API server does (Go sets it on every TCP connection):
            // without it, a watch event written while the last one awaits its delayed ACK
            // waits too, tens of milliseconds.
            if let Err(e) = stream.set_nodelay(true) {
                tracing::warn!(error = %e, "cannot set TCP_NODELAY");
            }
            return (stream, addr);
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// A running simulator.
pub struct Simulator {
    pub cluster: Arc<Cluster>,
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Simulator {
    /// Starts the server on `addr` (loopback; port 0 for any), creates the scenario's
    /// ConfigMaps and services, and starts its traffic.
    pub async fn start(
        addr: SocketAddr,
        scenario: Scenario,
        shutdown: CancellationToken,
    ) -> std::io::Result<Self> {
        let cluster = Cluster::new(&scenario, shutdown.clone());
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let router = Router::new()
            .route("/api/{*path}", any(api::handle))
            .route("/apis/{*path}", any(api::handle))
            .route("/activator/{namespace}/{service}", any(admin::activate))
            .route("/admin/truth", get(admin::truth))
            .route("/admin/faults", post(admin::fault))
            .route(
                "/admin/idle/{namespace}/{revision}",
                post(admin::force_idle),
            )
            .route("/version", get(admin::version))
            .with_state(cluster.clone());
        let listener = FaultyListener {
            inner: listener,
            cluster: cluster.clone(),
        };
        let stop = shutdown.clone();
        let task = tokio::spawn(async move {
            let served = axum::serve(listener, router)
                .with_graceful_shutdown(async move { stop.cancelled().await })
                .await;
            if let Err(e) = served {
                tracing::error!(error = %e, "simulator server failed");
            }
        });
        cluster.load(&scenario);
        Ok(Self {
            cluster,
            addr,
            task,
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A kubeconfig that points kube-rs at this simulator.
    pub fn kubeconfig_yaml(&self) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: sim\n  cluster:\n    server: {}\n\
             users:\n- name: sim\n  user:\n    token: sim\ncontexts:\n- name: sim\n  context:\n    \
             cluster: sim\n    user: sim\n    namespace: default\ncurrent-context: sim\n",
            self.url()
        )
    }

    pub fn write_kubeconfig(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.kubeconfig_yaml())
    }

    /// Stops the server and every background task.
    pub async fn stop(self) {
        self.cluster.shutdown.cancel();
        self.cluster.faults.drop_watches();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.task).await;
    }
}
