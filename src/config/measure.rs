//! The `serve` options that say where to watch Kubernetes and how to measure: the
//! watcher's scope, the window behind `expected_cold_start_seconds`, the failure thresholds
//! and how long history is kept.

use std::path::PathBuf;

use clap::Args;

/// Where to watch Kubernetes and how to measure.
#[derive(Debug, Clone, Args)]
pub struct MeasureConfig {
    /// Watch Kubernetes. Off only for running the API without a cluster.
    #[arg(long, env = "SCALING_FACTS_WATCH_KUBERNETES", default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub watch_kubernetes: bool,

    /// Kubeconfig to use; without it, the in-cluster config or the default kubeconfig.
    #[arg(long, env = "SCALING_FACTS_KUBECONFIG")]
    pub kubeconfig: Option<PathBuf>,

    /// Watch only this namespace; all namespaces without it.
    #[arg(long, env = "SCALING_FACTS_WATCH_NAMESPACE")]
    pub watch_namespace: Option<String>,

    /// Namespace of Knative's config-autoscaler and config-deployment.
    #[arg(
        long,
        env = "SCALING_FACTS_KNATIVE_NAMESPACE",
        default_value = "knative-serving"
    )]
    pub knative_namespace: String,

    /// Objects per page of a watcher's list (at start-up and after a watch is lost): the
    /// page is held as text and as objects while it is read, so smaller pages keep the
    /// sync's peak memory down (100: about 7 MiB less at 10,000 revisions than
    /// Kubernetes' usual 500, at the same sync time) for more round trips.
    #[arg(
        long,
        env = "SCALING_FACTS_WATCH_LIST_OBJECTS_PER_PAGE",
        default_value_t = 100,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub watch_list_objects_per_page: u32,

    /// Knative Service label whose value is the release UID; without it a release is
    /// `<service>.<namespace>`.
    #[arg(
        long,
        env = "SCALING_FACTS_RELEASE_LABEL",
        default_value = "scaling-facts.io/release-uid"
    )]
    pub release_label: String,

    /// Percentile of recent served wakes reported as `expected_cold_start_seconds`.
    #[arg(
        long,
        env = "SCALING_FACTS_EXPECTED_PERCENTILE",
        default_value_t = 95.0
    )]
    pub expected_percentile: f64,

    /// The window holds the last this-many served wakes of a revision...
    #[arg(long, env = "SCALING_FACTS_WINDOW_WAKES", default_value_t = 100)]
    pub window_wakes: usize,

    /// ...no older than this many hours.
    #[arg(
        long,
        env = "SCALING_FACTS_WINDOW_MAX_AGE_HOURS",
        default_value_t = 168
    )]
    pub window_max_age_hours: i64,

    /// With fewer served wakes in the window, `expected_cold_start_seconds` stays null.
    #[arg(long, env = "SCALING_FACTS_WINDOW_MIN_SAMPLES", default_value_t = 1)]
    pub window_min_samples: usize,

    /// A wake whose image pull keeps failing this long is recorded as failed.
    #[arg(
        long,
        env = "SCALING_FACTS_IMAGE_PULL_FAILURE_AFTER_SECONDS",
        default_value_t = 60
    )]
    pub image_pull_failure_after_seconds: u64,

    /// A wake whose pod stays unschedulable this long is recorded as failed.
    #[arg(
        long,
        env = "SCALING_FACTS_UNSCHEDULABLE_FAILURE_AFTER_SECONDS",
        default_value_t = 300
    )]
    pub unschedulable_failure_after_seconds: u64,

    /// A watch event arriving later than this after its object timestamp (plus the
    /// timestamp's one-second truncation) is dated by the timestamp, second-precision.
    #[arg(
        long,
        env = "SCALING_FACTS_LATE_EVENT_TOLERANCE_MS",
        default_value_t = 2_000
    )]
    pub late_event_tolerance_ms: u64,

    /// Wakes and histogram buckets are kept this much longer than the window's
    /// `window-max-age-hours`, then deleted.
    #[arg(
        long,
        env = "SCALING_FACTS_RETENTION_MARGIN_HOURS",
        default_value_t = 24
    )]
    pub retention_margin_hours: i64,

    /// How often old history is pruned (also once at start).
    #[arg(
        long,
        env = "SCALING_FACTS_PRUNE_INTERVAL_MINUTES",
        default_value_t = 60
    )]
    pub prune_interval_minutes: u64,
}

impl MeasureConfig {
    /// How long stored history is kept: the window plus the margin.
    pub fn retention(&self) -> chrono::Duration {
        chrono::Duration::hours(
            self.window_max_age_hours.max(1) + self.retention_margin_hours.max(0),
        )
    }

    pub fn prune_interval(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.prune_interval_minutes.max(1) * 60)
    }

    pub fn tracker(&self) -> crate::measure::tracker::TrackerSettings {
        use std::time::Duration;
        crate::measure::tracker::TrackerSettings {
            window: crate::measure::stats::WindowSettings {
                percentile: self.expected_percentile.clamp(0.0, 100.0),
                wakes: self.window_wakes.max(1),
                max_age: chrono::Duration::hours(self.window_max_age_hours.max(1)),
                min_samples: self.window_min_samples.max(1),
            },
            thresholds: crate::measure::machine::Thresholds {
                image_pull_failure_after: Duration::from_secs(
                    self.image_pull_failure_after_seconds,
                ),
                unschedulable_failure_after: Duration::from_secs(
                    self.unschedulable_failure_after_seconds,
                ),
                late_event_tolerance: Duration::from_millis(self.late_event_tolerance_ms),
            },
            // With a Lease, set by the service: the measuring options do not know it.
            stats_from_store: false,
        }
    }

    pub fn watch(&self) -> crate::watch::WatchSettings {
        crate::watch::WatchSettings {
            namespace: self.watch_namespace.clone(),
            release_label: self.release_label.clone(),
            knative_namespace: self.knative_namespace.clone(),
            list_objects_per_page: self.watch_list_objects_per_page,
        }
    }
}
