//! The Kubernetes API over HTTP, as far as kube-rs needs it: list (label selector,
//! `limit` and `continue`), watch (`resourceVersion`, bookmarks, `timeoutSeconds`, `410`),
//! get, create, replace, delete, merge and JSON patch, server-side apply with field
//! managers and conflicts ([`crate::managed`]), and the status subresource.
//!
//! One handler parses every `/api/...` and `/apis/...` path, because the URL grammar is
//! the same for every kind and a table of kinds is easier to read than a route per kind.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use super::cluster::Cluster;
use super::objects::{ObjectError, StoredEvent, labels_of};
use super::resources::{self, Kind};
use super::selector::Selector;

mod write;

/// Where a request points.
#[derive(Debug)]
pub(crate) struct Target {
    kind: Kind,
    namespace: Option<String>,
    name: Option<String>,
    status: bool,
}

fn parse_path(path: &str) -> Option<Target> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segs.as_slice() {
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return None,
    };
    let (namespace, rest) = match rest {
        ["namespaces", ns, rest @ ..] if !rest.is_empty() => (Some((*ns).to_owned()), rest),
        _ => (None, rest),
    };
    let (plural, name, status) = match rest {
        [plural] => (*plural, None, false),
        [plural, name] => (*plural, Some((*name).to_owned()), false),
        [plural, name, "status"] => (*plural, Some((*name).to_owned()), true),
        _ => return None,
    };
    let kind = resources::lookup(group, version, plural)?;
    Some(Target {
        kind,
        namespace,
        name,
        status,
    })
}

/// A Kubernetes `Status` failure.
pub fn status_error(code: StatusCode, reason: &str, message: impl Into<String>) -> Response {
    let body = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "message": message.into(), "reason": reason, "code": code.as_u16(),
    });
    (code, axum::Json(body)).into_response()
}

fn object_error(e: ObjectError, what: &str) -> Response {
    match e {
        ObjectError::NotFound => status_error(
            StatusCode::NOT_FOUND,
            "NotFound",
            format!("{what} not found"),
        ),
        ObjectError::AlreadyExists => status_error(
            StatusCode::CONFLICT,
            "AlreadyExists",
            format!("{what} already exists"),
        ),
        ObjectError::Gone { oldest } => status_error(
            StatusCode::GONE,
            "Expired",
            format!("too old resource version (oldest available: {oldest})"),
        ),
        ObjectError::Invalid(m) => status_error(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", m),
    }
}

pub async fn handle(
    State(cluster): State<Arc<Cluster>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
    body: Bytes,
) -> Response {
    let delay = cluster.faults.delay();
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    if cluster.faults.unavailable() {
        return status_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailable",
            "the server is currently unable to handle the request (injected)",
        );
    }
    let Some(target) = parse_path(uri.path()) else {
        return status_error(
            StatusCode::NOT_FOUND,
            "NotFound",
            format!("the server could not find {}", uri.path()),
        );
    };
    let what = format!(
        "{} {:?}",
        target.kind.plural,
        target.name.as_deref().unwrap_or("")
    );
    let selector = match Selector::parse(query.get("labelSelector").map_or("", String::as_str))
        .and_then(|s| s.with_fields(query.get("fieldSelector").map_or("", String::as_str)))
    {
        Ok(s) => s,
        Err(e) => return status_error(StatusCode::BAD_REQUEST, "BadRequest", e),
    };
    let is_watch = query.get("watch").is_some_and(|v| v == "true" || v == "1");
    cluster.audit.record(crate::audit::Authorized {
        verb: crate::audit::verb(&method, target.name.is_some(), is_watch),
        group: target.kind.group.to_owned(),
        resource: match target.status {
            true => format!("{}/status", target.kind.plural),
            false => target.kind.plural.to_owned(),
        },
        namespace: target.namespace.clone(),
        name: target
            .name
            .clone()
            .or_else(|| selector.selected_name().map(str::to_owned)),
    });
    let writes = matches!(
        method,
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    );
    if writes && cluster.faults.take_write_failure() {
        return status_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalError",
            "etcdserver: leader changed",
        );
    }
    let is_put = method == Method::PUT;
    let manager = write::field_manager(&query, &headers);
    let write = write::Write {
        cluster: &cluster,
        target: &target,
        headers: &headers,
        query: &query,
        body: &body,
        manager: &manager,
        what: &what,
    };
    match (method, target.name.as_deref()) {
        (Method::GET, None) if is_watch => watch(cluster, target, selector, &query),
        (Method::GET, None) => list(&cluster, &target, &selector, &query),
        (Method::GET, Some(name)) => {
            let ns = target.namespace.as_deref().unwrap_or_default();
            match cluster.lock().get(target.kind, ns, name) {
                Some(obj) => axum::Json((*obj).clone()).into_response(),
                None => object_error(ObjectError::NotFound, &what),
            }
        }
        (Method::POST, None) => write::create(&write),
        (Method::PUT | Method::PATCH, Some(name)) => write::update(&write, name, is_put),
        (Method::DELETE, Some(name)) => {
            let ns = target.namespace.clone().unwrap_or_default();
            let deleted = cluster.lock().delete(target.kind, &ns, name);
            match deleted {
                Ok(obj) => {
                    cluster.after_api_write(target.kind, &ns, name);
                    axum::Json((*obj).clone()).into_response()
                }
                Err(e) => object_error(e, &what),
            }
        }
        (m, _) => status_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            format!("{m} is not supported here"),
        ),
    }
}

