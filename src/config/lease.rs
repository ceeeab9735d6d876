//! The options of running more than one replica: the Kubernetes Lease that picks the one
//! replica that writes (README, "Architecture"). Without a Lease name the service is
//! the only replica and always writes.

use std::time::Duration;

use clap::Args;

/// One writer among replicas, by a `coordination.k8s.io/v1` Lease.
#[derive(Debug, Clone, Args)]
pub struct LeaseConfig {
    /// The Lease the replicas hold in turn; the holder alone writes wakes, replays its spool,
    /// applies configs and wakes dependencies, while every replica measures and serves.
    /// Unset: a single replica, which always writes. Needs PostgreSQL, and RBAC on Leases.
    #[arg(long, env = "SCALING_FACTS_LEASE_NAME")]
    pub lease_name: Option<String>,

    /// The Lease's namespace; unset, the client's own (the pod's namespace in a cluster).
    #[arg(long, env = "SCALING_FACTS_LEASE_NAMESPACE")]
    pub lease_namespace: Option<String>,

    /// This replica's name in the Lease's `holderIdentity`; unset, `$HOSTNAME` (the pod's
    /// name), else a random one. A replica restarted under the same name takes back a Lease
    /// it held at once.
    #[arg(long, env = "SCALING_FACTS_LEASE_IDENTITY")]
    pub lease_identity: Option<String>,

    /// How long a Lease not renewed keeps others from taking it, counted by each of them
    /// from when they saw it last change (never from its timestamps, so clock skew between
    /// replicas does not matter).
    #[arg(
        long,
        env = "SCALING_FACTS_LEASE_DURATION_SECONDS",
        default_value_t = 15
    )]
    pub lease_duration_seconds: u32,

    /// The holder stops writing when no renewal it sent this long ago succeeded: shorter
    /// than the duration, so it has stopped before anyone else may start.
    #[arg(
        long,
        env = "SCALING_FACTS_LEASE_RENEW_DEADLINE_MS",
        default_value_t = 10_000
    )]
    pub lease_renew_deadline_ms: u64,

    /// How often the holder renews and the others look whether the Lease is free.
    #[arg(long, env = "SCALING_FACTS_LEASE_RETRY_MS", default_value_t = 2_000)]
    pub lease_retry_ms: u64,
}

impl LeaseConfig {
    pub fn duration(&self) -> Duration {
        Duration::from_secs(u64::from(self.lease_duration_seconds))
    }

    pub fn renew_deadline(&self) -> Duration {
        Duration::from_millis(self.lease_renew_deadline_ms)
    }

    pub fn retry(&self) -> Duration {
        Duration::from_millis(self.lease_retry_ms.max(1))
    }

    /// The identity: as given, else the host (pod) name, else a random one.
    pub fn identity(&self) -> String {
        self.lease_identity
            .clone()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .filter(|i| !i.trim().is_empty())
            .unwrap_or_else(|| format!("scaling-facts-{}", uuid::Uuid::new_v4()))
    }

    /// Why these settings cannot hold a Lease safely, if they cannot.
    pub fn problem(&self) -> Option<String> {
        self.lease_name.as_ref()?;
        if self.lease_duration_seconds == 0 {
            return Some("SCALING_FACTS_LEASE_DURATION_SECONDS must be at least 1".into());
        }
        if self.renew_deadline() >= self.duration() {
            return Some(format!(
                "SCALING_FACTS_LEASE_RENEW_DEADLINE_MS ({} ms) must be below the Lease's duration ({} s): the holder must stop writing before another replica may start",
                self.lease_renew_deadline_ms, self.lease_duration_seconds
            ));
        }
        if self.retry() >= self.renew_deadline() {
            return Some(format!(
                "SCALING_FACTS_LEASE_RETRY_MS ({} ms) must be below the renew deadline ({} ms): a renewal must fit in it",
                self.lease_retry_ms, self.lease_renew_deadline_ms
            ));
        }
        None
    }
}
