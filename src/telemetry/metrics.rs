//! Prometheus metrics of the service.
//!
//! Label values come from closed sets (route templates, methods, status classes), so the
//! number of series is bounded however many releases or clients there are.

use std::sync::Arc;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::http::HttpMetrics;

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
    pub watch_errors: Family<KindLabels, Counter>,
    pub store_retries: Counter,
    pub write_queue_depth: Gauge,
    pub spool_bytes: Gauge,
    pub writes_rejected: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("scaling_facts");
        let http = HttpMetrics::register(&mut registry);
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
        let wake_duration = Family::<ServiceLabels, Histogram>::new_with_constructor(|| {
            // 100 ms to about 27 min.
            Histogram::new(exponential_buckets(0.1, 2.0, 15))
        });
        registry.register(
            "wake_duration_seconds",
            "Wake request to serving of served wakes, by namespace and service",
            wake_duration.clone(),
        );
        let watch_errors = Family::<KindLabels, Counter>::default();
        registry.register(
            "watch_errors",
            "Kubernetes watch errors by kind",
            watch_errors.clone(),
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
        Self {
            write_queue_depth,
            spool_bytes,
            writes_rejected,
            wakes,
            wake_duration,
            watch_errors,
            store_retries,
            registry,
            http,
            releases_known,
            sse_streams,
            sse_refused,
            release_claims_refused,
        }
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
