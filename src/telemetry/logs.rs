//! The `tracing` subscriber: log lines (JSON in production, text in a terminal) and, when
//! traces are on, the OpenTelemetry layer beside them.
//!
//! JSON lines are written by [`JsonLines`] rather than `tracing-subscriber`'s own JSON
//! format, because a line must carry the trace and span ids of the request it belongs to
//! so that a log search and a trace viewer meet: `{"timestamp", "level", "target", the
//! event's fields, "trace_id", "span_id"}`, one object per line, fields at the top level.
//!
//! `RUST_LOG` filters the log lines only; spans reach the OpenTelemetry layer at `info`
//! whatever the log level, so quieting the logs does not lose traces.

use std::fmt;

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::{EnvFilter, Targets};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{Layer, Registry};

use super::traces::{TraceIds, Traces};
use crate::config::LogFormat;

/// Installs the global subscriber; `RUST_LOG` overrides the default `info` level. A
/// second call (tests, the demo running several parts) keeps the first subscriber.
pub fn init_logging(format: LogFormat) {
    init(format, &Traces::default());
}

/// The subscriber with `traces`' layer when they are on.
pub fn init(format: LogFormat, traces: &Traces) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let lines = match format {
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .event_format(JsonLines)
            .with_filter(filter)
            .boxed(),
        LogFormat::Text => tracing_subscriber::fmt::layer().with_filter(filter).boxed(),
    };
    let spans = traces
        .layer()
        .map(|l| l.with_filter(Targets::new().with_target("scaling_facts", Level::INFO)));
    let _ = tracing::subscriber::set_global_default(Registry::default().with(lines).with(spans));
}

/// One JSON object per event, with the ids of the innermost span that has them.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonLines;

impl<S, N> FormatEvent<S, N> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        let mut line = Map::new();
        line.insert(
            "timestamp".into(),
            Value::String(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)),
        );
        line.insert("level".into(), Value::String(meta.level().to_string()));
        line.insert("target".into(), Value::String(meta.target().to_owned()));
        event.record(&mut Fields(&mut line));
        let ids = ctx.lookup_current().and_then(|span| {
            span.scope()
                .find_map(|s| s.extensions().get::<TraceIds>().copied())
        });
        if let Some(ids) = ids {
            line.insert("trace_id".into(), Value::String(ids.trace_id.to_string()));
            line.insert("span_id".into(), Value::String(ids.span_id.to_string()));
        }
        let text = serde_json::to_string(&line).map_err(|_| fmt::Error)?;
        writeln!(writer, "{text}")
    }
}

/// An event's fields into the line's object; `message` keeps its name.
struct Fields<'a>(&'a mut Map<String, Value>);

impl Fields<'_> {
    fn put(&mut self, field: &Field, value: Value) {
        self.0.insert(field.name().to_owned(), value);
    }
}

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, Value::String(value.to_owned()));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, Value::Bool(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, Value::from(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, Value::from(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, Value::from(value));
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.put(field, Value::String(value.to_string()));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.put(field, Value::String(format!("{value:?}")));
    }
}
