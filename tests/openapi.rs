//! The checked-in OpenAPI document must be what the code generates.
//! Regenerate with `cargo run -q -- openapi > openapi/v1.json`.

use scaling_facts::serve::openapi::document;

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
