//! What is known about one release, as the tracker derives it: plain data that the book
//! (`crate::book`) keeps and serves. Only what depends on the clock (a wake's elapsed time,
//! `retry_after_ms`, `stale`) is left to each read, in [`ReleaseFacts::runtime_at`], by
//! arithmetic.

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::observe::TemplateScaling;
use scaling_facts_api::{ActiveRevision, Runtime, RuntimePresence, RuntimeState};
use scaling_facts_api::{Failure, Phase, Scaling, WakeProgress};

/// The retry hint while waking when nothing has been measured yet.
pub const UNMEASURED_RETRY_AFTER_MS: u64 = 1_000;
/// `retry_after_ms` is never below this, so pollers cannot spin.
pub const MIN_RETRY_AFTER_MS: u64 = 100;

/// The Knative timing settings that bound a release's idle window, kept so that a config
/// write can be validated against the revision it will land on.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct IdleWindowParts {
    /// W: the stable window.
    pub stable_window_seconds: u32,
    /// D: the scale-down delay.
    pub scale_down_delay_seconds: u32,
}

/// Everything known about one release, as supplied by whoever watches Kubernetes.
#[derive(Debug, Clone, PartialEq)]
pub struct ReleaseFacts {
    /// The release key: the release-UID label of the Knative Service, else `<name>.<namespace>`.
    pub release: String,
    pub namespace: String,
    pub service: String,
    pub scaling: Scaling,
    pub idle_timeout_upper_bound_seconds: f64,
    pub idle_window_parts: IdleWindowParts,
    pub state: RuntimeState,
    /// `wake.elapsed_ms` is filled in per read.
    pub presence: RuntimePresence,
    pub active_revisions: Vec<ActiveRevision>,
    /// The Service template's scaling annotations, where the editor's settings land.
    pub template: std::sync::Arc<TemplateScaling>,
    /// When these facts last changed.
    pub updated_at: DateTime<Utc>,
}

impl ReleaseFacts {
    /// A release that is known but has never been seen running.
    pub fn idle(release: &str, namespace: &str, service: &str, now: DateTime<Utc>) -> Self {
        Self {
            release: release.to_owned(),
            namespace: namespace.to_owned(),
            service: service.to_owned(),
            scaling: Scaling {
                min_instances: 0,
                idle_timeout_seconds: 60.0,
                expected_cold_start_seconds: None,
                serving_since: None,
            },
            idle_timeout_upper_bound_seconds: 90.0,
            idle_window_parts: IdleWindowParts {
                stable_window_seconds: 60,
                scale_down_delay_seconds: 0,
            },
            state: RuntimeState::Idle,
            presence: RuntimePresence {
                phase: Phase::Idle,
                desired_replicas: 0,
                actual_replicas: 0,
                wake: None,
                failure: None,
            },
            active_revisions: Vec::new(),
            template: TemplateScaling::none(),
            updated_at: now,
        }
    }

    /// The runtime read at `now`, given what the book knows of the watch.
    pub fn runtime_at(&self, now: DateTime<Utc>, watch: WatchView) -> Runtime {
        let mut presence = self.presence.clone();
        let mut retry_after_ms = None;
        if let Some(wake) = presence.wake.as_mut() {
            wake.elapsed_ms = (now - wake.requested_at).num_milliseconds().max(0) as u64;
            if self.state == RuntimeState::Waking {
                let remaining = match self.scaling.expected_cold_start_seconds {
                    Some(s) => ((s * 1000.0) as u64).saturating_sub(wake.elapsed_ms),
                    None => UNMEASURED_RETRY_AFTER_MS,
                };
                retry_after_ms = Some(remaining.max(MIN_RETRY_AFTER_MS));
            }
        }
        let observed_at = watch
            .last_heard
            .map_or(self.updated_at, |h| h.max(self.updated_at));
        Runtime {
            release: self.release.clone(),
            state: self.state,
            retry_after_ms,
            runtime_presence: presence,
            scaling: self.scaling.clone(),
            idle_timeout_upper_bound_seconds: self.idle_timeout_upper_bound_seconds,
            active_revisions: self.active_revisions.clone(),
            observed_at,
            stale: watch.is_stale(now),
        }
    }
}

impl ReleaseFacts {
    /// A hash of what readers see (everything but `updated_at`), to tell a change from a
    /// recomputation that came out the same.
    ///
    /// Fed field by field rather than through a serializer: JSON formatting (dates above
    /// all) cost more than deriving the facts. Every struct is taken apart without `..`, so
    /// a field added to any of them does not compile until it is hashed here (or said to
    /// be left out).
    pub fn fingerprint(&self) -> u64 {
        use std::hash::{BuildHasher, Hash, Hasher};
        let Self {
            release,
            namespace: _, // part of the release
            service: _,   // part of the release
            scaling,
            idle_timeout_upper_bound_seconds,
            idle_window_parts,
            state,
            presence,
            active_revisions,
            template,
            updated_at: _, // when, not what
        } = self;
        let Scaling {
            min_instances,
            idle_timeout_seconds,
            expected_cold_start_seconds,
            serving_since,
        } = scaling;
        let IdleWindowParts {
            stable_window_seconds,
            scale_down_delay_seconds,
        } = idle_window_parts;
        let RuntimePresence {
            phase,
            desired_replicas,
            actual_replicas,
            wake,
            failure,
        } = presence;
        // foldhash, not SipHash, which was most of the cost of deriving facts after an
        // event; seeded at random once per process, so no one can aim at a collision that
        // would hide a change.
        static STATE: std::sync::LazyLock<foldhash::quality::RandomState> =
            std::sync::LazyLock::new(Default::default);
        let mut h = STATE.build_hasher();
        release.hash(&mut h);
        template.hash(&mut h);
        min_instances.hash(&mut h);
        idle_timeout_seconds.to_bits().hash(&mut h);
        expected_cold_start_seconds.map(f64::to_bits).hash(&mut h);
        serving_since.hash(&mut h);
        idle_timeout_upper_bound_seconds.to_bits().hash(&mut h);
        (stable_window_seconds, scale_down_delay_seconds).hash(&mut h);
        (*state as u8).hash(&mut h);
        (phase, desired_replicas, actual_replicas).hash(&mut h);
        wake.as_ref()
            .map(|w| {
                let WakeProgress {
                    requested_at,
                    deadline_at,
                    elapsed_ms: _, // filled in per read
                } = w;
                (requested_at, deadline_at)
            })
            .hash(&mut h);
        failure
            .as_ref()
            .map(|Failure { reason, message }| (reason, message))
            .hash(&mut h);
        active_revisions.len().hash(&mut h);
        for ActiveRevision { name, percent } in active_revisions {
            (name, percent).hash(&mut h);
        }
        h.finish()
    }
}

/// What the book knows of the Kubernetes watch, copied out for one read.
#[derive(Debug, Clone, Copy)]
pub struct WatchView {
    pub connected: bool,
    pub last_heard: Option<DateTime<Utc>>,
    pub stale_after: Duration,
}

impl WatchView {
    pub fn is_stale(&self, now: DateTime<Utc>) -> bool {
        match (self.connected, self.last_heard) {
            (true, Some(h)) => (now - h).to_std().unwrap_or_default() > self.stale_after,
            _ => true,
        }
    }
}
