//! The Lease that makes one replica the writer (`coordination.k8s.io/v1`).
//!
//! The algorithm is the one Kubernetes' own components use, written against kube-rs:
//!
//! - every replica reads the Lease each retry period and notes, on its own monotonic
//!   clock, when the Lease last *changed*; another's Lease is taken only once it has not
//!   changed for its whole duration. The Lease's timestamps are never compared with the
//!   local clock, so replicas whose clocks disagree still agree on who holds it;
//! - taking and renewing are a replace carrying the `resourceVersion` that was read: of
//!   two replicas racing for a free Lease, the API server lets one through and answers the
//!   other 409;
//! - the holder counts from when it *sent* its last successful renewal: past the renew
//!   deadline (shorter than the duration) it is no longer leading, whether or not it can
//!   reach the API server to say so. Anyone else may take the Lease only a whole duration
//!   after *seeing* that renewal, which is later still, so two replicas never lead at once.
//!
//! kube-lease-manager was tried first (tests at the time, `tests/lease.rs`); it judges a
//! Lease expired by its `renewTime` against the local wall clock and keeps reporting a
//! leader that can no longer renew, which are the two things this issue needs otherwise.

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Where this replica stands, as the elector last found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Not known yet: the API server has not answered.
    Unknown,
    /// This replica holds the Lease and may write until `until` (its last successful
    /// renewal's send time plus the renew deadline), unless renewed again.
    Leading { renewed: Instant, until: Instant },
    /// Another replica holds it (or nobody, and taking it failed); `changed` is when the
    /// Lease was last seen to change.
    Following {
        holder: Option<String>,
        changed: Instant,
    },
}

impl Standing {
    /// Whether this replica may write now.
    pub fn leading(&self, now: Instant) -> bool {
        matches!(self, Self::Leading { until, .. } if now < *until)
    }
}

/// What identifies the Lease and how it is held.
#[derive(Debug, Clone)]
pub struct LeaseSettings {
    pub name: String,
    /// None: the client's default namespace.
    pub namespace: Option<String>,
    pub identity: String,
    pub duration: Duration,
    pub renew_deadline: Duration,
    pub retry: Duration,
}

/// The Lease as last read: what counts as a change, and when this replica saw it.
struct Observed {
    record: (Option<String>, Option<String>, Option<i32>),
    at: Instant,
}

pub struct Elector {
    api: Api<Lease>,
    settings: LeaseSettings,
    observed: Option<Observed>,
    /// When the last successful take or renewal was sent.
    renewed: Option<Instant>,
}

fn micro_now() -> MicroTime {
    MicroTime(Timestamp::now())
}

fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

impl Elector {
    pub fn new(client: Client, settings: LeaseSettings) -> Self {
        let api = match &settings.namespace {
            Some(ns) => Api::namespaced(client, ns),
            None => Api::default_namespaced(client),
        };
        Self {
            api,
            settings,
            observed: None,
            renewed: None,
        }
    }

