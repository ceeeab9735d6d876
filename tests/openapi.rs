//! The checked-in OpenAPI document must be what the code generates, and say everything a
//! caller needs: every route the router serves, an operationId, an example on every
//! response, the error codes as an enum. Regenerate with
//! `cargo run -q -- openapi > openapi/v1.json`.

mod common;

use std::collections::BTreeSet;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use scaling_facts::serve::{app, openapi::document};
use scaling_facts_api::ErrorCode;
use serde_json::Value;
use tower::ServiceExt;

fn doc() -> Value {
    serde_json::from_str(&document()).unwrap()
}

/// Every documented operation, as (method, path, operation).
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            out.push((method.to_uppercase(), path.clone(), op.clone()));
        }
    }
    out
}

#[test]
fn checked_in_document_matches_the_code() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/openapi/v1.json");
    let checked_in = std::fs::read_to_string(path).expect("openapi/v1.json exists");
    let generated = document();
    if checked_in != generated {
        let line = checked_in
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .map_or_else(
                || "at the end".to_owned(),
                |n| format!("from line {}", n + 1),
            );
        panic!(
            "openapi/v1.json is out of date ({line}); regenerate it with \
             `cargo run -q -- openapi > openapi/v1.json`"
        );
    }
}

#[test]
fn document_describes_every_endpoint_and_the_error_shape() {
    let doc: serde_json::Value = serde_json::from_str(&document()).unwrap();
    let paths = doc["paths"].as_object().unwrap();
    for path in [
        "/v1/releases",
        "/v1/releases/{release}/scaling",
        "/v1/releases/{release}/runtime",
        "/v1/releases/{release}/cold-starts",
        "/v1/releases/{release}/config",
        "/v1/releases/{release}/events",
        "/v1/events",
        "/v1/scaling/batch",
        "/alive",
        "/health/ready",
        "/health",
        "/metrics",
        "/openapi.json",
    ] {
        assert!(paths.contains_key(path), "{path} is not documented");
    }
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    for name in [
        "Scaling",
        "Runtime",
        "ColdStarts",
        "ErrorBody",
        "ConfigUpdate",
        "ConfigView",
    ] {
        assert!(schemas.contains_key(name), "schema {name} missing");
    }
    let scaling = &schemas["Scaling"]["required"];
    for field in [
        "min_instances",
        "idle_timeout_seconds",
        "expected_cold_start_seconds",
        "serving_since",
    ] {
        assert!(
            scaling.as_array().unwrap().iter().any(|f| f == field),
            "{field} not required"
        );
    }
}

#[test]
fn every_operation_has_a_unique_camel_case_id() {
    let doc = doc();
    let mut seen = BTreeSet::new();
    for (method, path, op) in operations(&doc) {
        let id = op["operationId"]
            .as_str()
            .unwrap_or_else(|| panic!("{method} {path} has no operationId"));
        assert!(
            id.chars().next().unwrap().is_ascii_lowercase()
                && id.chars().all(|c| c.is_ascii_alphanumeric()),
            "{method} {path}: operationId {id:?} is not camelCase"
        );
        assert!(seen.insert(id.to_owned()), "operationId {id} used twice");
    }
    for id in ["getScaling", "getRuntime", "getColdStarts", "putConfig"] {
        assert!(seen.contains(id), "{id} missing");
    }
}

#[test]
fn every_response_has_an_example() {
    let doc = doc();
    for (method, path, op) in operations(&doc) {
        for (status, response) in op["responses"].as_object().unwrap() {
            let content = response["content"]
                .as_object()
                .unwrap_or_else(|| panic!("{method} {path} {status} has no content"));
            for (media, c) in content {
                assert!(
                    c.get("example").is_some() || c.get("examples").is_some(),
                    "{method} {path} {status} {media} has no example"
                );
            }
        }
    }
}

#[test]
fn json_bodies_and_timeouts_are_documented() {
    let doc = doc();
    for (method, path, op) in operations(&doc) {
        let statuses: BTreeSet<&str> = op["responses"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert!(statuses.contains("503"), "{method} {path}: 503 missing");
        if op.get("requestBody").is_some() {
            for s in ["400", "413", "415", "422"] {
                assert!(statuses.contains(s), "{method} {path}: {s} missing");
            }
        }
        if path.starts_with("/v1/") {
            assert!(statuses.contains("401"), "{method} {path}: 401 missing");
        }
    }
}

#[test]
fn error_code_is_an_enum_of_every_code_the_server_sends() {
    let doc = doc();
    let schema = &doc["components"]["schemas"]["ErrorCode"];
    let listed: Vec<&str> = schema["enum"]
        .as_array()
        .expect("ErrorCode is an enum")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let all: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(listed, all);
    assert!(listed.contains(&"bad_request"));
    assert_eq!(
        doc["components"]["schemas"]["ErrorBody"]["properties"]["error_code"]["$ref"],
        "#/components/schemas/ErrorCode"
    );
}

#[test]
fn readme_lists_every_error_code() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    for code in ErrorCode::ALL {
        assert!(
            readme.contains(&format!("`{code}`")),
            "README does not list the error code `{code}`"
        );
    }
}

/// The router and the document come from one table; this shows it from outside: every
/// documented operation reaches a handler (no 404 `not_found`, no 405).
#[tokio::test]
async fn every_documented_operation_is_routed() {
    let app_under_test = common::test_app(true).await;
    let doc = doc();
    for (method, path, _) in operations(&doc) {
        let uri = path.replace("{release}", "shop.prod");
        let mut request = Request::builder()
            .method(Method::from_bytes(method.as_bytes()).unwrap())
            .uri(&uri);
        let body = if method == "GET" {
            Body::empty()
        } else {
            request = request.header("content-type", "application/json");
            Body::from("{}")
        };
        let response = app(app_under_test.state.clone())
            .oneshot(request.body(body).unwrap())
            .await
            .unwrap();
        let status = response.status();
        assert_ne!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {uri}");
        if status == StatusCode::NOT_FOUND {
            let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
                .await
                .unwrap();
            let body: Value = serde_json::from_slice(&bytes).unwrap();
            assert_ne!(
                body["error_code"], "not_found",
                "{method} {uri} is not routed"
            );
        }
    }
    app_under_test.db.finish().await;
}