fn name_of(obj: &Value) -> &str {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn list(
    cluster: &Cluster,
    t: &Target,
    selector: &Selector,
    query: &HashMap<String, String>,
) -> Response {
    let limit = query
        .get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .filter(|l| *l > 0)
        .unwrap_or(usize::MAX);
    // `continue` carries the list's version and the last key served.
    let cont = query.get("continue").filter(|c| !c.is_empty());
    let (list_rv, after) = match cont.and_then(|c| parse_continue(c)) {
        Some((rv, ns, name)) => (Some(rv), Some((ns, name))),
        None if cont.is_some() => {
            return status_error(
                StatusCode::BAD_REQUEST,
                "BadRequest",
                "invalid continue token",
            );
        }
        None => (None, None),
    };
    let objects = cluster.lock();
    let rv = list_rv.unwrap_or_else(|| objects.resource_version());
    let mut items: Vec<Value> = Vec::new();
    let mut next = None;
    let after_ref = after.as_ref().map(|(a, b)| (a.as_str(), b.as_str()));
    for obj in objects.list(t.kind, t.namespace.as_deref(), selector, after_ref) {
        if items.len() == limit {
            let last = &items[items.len() - 1];
            next = Some(make_continue(rv, last));
            break;
        }
        items.push((**obj).clone());
    }
    drop(objects);
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if let Some(next) = next {
        metadata["continue"] = json!(next);
    }
    axum::Json(json!({
        "kind": format!("{}List", t.kind.kind),
        "apiVersion": t.kind.api_version(),
        "metadata": metadata,
        "items": items,
    }))
    .into_response()
}

fn make_continue(rv: u64, last: &Value) -> String {
    let ns = last
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    format!("{rv}|{ns}|{}", name_of(last))
}

fn parse_continue(token: &str) -> Option<(u64, String, String)> {
    let mut parts = token.splitn(3, '|');
    let rv = parts.next()?.parse().ok()?;
    Some((rv, parts.next()?.to_owned(), parts.next()?.to_owned()))
}

/// A watch event as the API server writes it: `type` before `object`, the order of the
/// fields of Kubernetes' `WatchEvent` (a map of the two would sort `object` first).
#[derive(serde::Serialize)]
struct WatchEventLine<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    object: &'a Value,
}

/// One line of a watch stream, newline included; public for benches that replay what
/// the API server sends.
pub fn event_line(kind: &str, object: &Value) -> Bytes {
    let mut line = serde_json::to_vec(&WatchEventLine { kind, object }).expect("plain data");
    line.push(b'\n');
    Bytes::from(line)
}

fn gone_event(message: &str) -> Bytes {
    event_line(
        "ERROR",
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": message, "reason": "Expired", "code": 410}),
    )
}