    fn spec(&self, acquired: Option<MicroTime>, transitions: i32) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.settings.identity.clone()),
            lease_duration_seconds: Some(
                i32::try_from(self.settings.duration.as_secs()).unwrap_or(i32::MAX),
            ),
            acquire_time: Some(acquired.unwrap_or_else(micro_now)),
            renew_time: Some(micro_now()),
            lease_transitions: Some(transitions),
            ..LeaseSpec::default()
        }
    }

    /// One look at the Lease: takes or renews it when this replica may. Returns where this
    /// replica stands; an error leaves the standing to the caller (a holder's deadline
    /// runs on).
    pub async fn step(&mut self) -> Result<Standing, kube::Error> {
        let sent = Instant::now();
        let Some(mut lease) = self.api.get_opt(&self.settings.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.settings.name.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(self.spec(None, 0)),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(_) => Ok(self.took(sent)),
                Err(e) if is_conflict(&e) => Ok(self.following(None)),
                Err(e) => Err(e),
            };
        };
        let spec = lease.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
        let record = (
            holder.clone(),
            lease.metadata.resource_version.clone(),
            spec.lease_duration_seconds,
        );
        if self.observed.as_ref().is_none_or(|o| o.record != record) {
            self.observed = Some(Observed { record, at: sent });
        }
        let mine = holder.as_deref() == Some(self.settings.identity.as_str());
        let lasts = spec
            .lease_duration_seconds
            .and_then(|s| u64::try_from(s).ok())
            .map_or(self.settings.duration, Duration::from_secs);
        let unchanged_for = self
            .observed
            .as_ref()
            .map_or(Duration::ZERO, |o| o.at.elapsed());
        if !(mine || holder.is_none() || unchanged_for >= lasts) {
            self.renewed = None;
            return Ok(self.following(holder));
        }
        let transitions = spec.lease_transitions.unwrap_or(0);
        lease.spec = Some(if mine {
            self.spec(spec.acquire_time, transitions)
        } else {
            self.spec(None, transitions.saturating_add(1))
        });
        match self
            .api
            .replace(&self.settings.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(self.took(sent)),
            Err(e) if is_conflict(&e) => {
                self.renewed = None;
                Ok(self.following(holder))
            }
            Err(e) => Err(e),
        }
    }

    fn took(&mut self, sent: Instant) -> Standing {
        self.renewed = Some(sent);
        Standing::Leading {
            renewed: sent,
            until: sent + self.settings.renew_deadline,
        }
    }

    fn following(&self, holder: Option<String>) -> Standing {
        Standing::Following {
            holder,
            changed: self.observed.as_ref().map_or_else(Instant::now, |o| o.at),
        }
    }

    /// Gives the Lease up if this replica holds it, so another takes it at once.
    pub async fn release(&mut self) -> Result<(), kube::Error> {
        if self.renewed.take().is_none() {
            return Ok(());
        }
        let Some(mut lease) = self.api.get_opt(&self.settings.name).await? else {
            return Ok(());
        };
        let spec = lease.spec.get_or_insert_default();
        if spec.holder_identity.as_deref() != Some(self.settings.identity.as_str()) {
            return Ok(());
        }
        spec.holder_identity = None;
        spec.acquire_time = None;
        spec.renew_time = Some(micro_now());
        self.api
            .replace(&self.settings.name, &PostParams::default(), &lease)
            .await
            .map(|_| ())
    }

    /// Looks at the Lease every retry period until shutdown, publishing each standing;
    /// releases the Lease on the way out.
    pub async fn run(mut self, standing: watch::Sender<Standing>, shutdown: CancellationToken) {
        loop {
            let step = tokio::select! {
                s = tokio::time::timeout(self.settings.renew_deadline, self.step()) => s,
                () = shutdown.cancelled() => break,
            };
            match step {
                Ok(Ok(now)) => {
                    let was = standing.borrow().leading(Instant::now());
                    if was != now.leading(Instant::now()) {
                        tracing::info!(lease = %self.settings.name, identity = %self.settings.identity, leading = !was, "the Lease changed hands");
                    }
                    standing.send_replace(now);
                }
                Ok(Err(e)) => {
                    tracing::warn!(lease = %self.settings.name, error = %crate::telemetry::ErrorChain(&e), "cannot read or renew the Lease");
                }
                Err(_) => {
                    tracing::warn!(lease = %self.settings.name, "the Lease's API server did not answer within the renew deadline");
                }
            }
            tokio::select! {
                () = tokio::time::sleep(self.settings.retry) => {}
                () = shutdown.cancelled() => break,
            }
        }
        if let Err(e) = self.release().await {
            tracing::warn!(lease = %self.settings.name, error = %crate::telemetry::ErrorChain(&e), "cannot release the Lease; the next holder waits for it to expire");
        }
    }
}
