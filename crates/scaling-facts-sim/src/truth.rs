//! Ground truth: when every wake in the simulator really started, when each of its
//! phases ended, and how it ended. Tests compare the service's measurements with this.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use scaling_facts_api::{Outcome, WakeKind};

/// One wake as it really happened. Times are the instants the simulator wrote the
/// corresponding change to its API (millisecond precision, unlike the objects).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TruthWake {
    pub namespace: String,
    pub service: String,
    pub revision: String,
    pub revision_uid: String,
    pub kind: WakeKind,
    /// First API-visible sign: Deployment `spec.replicas` 0 to N.
    pub started_at: DateTime<Utc>,
    pub scheduled_at: Option<DateTime<Utc>>,
    pub running_at: Option<DateTime<Utc>>,
    /// The pod became ready (served) or the wake ended otherwise.
    pub ended_at: Option<DateTime<Utc>>,
    /// None while in progress.
    pub outcome: Option<Outcome>,
    pub failure_reason: Option<String>,
}

impl TruthWake {
    pub fn duration_ms(&self) -> Option<u64> {
        let end = self.ended_at?;
        Some((end - self.started_at).num_milliseconds().max(0) as u64)
    }
}

/// Every wake so far, and counters of what reached the cluster.
#[derive(Debug, Default)]
pub struct Truth {
    wakes: Mutex<Vec<TruthWake>>,
    activator_requests: AtomicU64,
    scale_ups: AtomicU64,
}

/// Counters for tests: the non-waking read must move neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    pub activator_requests: u64,
    pub scale_ups: u64,
}

impl Truth {
    pub fn begin(&self, wake: TruthWake) -> usize {
        self.scale_ups.fetch_add(1, Ordering::AcqRel);
        let mut w = self.lock();
        w.push(wake);
        w.len() - 1
    }

    pub fn update(&self, index: usize, f: impl FnOnce(&mut TruthWake)) {
        if let Some(w) = self.lock().get_mut(index) {
            f(w);
        }
    }

    pub fn count_request(&self) {
        self.activator_requests.fetch_add(1, Ordering::AcqRel);
    }

    pub fn counters(&self) -> Counters {
        Counters {
            activator_requests: self.activator_requests.load(Ordering::Acquire),
            scale_ups: self.scale_ups.load(Ordering::Acquire),
        }
    }

    pub fn wakes(&self) -> Vec<TruthWake> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<TruthWake>> {
        self.wakes.lock().unwrap_or_else(|e| e.into_inner())
    }
}
