//! What the watcher tells the measurement layer: plain snapshots of the few fields that
//! matter, each stamped with when it arrived. No Kubernetes types cross this line.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, Utc};

/// How an observation reached the watcher: a transport fact, reported by the watch layer.
/// Whether the arrival can date the change is decided in one place,
/// [`crate::measure::machine`]'s dating, from this and the object's own timestamps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// Part of a (re)list: the object's current state, changed at some earlier time.
    Listed,
    /// A watch event streamed as it happened.
    Watched,
    /// A watch event in the burst that follows a reconnect: it happened while the watch
    /// was down, so its arrival is later than the change.
    Resumed,
}

/// When an observation arrived, and how.
#[derive(Debug, Clone, Copy)]
pub struct Stamp {
    /// Monotonic arrival time: durations are measured with it.
    pub mono: Instant,
    /// Wall-clock arrival time: `requested_at` is taken from it.
    pub wall: DateTime<Utc>,
    pub via: Via,
}

impl Stamp {
    pub fn now(via: Via) -> Self {
        Self {
            mono: Instant::now(),
            wall: Utc::now(),
            via,
        }
    }

    /// Streamed as it happened (not yet checked against the object's timestamps).
    pub fn streamed(&self) -> bool {
        self.via == Via::Watched
    }
}

/// An object's `resourceVersion` as a number: within one object it only grows, which is
/// the one order the API guarantees. 0 when the server's versions are not numbers, and
/// then every observation counts as new.
pub fn version_number(rv: Option<&str>) -> u64 {
    rv.and_then(|v| v.parse().ok()).unwrap_or(0)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CondStatus {
    True,
    False,
    Unknown,
}

/// One condition of an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Cond {
    pub status: CondStatus,
    // Boxed strings: conditions are kept for every pod and PodAutoscaler, and never grow.
    pub reason: Option<Box<str>>,
    pub message: Option<Box<str>>,
    /// `lastTransitionTime`, whole seconds.
    pub since: Option<DateTime<Utc>>,
}

impl Cond {
    pub fn is(&self, status: CondStatus) -> bool {
        self.status == status
    }

    pub fn reason_is(&self, reason: &str) -> bool {
        self.reason.as_deref() == Some(reason)
    }
}

/// The serving container's state.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Container {
    #[default]
    Absent,
    Waiting {
        reason: String,
        message: Option<String>,
    },
    Running {
        started_at: Option<DateTime<Utc>>,
    },
    Terminated {
        exit_code: i32,
    },
}

/// A revision pod.
#[derive(Debug, Clone, PartialEq)]
pub struct PodSnap {
    pub name: String,
    /// `resourceVersion`, see [`version_number`].
    pub version: u64,
    pub created: DateTime<Utc>,
    /// When its removal was asked, to the second: set once it has a `deletionTimestamp`
    /// (terminating, never counts as serving). The API server writes that timestamp as the
    /// request's time plus the grace period, so this is the timestamp less
    /// `deletionGracePeriodSeconds`: when Knative's scale-down removed it, a date that
    /// survives a backlog replayed late.
    pub deleting: Option<DateTime<Utc>>,
    pub running: bool,
    pub scheduled: Option<Cond>,
    pub ready: Option<Cond>,
    pub container: Container,
    pub restarts: u32,
    /// Exit code of the last termination, when the container restarted.
    pub last_exit_code: Option<i32>,
}

impl PodSnap {
    /// Its removal was asked (a `deletionTimestamp`): it no longer serves.
    pub fn terminating(&self) -> bool {
        self.deleting.is_some()
    }

    /// Ready, running, and not terminating: what makes Knative count it.
    pub fn serving(&self) -> bool {
        self.running
            && !self.terminating()
            && self.ready.as_ref().is_some_and(|c| c.is(CondStatus::True))
    }
}

/// A PodAutoscaler.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PaSnap {
    /// `resourceVersion`, see [`version_number`].
    pub version: u64,
    /// `status.desiredScale`; absent (status not written yet) or negative means unknown.
    pub desired: Option<i32>,
    pub actual: Option<i32>,
    pub active: Option<Cond>,
    /// `ScaleTargetInitialized=True`: the revision served at least once.
    pub initialized: bool,
    /// That condition's `lastTransitionTime`: Knative sets it once, when the revision
    /// first had its initial scale ready, and never resets it.
    pub initialized_since: Option<DateTime<Utc>>,
}

