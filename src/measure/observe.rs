//! What the watcher tells the measurement layer: plain snapshots of the few fields that
//! matter, each stamped with when it arrived. No Kubernetes types cross this line.

use std::collections::BTreeMap;
use std::time::Instant;

use chrono::{DateTime, Utc};

/// When an observation arrived, and whether it arrived as it happened.
#[derive(Debug, Clone, Copy)]
pub struct Stamp {
    /// Monotonic arrival time: durations are measured with it.
    pub mono: Instant,
    /// Wall-clock arrival time: `requested_at` is taken from it.
    pub wall: DateTime<Utc>,
    /// False for objects from a (re)list: the change happened at some unknown earlier
    /// time, so only object timestamps can date it.
    pub live: bool,
}

impl Stamp {
    pub fn now(live: bool) -> Self {
        Self {
            mono: Instant::now(),
            wall: Utc::now(),
            live,
        }
    }
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
    pub reason: Option<String>,
    pub message: Option<String>,
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
    pub created: DateTime<Utc>,
    /// Has a `deletionTimestamp`: terminating, never counts as serving.
    pub deleting: bool,
    pub running: bool,
    pub scheduled: Option<Cond>,
    pub ready: Option<Cond>,
    pub container: Container,
    pub restarts: u32,
    /// Exit code of the last termination, when the container restarted.
    pub last_exit_code: Option<i32>,
}

impl PodSnap {
    /// Ready, running, and not terminating: what makes Knative count it.
    pub fn serving(&self) -> bool {
        self.running
            && !self.deleting
            && self.ready.as_ref().is_some_and(|c| c.is(CondStatus::True))
    }
}

/// A PodAutoscaler.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PaSnap {
    /// `status.desiredScale`; negative means unknown.
    pub desired: Option<i32>,
    pub actual: Option<i32>,
    pub active: Option<Cond>,
    /// `ScaleTargetInitialized=True`: the revision served at least once.
    pub initialized: bool,
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

/// A Knative Service: a release.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceSnap {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    /// The release key: the release-UID label's value, else `<name>.<namespace>`.
    pub release: String,
    /// `status.traffic` entries with percent > 0.
    pub traffic: Vec<(String, u32)>,
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
        replicas: u32,
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
