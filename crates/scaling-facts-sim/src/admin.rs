//! The simulator's own endpoints: the activator that callers send requests through, and
//! the admin endpoints that tests and the demo use to read the truth and inject faults.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::cluster::Cluster;
use super::control::ActivateError;
use super::faults::Fault;
use super::truth::{Counters, TruthWake};
use scaling_facts_api::DEADLINE_HEADER;

#[derive(Debug, Deserialize)]
pub struct ActivateQuery {
    /// How long the application works on the request.
    #[serde(default)]
    pub hold_ms: u64,
}

pub async fn activate(
    State(cluster): State<Arc<Cluster>>,
    Path((namespace, service)): Path<(String, String)>,
    Query(q): Query<ActivateQuery>,
    headers: HeaderMap,
) -> Response {
    let deadline = headers
        .get(DEADLINE_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_millis);
    match cluster
        .activate(
            &namespace,
            &service,
            Duration::from_millis(q.hold_ms),
            deadline,
        )
        .await
    {
        Ok(done) => Json(done).into_response(),
        Err(e) => {
            let (status, reason) = match &e {
                ActivateError::NoSuchService => {
                    (StatusCode::NOT_FOUND, "no such service".to_owned())
                }
                ActivateError::NoRevision => {
                    (StatusCode::SERVICE_UNAVAILABLE, "no revision".to_owned())
                }
                ActivateError::Unavailable(r) => (StatusCode::SERVICE_UNAVAILABLE, r.clone()),
                ActivateError::Timeout => (
                    StatusCode::GATEWAY_TIMEOUT,
                    "deadline passed while waking".to_owned(),
                ),
            };
            (status, Json(json!({"error": reason}))).into_response()
        }
    }
}

/// The truth so far.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TruthReport {
    pub wakes: Vec<TruthWake>,
    pub counters: Counters,
}

pub async fn truth(State(cluster): State<Arc<Cluster>>) -> Json<TruthReport> {
    Json(TruthReport {
        wakes: cluster.truth.wakes(),
        counters: cluster.truth.counters(),
    })
}

pub async fn fault(State(cluster): State<Arc<Cluster>>, Json(fault): Json<Fault>) -> StatusCode {
    apply(&cluster, &fault);
    StatusCode::NO_CONTENT
}

/// Applies a fault now.
pub fn apply(cluster: &Cluster, fault: &Fault) {
    tracing::info!(?fault, "simulator fault");
    match *fault {
        Fault::DropWatches => cluster.faults.drop_watches(),
        Fault::GoneNext { count } => cluster.faults.gone_next(count),
        Fault::Restart => cluster.restart_api_server(),
        Fault::Delay { ms } => cluster.faults.set_delay(ms),
        Fault::Refuse { ms } => cluster.faults.refuse_for(Duration::from_millis(ms)),
        Fault::FailWrites { count } => cluster.faults.fail_writes(count),
        Fault::Unavailable { ms } => cluster.faults.unavailable_for(Duration::from_millis(ms)),
    }
}

pub async fn force_idle(
    State(cluster): State<Arc<Cluster>>,
    Path((namespace, revision)): Path<(String, String)>,
) -> StatusCode {
    if cluster.force_idle(&namespace, &revision) {
        StatusCode::NO_CONTENT
    } else {
        StatusCode::NOT_FOUND
    }
}

/// What `kubectl version` asks; some clients call it first.
pub async fn version() -> Json<serde_json::Value> {
    Json(
        json!({"major": "1", "minor": "33", "gitVersion": "v1.33.0-sim", "platform": "linux/amd64"}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deadline_header_is_found_whatever_its_case() {
        let mut h = HeaderMap::new();
        h.insert("mainsequence-request-timeout-ms", "1500".parse().unwrap());
        assert_eq!(h.get(DEADLINE_HEADER).unwrap(), "1500");
    }
}
