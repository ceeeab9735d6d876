//! The writes: create, replace, merge, JSON and strategic merge patch, server-side apply,
//! each recorded in the object's field managers ([`crate::managed`]), and the status
//! subresource, through which only `status` changes.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{Target, name_of, object_error, status_error};
use crate::cluster::Cluster;

/// A write as the handler parsed it.
pub(super) struct Write<'a> {
    pub cluster: &'a Arc<Cluster>,
    pub target: &'a Target,
    pub headers: &'a HeaderMap,
    pub query: &'a HashMap<String, String>,
    pub body: &'a Bytes,
    /// Who writes, for `managedFields`.
    pub manager: &'a str,
    /// The object, as error messages name it.
    pub what: &'a str,
}

/// `POST`: a new object, owned by its writer.
pub(super) fn create(w: &Write<'_>) -> Response {
    let Write {
        cluster,
        target,
        body,
        manager,
        what,
        ..
    } = *w;
    let Some(ns) = target.namespace.as_deref() else {
        return status_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            "create needs a namespace",
        );
    };
    let mut obj: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return status_error(StatusCode::BAD_REQUEST, "BadRequest", e.to_string());
        }
    };
    if target.kind.status_subresource
        && let Some(m) = obj.as_object_mut()
    {
        m.remove("status");
    }
    crate::managed::update(None, &mut obj, manager);
    let created = cluster.lock().create(target.kind, ns, obj);
    match created {
        Ok(obj) => {
            cluster.after_api_write(target.kind, ns, name_of(&obj));
            (StatusCode::CREATED, axum::Json((*obj).clone())).into_response()
        }
        Err(e) => object_error(e, what),
    }
}

/// `PUT` (`put`) or `PATCH` of the object `name`.
pub(super) fn update(w: &Write<'_>, name: &str, put: bool) -> Response {
    let Write {
        cluster,
        target,
        headers,
        query,
        body,
        manager,
        what,
    } = *w;
    let ns = target.namespace.clone().unwrap_or_default();
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_owned();
    let patch: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return status_error(StatusCode::BAD_REQUEST, "BadRequest", e.to_string());
        }
    };
    let mut failure = None;
    let mut conflicts = None;
    let status_only = target.status;
    let subresource = target.kind.status_subresource;
    let server_side = content_type.starts_with("application/apply-patch");
    if server_side && !query.contains_key("fieldManager") {
        return status_error(
            StatusCode::BAD_REQUEST,
            "BadRequest",
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
        );
    }
    let force = query.get("force").is_some_and(|f| f == "true");
    // A replace or merge patch that names a resourceVersion is a precondition: the write
    // happens only if the object is still at that version (optimistic concurrency, what a
    // Lease's holders rely on). Server-side apply ignores it unless set, as here.
    let precondition = patch
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .filter(|v| !v.is_empty())
        .map(str::to_owned);
    let mut stale = false;
    let result = cluster.lock().update(target.kind, &ns, name, |obj| {
        if let Some(expected) = &precondition
            && obj
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                != Some(expected.as_str())
        {
            stale = true;
            return;
        }
        let before = obj.clone();
        let applied = if put {
            let mut next = patch.clone();
            crate::managed::update(Some(&before), &mut next, manager);
            Ok(next)
        } else if server_side {
            match crate::managed::apply(obj, &patch, manager, force) {
                Ok(next) => Ok(next),
                Err(c) => {
                    conflicts = Some(c);
                    return;
                }
            }
        } else {
            apply_patch(obj.clone(), &content_type, &patch).map(|mut next| {
                crate::managed::update(Some(&before), &mut next, manager);
                next
            })
        };
        match applied {
            Ok(mut next) => {
                if status_only {
                    // Only status changes through the subresource.
                    let status = next.get("status").cloned();
                    next = before.clone();
                    match status {
                        Some(s) => next["status"] = s,
                        None => {
                            if let Some(m) = next.as_object_mut() {
                                m.remove("status");
                            }
                        }
                    }
                } else if subresource {
                    match before.get("status") {
                        Some(s) => next["status"] = s.clone(),
                        None => {
                            if let Some(m) = next.as_object_mut() {
                                m.remove("status");
                            }
                        }
                    }
                }
                *obj = next;
            }
            Err(e) => failure = Some(e),
        }
    });
    if let Some(e) = failure {
        return status_error(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", e);
    }
    if let Some(c) = conflicts {
        return apply_conflict(&c, &target.kind.api_version(), name);
    }
    if stale {
        return status_error(
            StatusCode::CONFLICT,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
                match target.kind.group {
                    "" => target.kind.plural.to_owned(),
                    g => format!("{}.{g}", target.kind.plural),
                }
            ),
        );
    }
    match result {
        Ok(obj) => {
            cluster.after_api_write(target.kind, &ns, name);
            axum::Json((*obj).clone()).into_response()
        }
        Err(e) => object_error(e, what),
    }
}

/// The writer's field manager: the `fieldManager` parameter, else its user agent's product
/// name (`kubectl` for `kubectl/v1.32.0 (...)`), as the API server defaults it.
pub(super) fn field_manager(query: &HashMap<String, String>, headers: &HeaderMap) -> String {
    if let Some(m) = query.get("fieldManager").filter(|m| !m.is_empty()) {
        return m.clone();
    }
    headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .and_then(|ua| ua.split('/').next())
        .filter(|m| !m.trim().is_empty())
        .map_or_else(|| "unknown".to_owned(), |m| m.trim().to_owned())
}

/// `409 Conflict` for an apply that would change fields other managers own.
pub(super) fn apply_conflict(
    conflicts: &[crate::managed::Conflict],
    api_version: &str,
    name: &str,
) -> Response {
    let body = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": crate::managed::conflict_message(conflicts, api_version),
        "reason": "Conflict", "code": 409,
        "details": {"name": name, "causes": crate::managed::conflict_causes(conflicts, api_version)},
    });
    (StatusCode::CONFLICT, axum::Json(body)).into_response()
}

fn apply_patch(mut obj: Value, content_type: &str, patch: &Value) -> Result<Value, String> {
    if content_type.starts_with("application/json-patch+json") {
        let ops: json_patch::Patch =
            serde_json::from_value(patch.clone()).map_err(|e| e.to_string())?;
        json_patch::patch(&mut obj, &ops).map_err(|e| e.to_string())?;
    } else {
        // Merge, strategic merge and apply patches are all treated as JSON merge patches:
        // the simulator's objects have no lists that strategic merge would key differently
        // for the writers it serves.
        json_patch::merge(&mut obj, patch);
    }
    Ok(obj)
}
