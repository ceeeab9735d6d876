//! OpenTelemetry traces: a span per HTTP request (joined to the caller's trace by its W3C
//! `traceparent`) and a span per recorded wake, sent over OTLP.
//!
//! Off unless `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is
//! set, and free when off: the request envelope makes no span and a recorded wake builds
//! no attributes; the only cost left is one relaxed atomic load per wake. When on, the
//! SDK's batch processor exports from a thread of its own over OTLP/HTTP with protobuf
//! (the collector's port 4318); the standard `OTEL_*` variables (service name, sampler,
//! headers, timeouts) are honoured by the SDK itself.
//!
//! A wake span is written with the OpenTelemetry API directly rather than as a `tracing`
//! span, because a wake is recorded after it ended: only the API can give a span the
//! start and end the cluster had, so a trace viewer shows the wake where it happened.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use axum::http::HeaderMap;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{
    Span as _, SpanKind, Status, TraceContextExt, Tracer as _, TracerProvider as _,
};
use opentelemetry::{KeyValue, global};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::registry::LookupSpan;

use crate::measure::observe::ServiceKey;
use scaling_facts_api::{Outcome, WakeRecord};

/// The instrumentation scope's name, and the service name unless `OTEL_SERVICE_NAME` says
/// otherwise.
pub const NAME: &str = "scaling-facts";

/// Whether a provider is installed: read on every recorded wake, so an atomic rather
/// than a lookup of the global provider.
static ON: AtomicBool = AtomicBool::new(false);

/// Errors of setting traces up: the process refuses to start rather than run without the
/// traces it was told to send.
#[derive(Debug, thiserror::Error)]
pub enum TracesError {
    #[error(
        "OTEL_EXPORTER_OTLP_PROTOCOL={0} is not supported: this build exports over http/protobuf only"
    )]
    Protocol(String),
    #[error(
        "the OTLP endpoint {0} uses https; this build's exporter speaks plain HTTP (send to an in-cluster collector)"
    )]
    Tls(String),
    #[error("cannot build the OTLP span exporter")]
    Exporter(#[source] opentelemetry_otlp::ExporterBuildError),
}

/// The installed provider, kept to flush it at shutdown; empty when traces are off.
#[derive(Debug, Default)]
pub struct Traces {
    provider: Option<SdkTracerProvider>,
}

impl Traces {
    /// Traces as the environment asks: off without an OTLP endpoint.
    pub fn from_env() -> Result<Self, TracesError> {
        let var = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
        let Some(endpoint) = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .or_else(|| var("OTEL_EXPORTER_OTLP_ENDPOINT"))
        else {
            return Ok(Self::default());
        };
        if let Some(p) = var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"))
            .filter(|p| p != "http/protobuf")
        {
            return Err(TracesError::Protocol(p));
        }
        if endpoint.starts_with("https:") {
            return Err(TracesError::Tls(endpoint));
        }
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .build()
            .map_err(TracesError::Exporter)?;
        Ok(Self::install(
            SdkTracerProvider::builder().with_batch_exporter(exporter),
        ))
    }

    /// Installs a provider built from `builder` (tests pass one with the SDK's in-memory
    /// exporter): wake spans go to it from now on.
    pub fn install(builder: opentelemetry_sdk::trace::TracerProviderBuilder) -> Self {
        let resource = opentelemetry_sdk::Resource::builder()
            .with_service_name(std::env::var("OTEL_SERVICE_NAME").unwrap_or_else(|_| NAME.into()))
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build();
        let provider = builder.with_resource(resource).build();
        global::set_tracer_provider(provider.clone());
        ON.store(true, Ordering::Relaxed);
        Self {
            provider: Some(provider),
        }
    }

    pub fn is_on(&self) -> bool {
        self.provider.is_some()
    }

    /// The `tracing` layer that turns spans into OpenTelemetry spans; None when off.
    pub fn layer<S>(&self) -> Option<tracing_opentelemetry::OpenTelemetryLayer<S, SdkTracer>>
    where
        S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    {
        let tracer = self.provider.as_ref()?.tracer(NAME);
        Some(
            tracing_opentelemetry::layer()
                .with_tracer(tracer)
                .with_location(false)
                .with_threads(false),
        )
    }

