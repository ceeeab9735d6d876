//! The v1 API through the router (`oneshot`): authentication and scopes on every endpoint,
//! each error status with its code and the field it names, and the reads and writes.

mod common;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use scaling_facts::measure::facts::ReleaseFacts;
use scaling_facts::serve::app;
use scaling_facts_api::BatchScalingResponse;
use scaling_facts_api::ConfigView;
use scaling_facts_api::ErrorBody;
use scaling_facts_api::{Phase, Runtime, RuntimeState, Scaling, WakeProgress};
use serde_json::{Value, json};
use tower::ServiceExt;

use common::{t, test_app, token_of};
use scaling_facts::serve::AppState;

struct Reply {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: Vec<u8>,
}

impl Reply {
    fn json<T: serde::de::DeserializeOwned>(&self) -> T {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }
    fn error(&self) -> ErrorBody {
        self.json()
    }
}

async fn call(
    state: &AppState,
    method: Method,
    uri: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> Reply {
    let mut req = Request::builder().method(method).uri(uri);
    if let Some(token) = token {
        req = req.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    let body = match body {
        Some(v) => {
            req = req.header(header::CONTENT_TYPE, "application/json");
            Body::from(serde_json::to_vec(&v).unwrap())
        }
        None => Body::empty(),
    };
    raw(state, req.body(body).unwrap()).await
}

async fn raw(state: &AppState, req: Request<Body>) -> Reply {
    let response = app(state.clone()).oneshot(req).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    // Event streams never end on their own: read only what is there now.
    let body = if headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"))
    {
        let mut body = response.into_body();
        let frame = body.frame().await.unwrap().unwrap();
        frame.into_data().unwrap().to_vec()
    } else {
        response
            .into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec()
    };
    Reply {
        status,
        headers,
        body,
    }
}

fn config_body(min: u32, idle: u32) -> Value {
    json!({"min_instances": min, "idle_timeout_seconds": idle})
}

/// Every endpoint, with who may call it.
fn endpoints() -> Vec<(Method, &'static str, Option<Value>, bool)> {
    // (method, uri, body, is_write_of_shop)
    vec![
        (Method::GET, "/v1/releases", None, false),
        (Method::GET, "/v1/releases/shop.prod/scaling", None, false),
        (Method::GET, "/v1/releases/shop.prod/runtime", None, false),
        (
            Method::GET,
            "/v1/releases/shop.prod/cold-starts",
            None,
            false,
        ),
        (Method::GET, "/v1/releases/shop.prod/config", None, false),
        (Method::GET, "/v1/releases/shop.prod/events", None, false),
        (Method::GET, "/v1/events", None, false),
        (
            Method::POST,
            "/v1/scaling/batch",
            Some(json!({"releases": ["shop.prod"]})),
            false,
        ),
        (
            Method::PUT,
            "/v1/releases/shop.prod/config",
            Some(config_body(1, 120)),
            true,
        ),
    ]
}

#[tokio::test]
async fn every_endpoint_with_every_scope() {
    let app = test_app(false).await;
    for (method, uri, body, write) in endpoints() {
        let r = call(&app.state, method.clone(), uri, None, body.clone()).await;
        assert_eq!(
            r.status,
            StatusCode::UNAUTHORIZED,
            "{method} {uri} without a token"
        );
        assert_eq!(r.error().error_code, "unauthenticated");

        let r = call(
            &app.state,
            method.clone(),
            uri,
            Some("tok-nobody"),
            body.clone(),
        )
        .await;
        assert_eq!(
            r.status,
            StatusCode::UNAUTHORIZED,
            "{method} {uri} with a bad token"
        );

        for (name, expected) in [
            (
                "reader",
                if write {
                    StatusCode::FORBIDDEN
                } else {
                    StatusCode::OK
                },
            ),
            ("writer", StatusCode::OK),
            ("shop-editor", StatusCode::OK),
        ] {
            let r = call(
                &app.state,
                method.clone(),
                uri,
                Some(&token_of(name)),
                body.clone(),
            )
            .await;
            assert_eq!(
                r.status,
                expected,
                "{method} {uri} as {name}: {}",
                String::from_utf8_lossy(&r.body)
            );
            if expected == StatusCode::FORBIDDEN {
                let e = r.error();
                assert_eq!(e.error_code, "forbidden");
                assert!(e.message.contains("write:shop.prod"), "{}", e.message);
            }
        }
    }
    // The operations endpoints need no token.
    for uri in [
        "/alive",
        "/health/ready",
        "/health",
        "/metrics",
        "/openapi.json",
    ] {
        let r = call(&app.state, Method::GET, uri, None, None).await;
        assert_eq!(
            r.status,
            StatusCode::OK,
            "{uri}: {}",
            String::from_utf8_lossy(&r.body)
        );
    }
    app.db.finish().await;
}

#[tokio::test]
async fn a_release_scoped_token_cannot_write_another_release() {
    let app = test_app(false).await;
    let r = call(
        &app.state,
        Method::PUT,
        "/v1/releases/cart.prod/config",
        Some(&token_of("shop-editor")),
        Some(config_body(1, 120)),
    )
    .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    let e = r.error();
    assert_eq!(e.error_code, "forbidden");
    assert!(e.message.contains("write:cart.prod"), "{}", e.message);
    assert!(
        app.db.store.config("cart.prod").await.unwrap().is_none(),
        "nothing stored"
    );
    app.db.finish().await;
}

#[tokio::test]
async fn anonymous_reads_only_when_enabled() {
    let app = test_app(true).await;
    for (method, uri, body, write) in endpoints() {
        let r = call(&app.state, method.clone(), uri, None, body).await;
        let expected = if write {
            StatusCode::UNAUTHORIZED
        } else {
            StatusCode::OK
        };
        assert_eq!(r.status, expected, "{method} {uri}");
    }
    // A bad token is still refused, even where anonymous reads are allowed.
    let r = call(
        &app.state,
        Method::GET,
        "/v1/releases/shop.prod/scaling",
        Some("tok-x"),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    app.db.finish().await;
}

#[tokio::test]
async fn unauthenticated_messages_say_what_is_wrong() {
    let app = test_app(false).await;
    let req = Request::get("/v1/releases/shop.prod/scaling")
        .header(header::AUTHORIZATION, "Basic dXNlcjpwdw==")
        .body(Body::empty())
        .unwrap();
    let r = raw(&app.state, req).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let e = r.error();
    assert!(e.message.contains("Bearer"), "{}", e.message);
    assert_eq!(r.headers["x-request-id"].to_str().unwrap(), e.request_id);
    app.db.finish().await;
}

#[tokio::test]
async fn unknown_release_is_404_naming_it() {
    let app = test_app(false).await;
    let reader = token_of("reader");
    let writer = token_of("writer");
    for (method, uri, token, body) in [
        (Method::GET, "/v1/releases/nope.prod/scaling", &reader, None),
        (Method::GET, "/v1/releases/nope.prod/runtime", &reader, None),
        (
            Method::GET,
            "/v1/releases/nope.prod/cold-starts",
            &reader,
            None,
        ),
        (Method::GET, "/v1/releases/nope.prod/config", &reader, None),
        (Method::GET, "/v1/releases/nope.prod/events", &reader, None),
        (
            Method::PUT,
            "/v1/releases/nope.prod/config",
            &writer,
            Some(config_body(0, 60)),
        ),
    ] {
        let r = call(&app.state, method.clone(), uri, Some(token), body).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{method} {uri}");
        let e = r.error();
        assert_eq!(e.error_code, "unknown_release");
        assert!(e.message.contains("nope.prod"), "{}", e.message);
        assert!(!e.request_id.is_empty());
    }
    let r = call(&app.state, Method::GET, "/v2/whatever", None, None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.error().error_code, "not_found");
    let r = call(
        &app.state,
        Method::DELETE,
        "/v1/releases/shop.prod/config",
        Some(&writer),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(r.error().error_code, "method_not_allowed");
    app.db.finish().await;
}

#[tokio::test]
async fn invalid_config_is_422_naming_the_field_and_range() {
    let app = test_app(false).await;
    let writer = token_of("writer");
    let put = |body: Value| {
        let state = app.state.clone();
        let writer = writer.clone();
        async move {
            call(
                &state,
                Method::PUT,
                "/v1/releases/shop.prod/config",
                Some(&writer),
                Some(body),
            )
            .await
        }
    };
    for (body, field, range) in [
        (
            config_body(5_000, 120),
            "min_instances",
            "between 0 and 1000",
        ),
        (
            config_body(0, 30),
            "idle_timeout_seconds",
            "between 60 and 3660",
        ),
        (
            config_body(0, 99_999),
            "idle_timeout_seconds",
            "between 60 and 3660",
        ),
        (
            json!({"min_instances": -1, "idle_timeout_seconds": 60}),
            "min_instances",
            "-1",
        ),
        (
            json!({"min_instances": 0, "idle_timeout_seconds": 60.5}),
            "idle_timeout_seconds",
            "60.5",
        ),
        (
            json!({"min_instances": 0}),
            "idle_timeout_seconds",
            "missing",
        ),
        (
            json!({"min_instances": 0, "idle_timeout_seconds": 60, "max": 3}),
            "max",
            "unknown field",
        ),
    ] {
        let r = put(body.clone()).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let e = r.error();
        assert_eq!(e.error_code, "invalid_field");
        assert!(e.message.starts_with(field), "{body}: {}", e.message);
        assert!(e.message.contains(range), "{body}: {}", e.message);
    }
    assert!(
        app.db.store.config("shop.prod").await.unwrap().is_none(),
        "nothing stored"
    );

    // The idle window's floor follows the revision's stable window and scale-down delay.
    let mut facts = ReleaseFacts::idle("shop.prod", "prod", "shop", t(0));
    facts.idle_window_parts.stable_window_seconds = 120;
    facts.idle_window_parts.scale_down_delay_seconds = 30;
    app.state.book.upsert(facts);
    let e = put(config_body(0, 100)).await.error();
    assert!(e.message.contains("between 150 and 3750"), "{}", e.message);
    assert!(e.message.contains("stable window (120 s)"), "{}", e.message);

    let r = call(
        &app.state,
        Method::POST,
        "/v1/scaling/batch",
        Some(&writer),
        Some(json!({"releases": []})),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        r.error()
            .message
            .starts_with("releases: must hold 1 to 100")
    );
    let many: Vec<String> = (0..101).map(|i| format!("r{i}.prod")).collect();
    let r = call(
        &app.state,
        Method::POST,
        "/v1/scaling/batch",
        Some(&writer),
        Some(json!({"releases": many})),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    app.db.finish().await;
}

#[tokio::test]
async fn malformed_oversized_and_non_json_bodies() {
    let app = test_app(false).await;
    let writer = format!("Bearer {}", token_of("writer"));
    let put = |body: Body, content_type: &str| {
        Request::put("/v1/releases/shop.prod/config")
            .header(header::AUTHORIZATION, &writer)
            .header(header::CONTENT_TYPE, content_type)
            .body(body)
            .unwrap()
    };
    let r = raw(
        &app.state,
        put(Body::from("{\"min_instances\": "), "application/json"),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.error().error_code, "invalid_json");

    let big = format!(
        "{{\"min_instances\": 0, \"idle_timeout_seconds\": 60, \"pad\": \"{}\"}}",
        "x".repeat(10_000)
    );
    let r = raw(&app.state, put(Body::from(big), "application/json")).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
    let e = r.error();
    assert_eq!(e.error_code, "body_too_large");
    assert!(e.message.contains("4096 bytes"), "{}", e.message);

    let r = raw(
        &app.state,
        put(
            Body::from("min_instances=1"),
            "application/x-www-form-urlencoded",
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(r.error().error_code, "unsupported_media_type");
    app.db.finish().await;
}

#[tokio::test]
async fn config_write_is_stored_audited_and_reported() {
    let app = test_app(false).await;
    let editor = token_of("shop-editor");
    let r = call(
        &app.state,
        Method::PUT,
        "/v1/releases/shop.prod/config",
        Some(&editor),
        Some(config_body(0, 300)),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    let request_id = r.headers["x-request-id"].to_str().unwrap().to_owned();
    let r = call(
        &app.state,
        Method::PUT,
        "/v1/releases/shop.prod/config",
        Some(&token_of("writer")),
        Some(config_body(2, 120)),
    )
    .await;
    let view: ConfigView = r.json();
    let desired = view.desired.unwrap();
    assert_eq!(
        (desired.min_instances, desired.idle_timeout_seconds),
        (2, 120)
    );
    assert_eq!(desired.updated_by, "writer");
    assert!(!view.in_sync, "Knative still runs 0 / 60");
    // Applying is off here: stored and audited, never sent to the cluster.
    let apply = view.apply.as_ref().unwrap();
    assert_eq!(
        (apply.state, apply.attempts),
        (scaling_facts_api::ApplyState::NotApplied, 0)
    );
    assert!(view.applied.is_none() && !view.drift);
    assert_eq!(
        view.audit[0].apply_state,
        scaling_facts_api::ApplyState::NotApplied
    );
    assert_eq!(view.effective.min_instances, 0);
    assert_eq!(view.audit.len(), 2);
    assert_eq!(view.audit[0].actor, "writer");
    assert_eq!(
        view.audit[0].old.as_ref().unwrap().idle_timeout_seconds,
        300
    );
    assert_eq!(view.audit[1].actor, "shop-editor");
    assert_eq!(view.audit[1].request_id, request_id);
    assert!(view.audit[1].old.is_none());
    app.db.finish().await;
}

#[tokio::test]
async fn reads_return_the_facts() {
    let app = test_app(false).await;
    let reader = token_of("reader");
    let mut facts = ReleaseFacts::idle("shop.prod", "prod", "shop", t(0));
    facts.state = RuntimeState::Waking;
    facts.scaling.expected_cold_start_seconds = Some(3600.0 * 24.0);
    facts.presence.phase = Phase::Starting;
    facts.presence.desired_replicas = 1;
    facts.presence.wake = Some(WakeProgress {
        requested_at: chrono::Utc::now(),
        deadline_at: chrono::Utc::now() + chrono::Duration::seconds(630),
        elapsed_ms: 0,
    });
    app.state.book.upsert(facts);

    let r = call(
        &app.state,
        Method::GET,
        "/v1/releases/shop.prod/scaling",
        Some(&reader),
        None,
    )
    .await;
    assert_eq!(r.headers[header::CONTENT_TYPE], "application/json");
    let body: Value = r.json();
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys.len(), 4, "exactly the four ADR fields: {keys:?}");
    let scaling: Scaling = r.json();
    assert_eq!(scaling.expected_cold_start_seconds, Some(86_400.0));

    let runtime: Runtime = call(
        &app.state,
        Method::GET,
        "/v1/releases/shop.prod/runtime",
        Some(&reader),
        None,
    )
    .await
    .json();
    assert_eq!(runtime.state, RuntimeState::Waking);
    assert_eq!(runtime.runtime_presence.phase, Phase::Starting);
    assert!(runtime.retry_after_ms.unwrap() > 80_000_000);
    assert!(runtime.stale, "no watch connected");

    let batch: BatchScalingResponse = call(
        &app.state,
        Method::POST,
        "/v1/scaling/batch",
        Some(&reader),
        Some(json!({"releases": ["shop.prod", "cart.prod", "gone.prod", "shop.prod"]})),
    )
    .await
    .json();
    assert_eq!(batch.scaling.len(), 2);
    assert_eq!(batch.scaling["shop.prod"], scaling);
    assert_eq!(batch.unknown, vec!["gone.prod".to_owned()]);

    let list: Value = call(&app.state, Method::GET, "/v1/releases", Some(&reader), None)
        .await
        .json();
    assert_eq!(list["releases"][1]["release"], "shop.prod");
    assert_eq!(list["releases"][1]["state"], "waking");
    app.db.finish().await;
}

#[tokio::test]
async fn store_down_fails_writes_with_503_and_keeps_reads() {
    let app = test_app(false).await;
    app.db.store.close().await;
    let r = call(
        &app.state,
        Method::PUT,
        "/v1/releases/shop.prod/config",
        Some(&token_of("writer")),
        Some(config_body(1, 120)),
    )
    .await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    let e = r.error();
    assert_eq!(e.error_code, "store_unavailable");
    assert!(
        !e.message.to_lowercase().contains("sqlx"),
        "no internals: {}",
        e.message
    );
    let r = call(
        &app.state,
        Method::GET,
        "/v1/releases/shop.prod/scaling",
        Some(&token_of("reader")),
        None,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    let r = call(&app.state, Method::GET, "/health", None, None).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    let health: Value = r.json();
    assert_eq!(health["status"], "degraded");
    assert_eq!(health["store"]["status"], "down");
    let r = call(&app.state, Method::GET, "/health/ready", None, None).await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "the store does not gate readiness"
    );
}

#[tokio::test]
async fn event_stream_starts_with_current_state() {
    let app = test_app(false).await;
    let r = call(
        &app.state,
        Method::GET,
        "/v1/releases/shop.prod/events",
        Some(&token_of("reader")),
        None,
    )
    .await;
    let text = String::from_utf8(r.body).unwrap();
    assert!(text.starts_with("event: runtime\n"), "{text}");
    let data = text.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
    let runtime: Runtime = serde_json::from_str(data).unwrap();
    assert_eq!(runtime.release, "shop.prod");
    assert_eq!(runtime.state, RuntimeState::Idle);
    app.db.finish().await;
}

#[tokio::test]
async fn metrics_count_requests_by_route_template() {
    let app = test_app(false).await;
    call(
        &app.state,
        Method::GET,
        "/v1/releases/shop.prod/scaling",
        Some(&token_of("reader")),
        None,
    )
    .await;
    let text = String::from_utf8(
        call(&app.state, Method::GET, "/metrics", None, None)
            .await
            .body,
    )
    .unwrap();
    assert!(
        text.contains(r#"scaling_facts_http_requests_total{route="/v1/releases/{release}/scaling",method="GET",status="2xx"} 1"#),
        "{text}"
    );
    assert!(!text.contains("shop.prod"), "no release keys in labels");
    app.db.finish().await;
}

/// A batch body that has not come with the headers gets the request timeout (no route
/// that answers from memory keeps a timer otherwise); one that never comes is a 503 in the
/// error shape.
#[tokio::test]
async fn a_batch_body_that_never_arrives_times_out() {
    let app_ = test_app(true).await;
    let never = futures::stream::pending::<Result<bytes::Bytes, std::io::Error>>();
    let req = Request::builder()
        .method(Method::POST)
        .uri("/v1/scaling/batch")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from_stream(never))
        .unwrap();
    let r = raw(&app_.state, req).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    let e = r.error();
    assert_eq!(e.error_code, scaling_facts_api::ErrorCode::Timeout);
    assert!(e.message.contains("5000 ms"), "{}", e.message);
}
