//! Per-request HTTP metrics, paid for once per series rather than once per request.
//!
//! `prometheus-client`'s `Family::get_or_create` hashes the whole label set under a lock
//! on every call, and building the labels allocates three strings. Every label here comes
//! from a closed set (the route templates of the router, eight method values, five status
//! classes), so each series gets a slot the first time it is used: after that, a request
//! costs one match of its path against the route templates, without a lock, and two
//! metric updates. Series still appear in `/metrics` only once they have been used.
//!
//! The path is matched here rather than read from axum's `MatchedPath` so that the
//! envelope can wrap the router once: as a router layer it wrapped, and boxed again, every
//! route, and each request cloned both boxes.

use std::sync::OnceLock;
use std::time::Duration;

use axum::http::Method;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::{Family, MetricConstructor};
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// The route template, e.g. `/v1/releases/{release}/scaling`.
    pub route: String,
    pub method: String,
    /// `2xx`, `4xx`, ...
    pub status: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub route: String,
}

/// The smallest latency bucket: a read from memory takes tens of microseconds.
const FIRST_BUCKET_SECONDS: f64 = 0.000_05;

/// How many doubling buckets from [`FIRST_BUCKET_SECONDS`] reach `timeout` (19 for the
/// default 10 s: the last is about 13 s).
fn latency_buckets(timeout: Duration) -> u16 {
    let mut top = FIRST_BUCKET_SECONDS;
    let mut n = 1;
    while top < timeout.as_secs_f64() && n < 40 {
        top *= 2.0;
        n += 1;
    }
    n
}

/// The route label of a request no route matched.
pub const UNMATCHED: &str = "unmatched";

/// The method label's closed set: a caller inventing methods must not be able to grow
/// the exposition (each new value is a new series).
const METHODS: [&str; 8] = [
    "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other",
];
const CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

fn method_index(m: &Method) -> usize {
    match *m {
        Method::GET => 0,
        Method::HEAD => 1,
        Method::POST => 2,
        Method::PUT => 3,
        Method::PATCH => 4,
        Method::DELETE => 5,
        Method::OPTIONS => 6,
        _ => 7,
    }
}

/// One route's series, each taken from the families on first use, and the families to
/// take them from: a request's envelope holds this and needs nothing else to count it.
#[derive(Debug)]
pub struct RouteMetrics {
    route: Box<str>,
    families: Families,
    requests: [[OnceLock<Counter>; CLASSES.len()]; METHODS.len()],
    duration: OnceLock<Histogram>,
}

#[derive(Debug, Clone)]
struct Families {
    requests: Family<RequestLabels, Counter>,
    duration: Family<RouteLabels, Histogram, Latency>,
}

/// Makes a route's latency histogram with the buckets the request timeout calls for.
#[derive(Debug, Clone, Copy)]
struct Latency(u16);

impl MetricConstructor<Histogram> for Latency {
    fn new_metric(&self) -> Histogram {
        Histogram::new(exponential_buckets(FIRST_BUCKET_SECONDS, 2.0, self.0))
    }
}

#[derive(Debug)]
pub struct HttpMetrics {
    families: Families,
    /// The router's route templates, set once by [`HttpMetrics::prepare`] before serving
    /// and read without a lock.
    routes: OnceLock<matchit::Router<&'static RouteMetrics>>,
    /// Requests no template matches, and every request before `prepare`.
    unmatched: OnceLock<&'static RouteMetrics>,
}

