//! Server-Sent Events of runtime changes, for one release or for all.
//!
//! Each event is `event: runtime` with the same JSON as the `runtime` read, and the change
//! sequence number as its id; `event: removed` when a release disappears; `event:
//! config_drift` when its Knative Service's template stops (or starts again) saying what the
//! service applied to it. A per-release
//! stream starts with the current state, so a UI needs no separate read. A subscriber that
//! falls behind gets the current state again (one release) or a `lagged` event saying how
//! many changes it missed (all releases). Streams end when the service shuts down.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use chrono::Utc;
use futures::{Stream, StreamExt, stream};
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;

use scaling_facts_api::{Lagged, StreamEvent, examples};

use super::AppState;
use super::auth::Caller;
use super::error::ApiError;
use super::openapi::{FleetStreamErrors, ReleaseStreamErrors};
use super::streams::StreamPermit;
use crate::book::{Change, FactsBook};
use crate::measure::facts::ReleaseFacts;
use crate::telemetry::metrics::Metrics;

const KEEP_ALIVE: Duration = Duration::from_secs(15);

fn runtime_event(book: &FactsBook, facts: &ReleaseFacts, seq: Option<u64>) -> Event {
    let runtime = facts.runtime_at(Utc::now(), book.watch());
    let event = Event::default()
        .event("runtime")
        .json_data(&runtime)
        .expect("plain data");
    match seq {
        Some(seq) => event.id(seq.to_string()),
        None => event,
    }
}

/// The event of a change, rendered once for every stream that sends it (the runtime as of
/// the change, not of each subscriber's turn to send it).
fn change_event(book: &FactsBook, change: &Change) -> Event {
    let data = change
        .rendered
        .get_or_init(|| match (&change.facts, &change.drift) {
            (Some(facts), _) => {
                let runtime = facts.runtime_at(Utc::now(), book.watch());
                serde_json::to_vec(&runtime).expect("plain data").into()
            }
            (None, Some(drift)) => serde_json::to_vec(drift).expect("plain data").into(),
            (None, None) => change.release.clone().into(),
        });
    // JSON from serde_json and a release key hold no line breaks: one data line.
    let data = std::str::from_utf8(data).expect("JSON and keys are UTF-8");
    let kind = match (&change.facts, &change.drift) {
        (Some(_), _) => "runtime",
        (None, Some(_)) => "config_drift",
        (None, None) => "removed",
    };
    Event::default()
        .event(kind)
        .id(change.seq.to_string())
        .data(data)
}

/// Counts an open stream, and holds its place under the caps, for as long as it lives.
struct StreamGuard {
    metrics: Arc<Metrics>,
    _permit: StreamPermit,
}

impl StreamGuard {
    fn new(metrics: Arc<Metrics>, permit: StreamPermit) -> Self {
        metrics.sse_streams.inc();
        Self {
            metrics,
            _permit: permit,
        }
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.metrics.sse_streams.dec();
    }
}

/// A place under the caps for `caller`'s new stream.
fn permit(state: &AppState, caller: &Caller) -> Result<StreamPermit, ApiError> {
    state
        .streams
        .try_open(caller.token_name())
        .inspect_err(|_| {
            state.metrics.sse_refused.inc();
        })
}

fn finish(
    state: AppState,
    permit: StreamPermit,
    events: impl Stream<Item = Event> + Send + 'static,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let guard = StreamGuard::new(state.metrics.clone(), permit);
    let events = events
        .take_until(state.shutdown.clone().cancelled_owned())
        .map(move |e| {
            let _counted = &guard;
            Ok(e)
        });
    Sse::new(events).keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
}

/// Runtime changes of one release, starting with its current state.
#[utoipa::path(
    get, path = "/v1/releases/{release}/events", tag = "events", operation_id = "streamReleaseEvents",
    params(("release" = String, Path, description = "Release key", example = "steady.demo")),
    responses(
        (status = 200, description = "A stream of `runtime` events (the current state first, then each change, with the change's sequence number as `id`), a `config_drift` event when its Knative Service's template stops (or starts again) saying what the service applied, and a `removed` event if the release goes away. Each message's `event:` and `data:` lines are the `event` and `data` of the schema.", content_type = "text/event-stream", body = StreamEvent, example = examples::event_stream),
        ReleaseStreamErrors,
    ),
    security(("bearer" = []), ())
)]
pub async fn release_events(
    State(state): State<AppState>,
    caller: Caller,
    Path(release): Path<String>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    caller.require_read(&state)?;
    // Subscribe before reading the current state, so no change can fall between the two.
    let changes = state.book.subscribe_release(&release);
    // An unknown release answers 404 before the stream caps are asked.
    let admitted = state
        .book
        .get(&release)
        .ok_or_else(|| ApiError::UnknownRelease {
            release: release.clone(),
        })
        .and_then(|current| Ok((current, permit(&state, &caller)?)));
    let (current, permit) = match admitted {
        Ok(admitted) => admitted,
        Err(e) => {
            // A refused subscription leaves no channel behind: asking cannot grow the map.
            drop(changes);
            state.book.unsubscribe_release(&release);
            return Err(e);
        }
    };
    let changes = BroadcastStream::new(changes);
    let book = state.book.clone();
    let first = runtime_event(&book, &current.facts, None);
    let rest = changes.filter_map(move |item| {
        let event = match item {
            Ok(change) => Some(change_event(&book, &change)),
            Err(BroadcastStreamRecvError::Lagged(_)) => book
                .get(&release)
                .map(|e| runtime_event(&book, &e.facts, None)),
        };
        futures::future::ready(event)
    });
    Ok(finish(
        state,
        permit,
        stream::once(async { first }).chain(rest),
    ))
}

/// Runtime changes of every release.
#[utoipa::path(
    get, path = "/v1/events", tag = "events", operation_id = "streamAllEvents",
    responses(
        (status = 200, description = "A stream of `runtime`, `config_drift`, `removed` and `lagged` events of every release, after a first `: connected` comment. Each message's `event:` and `data:` lines are the `event` and `data` of the schema.", content_type = "text/event-stream", body = StreamEvent, example = examples::event_stream),
        FleetStreamErrors,
    ),
    security(("bearer" = []), ())
)]
pub async fn all_events(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    caller.require_read(&state)?;
    let permit = permit(&state, &caller)?;
    let book = state.book.clone();
    let events = BroadcastStream::new(state.book.subscribe()).map(move |item| match item {
        Ok(change) => change_event(&book, &change),
        Err(BroadcastStreamRecvError::Lagged(missed)) => Event::default()
            .event("lagged")
            .json_data(Lagged { missed })
            .expect("plain data"),
    });
    // A first comment tells the client the stream is open before any change happens.
    let opened = Event::default().comment("connected");
    Ok(finish(
        state,
        permit,
        stream::once(async { opened }).chain(events),
    ))
}
