//! Prometheus metrics of the service.
//!
//! Label values come from closed sets (route templates, methods, status classes), so the
//! number of series is bounded however many releases or clients there are.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::http::HttpMetrics;
use scaling_facts_api::{Outcome, WakeKind};

/// A wake's labels: namespace and service are bounded by the cluster's services; never
/// the revision or the pod, which grow without bound.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WakeLabels {
    pub namespace: String,
    pub service: String,
    /// `initial` or `wake`.
    pub kind: String,
    /// `served`, `aborted` or `failed`.
    pub outcome: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ServiceLabels {
    pub namespace: String,
    pub service: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    pub kind: String,
}

/// A served wake's phase: `provisioning`, `pulling_image` or `starting`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PhaseLabels {
    pub namespace: String,
    pub service: String,
    pub phase: String,
}

/// How an apply of the editor's values ended: `applied`, `retrying`, `conflict` or
/// `failed`.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ApplyLabels {
    pub outcome: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BuildLabels {
    version: String,
}

/// The phases a served wake's time is split into, as the phase label names them.
pub const PHASES: [&str; 3] = ["provisioning", "pulling_image", "starting"];

/// A gauge of seconds.
pub type Seconds = Gauge<f64, AtomicU64>;

/// Every metric the service exports, registered once.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    pub http: HttpMetrics,
    pub releases_known: Gauge,
    pub sse_streams: Gauge,
    pub sse_refused: Counter,
    pub release_claims_refused: Gauge,
    pub wakes: Family<WakeLabels, Counter>,
    pub wake_duration: Family<ServiceLabels, Histogram>,
    pub wake_phase_duration: Family<PhaseLabels, Histogram>,
    pub watch_errors: Family<KindLabels, Counter>,
    /// 1 while a kind's watch is listed and not failing, else 0.
    pub watch_up: Family<KindLabels, Gauge>,
    /// Seconds since a kind's watch last delivered an object.
    pub watch_last_event_age: Family<KindLabels, Seconds>,
    /// Seconds since every watch was last healthy: `runtime` reads are `stale` past
    /// `--stale-after-seconds`.
    pub watch_heard_age: Seconds,
    pub store_retries: Counter,
    /// Requests sent to wake a declared dependency at zero.
    pub dependency_wakes: Counter,
    /// Server-side applies of the editor's values, by outcome.
    pub config_applies: Family<ApplyLabels, Counter>,
    /// 1 while a Service's template no longer says what the service applied to it.
    pub config_drift: Family<ServiceLabels, Gauge>,
    pub write_queue_depth: Gauge,
    pub spool_bytes: Gauge,
    pub writes_rejected: Counter,
    /// 1 while this replica writes (it holds the Lease, or runs alone), else 0.
    pub leader: Gauge,
    /// Seconds since the holder's last successful renewal was sent; 0 on a follower.
    pub lease_renewed_age: Seconds,
    /// A follower's own wake records not yet seen stored by the writer.
    pub wakes_held: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

/// Histogram buckets for wake durations: 100 ms to about 27 min.
fn wake_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.1, 2.0, 15))
}

impl Metrics {
    /// The metrics, with HTTP latency buckets for the default 10 s request timeout.
    pub fn new() -> Self {
        Self::with_request_timeout(Duration::from_secs(10))
    }

