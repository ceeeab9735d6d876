//! The API server's audit trail, reduced to what an authorizer decides on: the verb, the
//! API group, the resource (with its subresource), the namespace and the object's name.
//! A test compares it with the RBAC the deployment grants, so that the service is given
//! exactly the requests it makes. Each distinct request is kept once: the trail stays the
//! size of the service's vocabulary however long the simulator runs.

use std::collections::BTreeSet;
use std::sync::Mutex;

use axum::http::Method;

/// One kind of request, as RBAC sees it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Authorized {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete` or `deletecollection`.
    pub verb: &'static str,
    /// Empty for the core group.
    pub group: String,
    /// The plural, with `/status` for the status subresource.
    pub resource: String,
    pub namespace: Option<String>,
    /// The object's name; for a list or watch, the name its field selector narrows it to.
    pub name: Option<String>,
}

/// Every distinct request the API server was asked.
#[derive(Debug, Default)]
pub struct Audit(Mutex<BTreeSet<Authorized>>);

impl Audit {
    pub fn requests(&self) -> BTreeSet<Authorized> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn record(&self, request: Authorized) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(request);
    }
}

/// The verb the authorizer gives a request: a collection read is a `list`, or a `watch`
/// when it asks to watch.
pub(crate) fn verb(method: &Method, named: bool, watch: bool) -> &'static str {
    match (method.as_str(), named) {
        ("GET" | "HEAD", false) if watch => "watch",
        ("GET" | "HEAD", false) => "list",
        ("GET" | "HEAD", true) => "get",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", false) => "deletecollection",
        ("DELETE", true) => "delete",
        _ => "unknown",
    }
}
