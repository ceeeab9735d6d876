//! OpenTelemetry traces, caught by the SDK's in-memory exporter: a request carrying a W3C
//! `traceparent` gets a server span in the caller's trace, whose ids the JSON log lines of
//! that request carry; a recorded wake gets a span from its request to serving, with the
//! duration the simulator's truth knows.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::body::Body;
use axum::http::Request;
use opentelemetry::trace::{SpanKind, TracerProvider as _};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use scaling_facts::serve::{AppState, app};
use scaling_facts::telemetry::logs::JsonLines;
use scaling_facts::telemetry::traces::{NAME, Traces};
use scaling_facts_api::{Outcome, WakeKind};
use tower::ServiceExt;
use tracing_subscriber::layer::SubscriberExt;

use common::{RunningService, TestDb, eventually, shared_with, start_sim, t};

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

/// Log lines written to memory.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The two tests that run the service's code paths take turns: a service running on
/// threads without a subscriber would register the other's callsites as never wanted.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test]
async fn a_request_with_traceparent_joins_the_callers_trace() {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let sink = Sink::default();
    let writer = sink.clone();
    let subscriber = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .event_format(JsonLines)
                .with_writer(move || writer.clone()),
        )
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer(NAME)));
    let _serial = SERIAL.lock().await;
    let _guard = tracing::subscriber::set_default(subscriber);
    // A callsite's interest is cached process-wide by the first thread that reaches it:
    // one reached first on a thread with no subscriber (the other test's service) is
    // cached as never, which a thread-local default does not undo. Ask every callsite
    // again now that this one is in place.
    tracing::callsite::rebuild_interest_cache();

    let db = TestDb::sqlite().await;
    let mut shared = shared_with(db.store.clone(), true);
    shared.trace_requests = true;
    let state = AppState::new(shared);
    state
        .book
        .upsert(scaling_facts::measure::facts::ReleaseFacts::idle(
            "shop.prod",
            "prod",
            "shop",
            t(0),
        ));
    let call = |traceparent: Option<&str>| {
        let mut req = Request::get("/v1/releases/shop.prod/scaling");
        if let Some(tp) = traceparent {
            req = req.header("traceparent", tp);
        }
        app(state.clone()).oneshot(req.body(Body::empty()).unwrap())
    };
    let response = call(Some(&format!("00-{TRACE_ID}-{CALLER_SPAN}-01")))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let request_id = response.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    // A request without one starts a trace of its own; one with a malformed one too.
    call(None).await.unwrap();
    call(Some("00-not-a-trace-01")).await.unwrap();
    provider.force_flush().unwrap();

    let spans = exporter.get_finished_spans().unwrap();
    assert_eq!(spans.len(), 3, "{spans:#?}");
    let joined = &spans[0];
    assert_eq!(joined.span_context.trace_id().to_string(), TRACE_ID);
    assert_eq!(joined.parent_span_id.to_string(), CALLER_SPAN);
    assert_eq!(joined.span_kind, SpanKind::Server);
    assert_eq!(joined.name, "GET /v1/releases/{release}/scaling");
    assert_eq!(
        attribute(joined, "http.response.status_code"),
        Some(&Value::I64(200))
    );
    assert_eq!(
        attribute(joined, "request_id").map(|v| v.as_str().into_owned()),
        Some(request_id)
    );
    for own in &spans[1..] {
        assert_ne!(own.span_context.trace_id().to_string(), TRACE_ID);
        assert!(own.span_context.is_valid());
        assert_eq!(own.parent_span_id, opentelemetry::trace::SpanId::INVALID);
    }

    // The request's log line (the access log, at debug) names the trace and the span.
    let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
    let line = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|l| l["message"] == "request" && l["trace_id"] == TRACE_ID)
        .unwrap_or_else(|| panic!("no request line in the caller's trace: {text}"));
    assert_eq!(line["span_id"], joined.span_context.span_id().to_string());
}

#[test]
fn a_log_line_is_one_flat_object_with_ids_only_inside_a_span() {
    let sink = Sink::default();
    let writer = sink.clone();
    let subscriber = tracing_subscriber::registry().with(
        tracing_subscriber::fmt::layer()
            .event_format(JsonLines)
            .with_writer(move || writer.clone()),
    );
    tracing::subscriber::with_default(subscriber, || {
        tracing::warn!(
            release = "shop.prod",
            took_ms = 12u64,
            ok = true,
            "a \"quoted\" word"
        );
    });
    let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    let line: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(line["level"], "WARN");
    assert_eq!(line["message"], "a \"quoted\" word");
    assert_eq!(line["release"], "shop.prod");
    assert_eq!(line["took_ms"], 12);
    assert_eq!(line["ok"], true);
    assert!(line.get("trace_id").is_none(), "no span, no ids: {line}");
    assert!(line["timestamp"].as_str().unwrap().ends_with('Z'));
}

const SCENARIO: &str = r#"
seed: 5
services:
  - namespace: t
    name: traced
    timing: {provisioning_ms: 120, pulling_image_ms: 200, starting_ms: 150}
"#;

/// The only test in this binary that installs the global provider, which wake spans use.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_wake_is_a_span_with_the_true_duration() {
    let _serial = SERIAL.lock().await;
    let exporter = InMemorySpanExporter::default();
    let traces =
        Traces::install(SdkTracerProvider::builder().with_simple_exporter(exporter.clone()));
    let (sim, _client) = start_sim(SCENARIO).await;
    let db = TestDb::sqlite().await;
    let service = RunningService::start(&sim, &db.url, |_| {}).await;
    let cluster = sim.cluster.clone();
    cluster.force_idle("t", "traced-00001");
    eventually(20, "at zero", || {
        (common::fault_run::pods_of(&cluster, "t", "traced-00001") == 0).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    cluster
        .activate("t", "traced", Duration::ZERO, None)
        .await
        .expect("served");

    let wake = eventually(20, "the wake's span", || {
        exporter
            .get_finished_spans()
            .unwrap()
            .into_iter()
            .find(|s| {
                s.name == "wake"
                    && attribute(s, "wake.kind") == Some(&Value::from(WakeKind::Wake.to_string()))
            })
    })
    .await;
    let truth = cluster
        .truth
        .wakes()
        .into_iter()
        .rfind(|w| w.kind == WakeKind::Wake)
        .expect("a true wake");
    assert_eq!(truth.outcome, Some(Outcome::Served));
    let true_ms = truth.duration_ms().unwrap();
    let span_ms = wake
        .end_time
        .duration_since(wake.start_time)
        .unwrap()
        .as_millis() as u64;
    // The span is the measured wake: within the 50 ms the measurement tests allow.
    assert!(
        span_ms.abs_diff(true_ms) <= 50,
        "span {span_ms} ms, truth {true_ms} ms"
    );
    let started = SystemTime::from(truth.started_at);
    let off = wake
        .start_time
        .duration_since(started)
        .unwrap_or_else(|e| e.duration());
    assert!(
        off <= Duration::from_millis(50),
        "starts {off:?} from the truth"
    );
    for (key, value) in [
        ("release", "traced.t"),
        ("revision", "traced-00001"),
        ("k8s.namespace.name", "t"),
        ("knative.service", "traced"),
        ("wake.outcome", "served"),
    ] {
        assert_eq!(
            attribute(&wake, key),
            Some(&Value::from(value)),
            "{key}: {:#?}",
            wake.attributes
        );
    }
    assert!(
        wake.attributes
            .contains(&KeyValue::new("wake.duration_ms", span_ms as i64))
    );
    service.stop().await;
    traces.shutdown().await;
}