    /// Sends what is batched and stops the exporter. The SDK blocks while it flushes, so
    /// off the runtime's workers; bounded so a collector that is down cannot hold the exit.
    pub async fn shutdown(self) {
        let Some(provider) = self.provider else {
            return;
        };
        ON.store(false, Ordering::Relaxed);
        let flushed = tokio::task::spawn_blocking(move || {
            provider.shutdown_with_timeout(Duration::from_secs(5))
        })
        .await;
        if let Ok(Err(e)) = flushed {
            tracing::warn!(error = %e, "traces not flushed at shutdown");
        }
    }
}

/// Whether traces are on in this process.
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The trace and span ids of a span, kept in its extensions so that the JSON log lines
/// of events inside it can name them (the OpenTelemetry layer keeps its own privately).
#[derive(Debug, Clone, Copy)]
pub struct TraceIds {
    pub trace_id: opentelemetry::trace::TraceId,
    pub span_id: opentelemetry::trace::SpanId,
}

/// A request's span, child of the caller's `traceparent` when it sent a valid one.
pub fn request_span(
    method: &axum::http::Method,
    route: &str,
    headers: &HeaderMap,
) -> tracing::Span {
    let parent = TraceContextPropagator::new().extract(&Headers(headers));
    let span = tracing::info_span!(
        "request",
        otel.name = %format_args!("{method} {route}"),
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
        http.request.method = %method,
        http.route = route,
        http.response.status_code = tracing::field::Empty,
        request_id = tracing::field::Empty,
    );
    // Fails only when no OpenTelemetry layer is installed; the span is then a plain one.
    let _ = span.set_parent(parent);
    note_ids(&span);
    span
}

/// Records a request's outcome on its span.
pub fn finish_request(span: &tracing::Span, status: u16, request_id: &str) {
    span.record("http.response.status_code", i64::from(status));
    span.record("request_id", request_id);
    if status >= 500 {
        span.record("otel.status_code", "error");
    }
}

/// Builds the span's OpenTelemetry context now and notes its ids where the log format
/// finds them.
fn note_ids(span: &tracing::Span) {
    let cx = span.context();
    let sc = cx.span().span_context().clone();
    if !sc.is_valid() {
        return;
    }
    span.with_subscriber(|(id, dispatch)| {
        if let Some(registry) = dispatch.downcast_ref::<tracing_subscriber::Registry>()
            && let Some(s) = registry.span(id)
        {
            s.extensions_mut().insert(TraceIds {
                trace_id: sc.trace_id(),
                span_id: sc.span_id(),
            });
        }
    });
}

/// A span for a recorded wake, from its request to serving (or to its end), with what
/// was measured as attributes. Nothing happens when traces are off.
pub fn record_wake(key: &ServiceKey, w: &WakeRecord) {
    if !on() {
        return;
    }
    let tracer = global::tracer(NAME);
    let start = SystemTime::from(w.requested_at);
    let mut attributes = vec![
        KeyValue::new("release", w.release.clone()),
        KeyValue::new("revision", w.revision.clone()),
        KeyValue::new("k8s.namespace.name", key.namespace.to_string()),
        KeyValue::new("knative.service", key.name.to_string()),
        KeyValue::new("wake.kind", w.kind.to_string()),
        KeyValue::new("wake.outcome", w.outcome.to_string()),
        KeyValue::new("wake.duration_ms", w.duration_ms as i64),
        KeyValue::new("wake.precision", w.precision.to_string()),
    ];
    let phases = [
        ("wake.provisioning_ms", w.phases.provisioning_ms),
        ("wake.pulling_image_ms", w.phases.pulling_image_ms),
        ("wake.starting_ms", w.phases.starting_ms),
    ];
    for (name, ms) in phases {
        if let Some(ms) = ms {
            attributes.push(KeyValue::new(name, ms as i64));
        }
    }
    let mut span = tracer
        .span_builder("wake")
        .with_kind(SpanKind::Internal)
        .with_start_time(start)
        .with_attributes(attributes)
        .start(&tracer);
    if w.outcome == Outcome::Failed {
        let reason = w.failure_reason.clone().unwrap_or_else(|| "failed".into());
        span.set_status(Status::error(reason));
    }
    span.end_with_timestamp(start + Duration::from_millis(w.duration_ms));
}

/// Request headers as the propagator reads them.
struct Headers<'a>(&'a HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}