fn bookmark(kind: Kind, rv: u64, initial_end: bool) -> Bytes {
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if initial_end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    event_line(
        "BOOKMARK",
        &json!({"kind": kind.kind, "apiVersion": kind.api_version(), "metadata": meta}),
    )
}

fn watch(
    cluster: Arc<Cluster>,
    t: Target,
    selector: Selector,
    query: &HashMap<String, String>,
) -> Response {
    let json_stream = |body: Body| {
        Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "application/json")
            .body(body)
            .expect("static headers")
    };
    if cluster.faults.take_gone() {
        return json_stream(Body::from(gone_event(
            "too old resource version (injected)",
        )));
    }
    let bookmarks = query
        .get("allowWatchBookmarks")
        .is_some_and(|v| v == "true");
    let initial_events = query.get("sendInitialEvents").is_some_and(|v| v == "true");
    let timeout = query
        .get("timeoutSeconds")
        .and_then(|s| s.parse::<u64>().ok())
        .map_or(Duration::from_secs(1800), Duration::from_secs);
    let requested = query
        .get("resourceVersion")
        .filter(|v| !v.is_empty() && *v != "0");
    let kind = t.kind;
    let ns = t.namespace.clone();
    let matches = {
        let selector = selector.clone();
        let ns = ns.clone();
        move |e: &StoredEvent| {
            e.kind == kind
                && ns.as_deref().is_none_or(|n| n == e.namespace)
                && selector.matches_object(
                    &labels_of(&e.object),
                    e.object
                        .pointer("/metadata/name")
                        .and_then(Value::as_str)
                        .unwrap_or(""),
                    &e.namespace,
                )
        }
    };
    // Under one lock: the starting point and the receiver, so that nothing is missed.
    let (first, rx, start_rv) = {
        let objects = cluster.lock();
        match requested.map(|v| v.parse::<u64>()) {
            Some(Ok(rv)) if !initial_events => match objects.watch_from(rv) {
                Ok((past, rx)) => {
                    let lines: Vec<Bytes> = past
                        .iter()
                        .filter(|e| matches(e))
                        .map(|e| event_line(e.event.as_str(), &e.object))
                        .collect();
                    (lines, rx, objects.resource_version())
                }
                Err(ObjectError::Gone { oldest }) => {
                    drop(objects);
                    return json_stream(Body::from(gone_event(&format!(
                        "too old resource version: {rv} ({oldest})"
                    ))));
                }
                Err(_) => unreachable!("watch_from only fails with Gone"),
            },
            Some(Err(_)) => {
                return status_error(
                    StatusCode::BAD_REQUEST,
                    "BadRequest",
                    "resourceVersion must be a number",
                );
            }
            // No version (or "0", or a streaming list): the current objects as ADDED first.
            _ => {
                let mut lines: Vec<Bytes> = objects
                    .list(kind, ns.as_deref(), &selector, None)
                    .map(|o| event_line("ADDED", o))
                    .collect();
                let rv = objects.resource_version();
                if initial_events {
                    lines.push(bookmark(kind, rv, true));
                }
                (lines, objects.subscribe(), rv)
            }
        }
    };
    let mut drops = cluster.faults.watch_drops();
    drops.mark_unchanged();
    let interval = cluster.bookmark_interval();
    let stream = async_stream::stream! {
        for line in first {
            yield Ok::<Bytes, std::io::Error>(line);
        }
        let mut rx = rx;
        let mut last_rv = start_rv;
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
        loop {
            tokio::select! {
                received = rx.recv() => match received {
                    Ok(e) => {
                        last_rv = last_rv.max(e.rv);
                        if matches(&e) {
                            yield Ok(event_line(e.event.as_str(), &e.object));
                        }
                    }
                    // Too slow to keep up, or the server is going away: end the watch,
                    // the client resumes from its last version.
                    Err(RecvError::Lagged(_)) | Err(RecvError::Closed) => break,
                },
                _ = ticker.tick(), if bookmarks => {
                    yield Ok(bookmark(kind, last_rv, false));
                }
                _ = drops.changed() => {
                    yield Err(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "watch dropped"));
                    break;
                }
                () = &mut deadline => break,
            }
        }
    };
    json_stream(Body::from_stream(stream.boxed()))
}