impl HttpMetrics {
    /// Registers the families; latency buckets double from 50 µs until one reaches
    /// `request_timeout`.
    pub fn register(registry: &mut Registry, request_timeout: Duration) -> Self {
        let buckets = latency_buckets(request_timeout);
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests by route, method and status class",
            requests.clone(),
        );
        let duration = Family::new_with_constructor(Latency(buckets));
        registry.register(
            "http_request_duration_seconds",
            "Time to produce the response headers, by route",
            duration.clone(),
        );
        Self {
            families: Families { requests, duration },
            routes: OnceLock::new(),
            unmatched: OnceLock::new(),
        }
    }

    /// Learns the router's route templates (axum's syntax, `/v1/releases/{release}`).
    /// Only the first call counts: the service has one router, and a test that builds
    /// the same router again changes nothing.
    pub fn prepare<'a>(&self, templates: impl IntoIterator<Item = &'a str>) {
        self.routes.get_or_init(|| {
            let mut routes = matchit::Router::new();
            for t in templates {
                // A template the router accepted is one matchit accepts: axum routes
                // with it.
                if let Err(e) = routes.insert(t, self.new_route(t)) {
                    tracing::warn!(route = t, error = %e, "route template not counted");
                }
            }
            routes
        });
    }

    /// The series of the route that `path` matches.
    pub fn for_path(&self, path: &str) -> &'static RouteMetrics {
        self.routes
            .get()
            .and_then(|r| r.at(path).ok())
            .map(|m| *m.value)
            .unwrap_or_else(|| self.unmatched.get_or_init(|| self.new_route(UNMATCHED)))
    }

    /// Leaked on purpose: one small table per route template, a closed set that lives as
    /// long as the process, and handed out without reference counting.
    fn new_route(&self, route: &str) -> &'static RouteMetrics {
        Box::leak(Box::new(RouteMetrics {
            route: route.into(),
            families: self.families.clone(),
            requests: Default::default(),
            duration: OnceLock::new(),
        }))
    }
}

impl RouteMetrics {
    /// The route template.
    pub fn name(&self) -> &str {
        &self.route
    }

    /// Counts a request and the time to its response headers.
    pub fn observe(&self, method: &Method, status: u16, took: Duration) {
        let (m, c) = (
            method_index(method),
            usize::from(status / 100).clamp(1, 5) - 1,
        );
        self.requests[m][c]
            .get_or_init(|| {
                self.families
                    .requests
                    .get_or_create(&RequestLabels {
                        route: self.route.to_string(),
                        method: METHODS[m].to_owned(),
                        status: CLASSES[c].to_owned(),
                    })
                    .clone()
            })
            .inc();
        self.duration
            .get_or_init(|| {
                self.families
                    .duration
                    .get_or_create(&RouteLabels {
                        route: self.route.to_string(),
                    })
                    .clone()
            })
            .observe(took.as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_are_counted_and_invented_methods_share_one() {
        let mut registry = Registry::default();
        let http = HttpMetrics::register(&mut registry, Duration::from_secs(10));
        http.prepare(["/a/{x}"]);
        http.prepare(["/c"]);
        let ms = Duration::from_millis(1);
        let (a, b) = (http.for_path("/a/1"), http.for_path("/b"));
        assert!(
            std::ptr::eq(a, http.for_path("/a/2")),
            "one table per route"
        );
        assert!(
            std::ptr::eq(b, http.for_path("/c")),
            "only the first prepare counts"
        );
        a.observe(&Method::GET, 200, ms);
        a.observe(&Method::GET, 204, ms);
        b.observe(&Method::from_bytes(b"BREW").unwrap(), 418, ms);
        b.observe(&Method::from_bytes(b"WHEN").unwrap(), 404, ms);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        assert!(
            text.contains(r#"http_requests_total{route="/a/{x}",method="GET",status="2xx"} 2"#),
            "{text}"
        );
        assert!(
            text.contains(
                r#"http_requests_total{route="unmatched",method="other",status="4xx"} 2"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#"http_request_duration_seconds_count{route="/a/{x}"} 2"#),
            "{text}"
        );
        assert!(!text.contains("POST"), "unused series stay out: {text}");
        // The top bucket reaches the request timeout.
        assert!(text.contains(r#"le="13.1072""#), "{text}");
        assert!(!text.contains(r#"le="26.2144""#), "{text}");
    }

    #[test]
    fn buckets_reach_the_timeout() {
        for secs in [1, 10, 30, 600] {
            let n = latency_buckets(Duration::from_secs(secs));
            let top = FIRST_BUCKET_SECONDS * 2f64.powi(i32::from(n) - 1);
            assert!(
                top >= secs as f64 && top / 2.0 < secs as f64,
                "{secs}: {top}"
            );
        }
    }
}