    /// The metrics, with HTTP latency buckets that reach `request_timeout`: a request cut
    /// off by it still lands in a bucket of its own rather than only in `+Inf`.
    pub fn with_request_timeout(request_timeout: Duration) -> Self {
        let mut registry = Registry::with_prefix("scaling_facts");
        let build = Family::<BuildLabels, Gauge>::default();
        registry.register(
            "build_info",
            "Always 1, labelled with the version of the running binary",
            build.clone(),
        );
        build
            .get_or_create(&BuildLabels {
                version: env!("CARGO_PKG_VERSION").to_owned(),
            })
            .set(1);
        let http = HttpMetrics::register(&mut registry, request_timeout);
        let releases_known = Gauge::default();
        registry.register(
            "releases_known",
            "Releases in the facts book",
            releases_known.clone(),
        );
        let sse_streams = Gauge::default();
        registry.register("sse_streams", "Open event streams", sse_streams.clone());
        let sse_refused = Counter::default();
        registry.register(
            "sse_streams_refused",
            "Event streams refused with 429: the service's or the token's cap was reached",
            sse_refused.clone(),
        );
        let release_claims_refused = Gauge::default();
        registry.register(
            "release_claims_refused",
            "Services refused the release key they claim, because another owns it",
            release_claims_refused.clone(),
        );
        let wakes = Family::<WakeLabels, Counter>::default();
        registry.register(
            "wakes",
            "Recorded wakes by namespace, service, kind and outcome",
            wakes.clone(),
        );
        let wake_duration = Family::<ServiceLabels, Histogram>::new_with_constructor(wake_buckets);
        registry.register(
            "wake_duration_seconds",
            "Wake request to serving of served wakes, by namespace and service",
            wake_duration.clone(),
        );
        let wake_phase_duration =
            Family::<PhaseLabels, Histogram>::new_with_constructor(wake_buckets);
        registry.register(
            "wake_phase_duration_seconds",
            "Each phase of served wakes (provisioning, pulling_image, starting), by namespace and service",
            wake_phase_duration.clone(),
        );
        let watch_up = Family::<KindLabels, Gauge>::default();
        registry.register(
            "watch_up",
            "1 while the watch of a kind is listed and not failing",
            watch_up.clone(),
        );
        let watch_last_event_age = Family::<KindLabels, Seconds>::default();
        registry.register(
            "watch_last_event_age_seconds",
            "Seconds since the watch of a kind last delivered an object (long in a quiet cluster)",
            watch_last_event_age.clone(),
        );
        let watch_heard_age = Seconds::default();
        registry.register(
            "watch_heard_age_seconds",
            "Seconds since every watch was last healthy; runtime reads are stale past the configured limit",
            watch_heard_age.clone(),
        );
        let watch_errors = Family::<KindLabels, Counter>::default();
        registry.register(
            "watch_errors",
            "Kubernetes watch errors by kind",
            watch_errors.clone(),
        );
        let dependency_wakes = Counter::default();
        registry.register(
            "dependency_wakes",
            "Requests sent to wake a release at zero because a release that declares it started waking",
            dependency_wakes.clone(),
        );
        let config_applies = Family::<ApplyLabels, Counter>::default();
        registry.register(
            "config_applies",
            "Server-side applies of the editor's values to Knative Services, by outcome",
            config_applies.clone(),
        );
        let config_drift = Family::<ServiceLabels, Gauge>::default();
        registry.register(
            "config_drift",
            "1 while a Knative Service's template annotations differ from what the service applied (edited by another hand)",
            config_drift.clone(),
        );
        let store_retries = Counter::default();
        registry.register(
            "store_retries",
            "Store writes retried after a failure",
            store_retries.clone(),
        );
        let write_queue_depth = Gauge::default();
        registry.register(
            "write_queue_depth",
            "Measured writes (wakes, wakes underway) not yet in the store",
            write_queue_depth.clone(),
        );
        let spool_bytes = Gauge::default();
        registry.register(
            "spool_bytes",
            "Size of the local spool file that holds writes until the store has them",
            spool_bytes.clone(),
        );
        let writes_rejected = Counter::default();
        registry.register(
            "writes_rejected",
            "Writes the store refused for good, set aside in the spool's rejected file",
            writes_rejected.clone(),
        );
        let leader = Gauge::default();
        registry.register(
            "leader",
            "1 while this replica is the one that writes (it holds the Lease, or runs alone), else 0",
            leader.clone(),
        );
        let lease_renewed_age = Seconds::default();
        registry.register(
            "lease_renewed_age_seconds",
            "Seconds since the Lease holder's last successful renewal was sent (0 when not holding it)",
            lease_renewed_age.clone(),
        );
        let wakes_held = Gauge::default();
        registry.register(
            "wakes_held",
            "Wakes a follower measured that it has not yet seen the writer store",
            wakes_held.clone(),
        );
        Self {
            leader,
            lease_renewed_age,
            wakes_held,
            write_queue_depth,
            spool_bytes,
            writes_rejected,
            wakes,
            wake_duration,
            wake_phase_duration,
            watch_errors,
            watch_up,
            watch_last_event_age,
            watch_heard_age,
            store_retries,
            dependency_wakes,
            config_applies,
            config_drift,
            registry,
            http,
            releases_known,
            sse_streams,
            sse_refused,
            release_claims_refused,
        }
    }

    /// Drops every per-service series of a deleted Service, so that the number of series
    /// follows the fleet rather than everything it ever held.
    pub fn forget_service(&self, namespace: &str, service: &str) {
        let (namespace, service) = (namespace.to_owned(), service.to_owned());
        for kind in WakeKind::ALL {
            for outcome in Outcome::ALL {
                self.wakes.remove(&WakeLabels {
                    namespace: namespace.clone(),
                    service: service.clone(),
                    kind: kind.to_string(),
                    outcome: outcome.to_string(),
                });
            }
        }
        for phase in PHASES {
            self.wake_phase_duration.remove(&PhaseLabels {
                namespace: namespace.clone(),
                service: service.clone(),
                phase: phase.to_owned(),
            });
        }
        let labels = ServiceLabels { namespace, service };
        self.config_drift.remove(&labels);
        self.wake_duration.remove(&labels);
    }

    /// The OpenMetrics text exposition.
    pub fn encode(&self) -> String {
        let mut out = String::with_capacity(4096);
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String cannot fail");
        out
    }
}

/// Shared handle.
pub type SharedMetrics = Arc<Metrics>;