/// A revision's Deployment: the autoscaler's scale target.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DeploymentSnap {
    /// `resourceVersion`, see [`version_number`].
    pub version: u64,
    /// `spec.replicas`.
    pub replicas: u32,
    /// `metadata.generation`: 1 until its spec (the scale) first changes, so a Deployment
    /// at generation 1 shows the replicas it was created with.
    pub generation: i64,
}

/// A revision's identity and settings.
#[derive(Debug, Clone, PartialEq)]
pub struct RevisionSnap {
    pub uid: String,
    pub name: String,
    pub namespace: String,
    pub service: String,
    pub created: DateTime<Utc>,
    /// `autoscaling.knative.dev/*` and `serving.knative.dev/progress-deadline` only.
    pub annotations: BTreeMap<String, String>,
    /// `serving.knative.dev/routingState` is not `reserve`.
    pub reachable: bool,
}

/// A Knative Service by namespace and name: the identity of a release in the cluster
/// (its release key may be a label instead, see [`ServiceSnap::release`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServiceKey {
    /// Shared, not copied: every revision of a Service holds its key, and each watch
    /// event clones one, so a clone is two reference counts rather than two strings.
    pub namespace: Arc<str>,
    pub name: Arc<str>,
}

impl ServiceKey {
    pub fn new(namespace: &str, name: &str) -> Self {
        Self {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// The release key when the Service has no release-UID label: `<name>.<namespace>`.
    pub fn default_release(&self) -> String {
        format!("{}.{}", self.name, self.namespace)
    }
}

/// A Knative Service: a release.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceSnap {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    /// The release key: the release-UID label's value, else `<name>.<namespace>`.
    pub release: String,
    /// When the Service was created: who came first owns a release key two claim.
    pub created: Option<DateTime<Utc>>,
    /// `status.traffic` entries with percent > 0.
    pub traffic: Vec<(String, u32)>,
    /// The releases it declares it calls (`scaling-facts.io/depends-on`).
    pub depends_on: Vec<String>,
    /// The scaling annotations of its revision template, as written; None when it has
    /// neither (behind a pointer: most Services have none, and the tracker keeps one per
    /// Service; shared, so the facts derived after each event carry it without a copy).
    pub template: Option<std::sync::Arc<TemplateScaling>>,
}

/// The two revision-template annotations an editor's settings are applied as, verbatim
/// from the Knative Service: what was applied is compared with them as text, so any hand
/// edit, even to an equivalent spelling, shows as drift.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct TemplateScaling {
    /// `autoscaling.knative.dev/min-scale`.
    pub min_scale: Option<String>,
    /// `autoscaling.knative.dev/scale-to-zero-pod-retention-period`.
    pub retention: Option<String>,
}

impl TemplateScaling {
    pub const MIN_SCALE: &'static str = "autoscaling.knative.dev/min-scale";
    pub const RETENTION: &'static str =
        "autoscaling.knative.dev/scale-to-zero-pod-retention-period";

    /// Neither annotation, shared: the facts of a Service without them point here.
    pub fn none() -> std::sync::Arc<Self> {
        static NONE: std::sync::LazyLock<std::sync::Arc<TemplateScaling>> =
            std::sync::LazyLock::new(Default::default);
        NONE.clone()
    }
}

/// One thing the watcher saw.
#[derive(Debug, Clone, PartialEq)]
pub enum Observation {
    Service(ServiceSnap),
    ServiceGone {
        namespace: String,
        name: String,
    },
    Revision(RevisionSnap),
    RevisionGone {
        uid: String,
    },
    Deployment {
        revision_uid: String,
        dep: DeploymentSnap,
    },
    Autoscaler {
        revision_uid: String,
        pa: PaSnap,
    },
    Pod {
        revision_uid: String,
        pod: PodSnap,
    },
    PodGone {
        revision_uid: String,
        name: String,
    },
    /// The top-level data of `config-autoscaler` or `config-deployment`.
    ConfigMap {
        name: String,
        data: BTreeMap<String, String>,
    },
}

impl Observation {
    /// The revision a Deployment, PodAutoscaler or pod observation is of.
    pub fn revision_uid(&self) -> Option<&str> {
        match self {
            Observation::Deployment { revision_uid, .. }
            | Observation::Autoscaler { revision_uid, .. }
            | Observation::Pod { revision_uid, .. }
            | Observation::PodGone { revision_uid, .. } => Some(revision_uid),
            _ => None,
        }
    }
}
