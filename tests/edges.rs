//! The lenient or leaky edges of the HTTP layer, probed as a caller would: a body that is
//! more than one JSON value, media types and the auth scheme in another case, methods
//! nobody defined.

mod common;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use scaling_facts::serve::{AppState, app};
use serde_json::Value;
use tower::ServiceExt;

use common::{test_app, token_of};

async fn send(state: &AppState, req: Request<Body>) -> (StatusCode, Vec<u8>) {
    let response = app(state.clone()).oneshot(req).await.unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, body.to_vec())
}

fn batch(content_type: &str, body: &'static str) -> Request<Body> {
    Request::post("/v1/scaling/batch")
        .header(
            header::AUTHORIZATION,
            format!("Bearer {}", token_of("reader")),
        )
        .header(header::CONTENT_TYPE, content_type)
        .body(Body::from(body))
        .unwrap()
}

fn code(body: &[u8]) -> String {
    let v: Value = serde_json::from_slice(body).unwrap();
    v["error_code"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_valid_body_followed_by_anything_is_refused() {
    let app = test_app(false).await;
    let ok = r#"{"releases":["shop.prod"]}"#;
    assert_eq!(
        send(&app.state, batch("application/json", ok)).await.0,
        StatusCode::OK
    );
    for body in [
        r#"{"releases":["shop.prod"]}garbage"#,
        r#"{"releases":["shop.prod"]}{"releases":[]}"#,
        r#"{"releases":["shop.prod"]}]"#,
    ] {
        let (status, reply) = send(&app.state, batch("application/json", body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(code(&reply), "invalid_json");
    }
    // Whitespace after the value is still one value.
    let spaced = "{\"releases\":[\"shop.prod\"]}\n  \r\n";
    assert_eq!(
        send(&app.state, batch("application/json", spaced)).await.0,
        StatusCode::OK
    );
    app.db.finish().await;
}

#[tokio::test]
async fn media_types_are_compared_without_case() {
    let app = test_app(false).await;
    let body = r#"{"releases":["shop.prod"]}"#;
    for ct in [
        "Application/JSON",
        "APPLICATION/JSON; charset=UTF-8",
        "application/merge-patch+JSON",
    ] {
        assert_eq!(
            send(&app.state, batch(ct, body)).await.0,
            StatusCode::OK,
            "{ct}"
        );
    }
    for ct in [
        "text/json",
        "text/plain",
        "application/jsonx",
        "text/x+json",
    ] {
        let (status, reply) = send(&app.state, batch(ct, body)).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{ct}");
        assert_eq!(code(&reply), "unsupported_media_type");
    }
    app.db.finish().await;
}

#[tokio::test]
async fn the_auth_scheme_is_compared_without_case() {
    let app = test_app(false).await;
    let token = token_of("reader");
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let req = Request::get("/v1/releases/shop.prod/scaling")
            .header(header::AUTHORIZATION, format!("{scheme} {token}"))
            .body(Body::empty())
            .unwrap();
        assert_eq!(send(&app.state, req).await.0, StatusCode::OK, "{scheme}");
    }
    // The token itself is compared exactly, and other schemes are refused.
    for value in [
        format!("Bearer {}", token.to_uppercase()),
        format!("Basic {token}"),
        format!("Bearer{token}"),
    ] {
        let req = Request::get("/v1/releases/shop.prod/scaling")
            .header(header::AUTHORIZATION, value.clone())
            .body(Body::empty())
            .unwrap();
        let (status, reply) = send(&app.state, req).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{value}");
        assert_eq!(code(&reply), "unauthenticated");
    }
    app.db.finish().await;
}

#[tokio::test]
async fn made_up_methods_do_not_grow_the_metrics() {
    let app = test_app(false).await;
    let metrics = || async {
        let req = Request::get("/metrics").body(Body::empty()).unwrap();
        String::from_utf8(send(&app.state, req).await.1).unwrap()
    };
    let probe = |method: &str| {
        Request::builder()
            .method(Method::from_bytes(method.as_bytes()).unwrap())
            .uri("/v1/releases")
            .body(Body::empty())
            .unwrap()
    };
    // The first made-up method and the first scrape make the series they need.
    send(&app.state, probe("FROB0")).await;
    metrics().await;
    let before = metrics().await;
    for i in 1..300 {
        let (status, _) = send(&app.state, probe(&format!("FROB{i}"))).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    }
    let after = metrics().await;
    assert!(!after.contains("FROB"), "a made-up method became a label");
    assert!(after.contains(r#"method="other""#));
    // Only the counts change, not the series: the same number of lines.
    assert_eq!(before.lines().count(), after.lines().count());
    app.db.finish().await;
}

#[tokio::test]
async fn event_streams_are_capped_per_token_and_in_all() {
    // The test state allows 6 streams in all and 3 per token.
    let app = test_app(true).await;
    let open = |token: Option<String>| {
        let state = app.state.clone();
        async move {
            let mut req = Request::get("/v1/releases/shop.prod/events");
            if let Some(t) = token {
                req = req.header(header::AUTHORIZATION, format!("Bearer {t}"));
            }
            app_response(&state, req.body(Body::empty()).unwrap()).await
        }
    };
    let mut held = Vec::new();
    for _ in 0..3 {
        let r = open(Some(token_of("reader"))).await;
        assert_eq!(r.status(), StatusCode::OK);
        held.push(r);
    }
    let refused = open(Some(token_of("reader"))).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(refused.headers()[header::RETRY_AFTER], "5");
    let body = refused.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(code(&body), "too_many_streams");
    // Another token still has room, until the service's cap.
    for _ in 0..3 {
        let r = open(Some(token_of("writer"))).await;
        assert_eq!(r.status(), StatusCode::OK);
        held.push(r);
    }
    let anonymous = open(None).await;
    assert_eq!(anonymous.status(), StatusCode::TOO_MANY_REQUESTS);
    // A closed stream gives its place back.
    drop(held.remove(0));
    assert_eq!(open(None).await.status(), StatusCode::OK);
    let req = Request::get("/metrics").body(Body::empty()).unwrap();
    let metrics = String::from_utf8(send(&app.state, req).await.1).unwrap();
    assert!(
        metrics.contains("scaling_facts_sse_streams_refused_total 2"),
        "{metrics}"
    );
    drop(held);
    app.db.finish().await;
}

async fn app_response(state: &AppState, req: Request<Body>) -> axum::response::Response {
    app(state.clone()).oneshot(req).await.unwrap()
}

#[tokio::test]
async fn health_shows_why_only_with_a_token_and_asks_the_store_at_most_every_two_seconds() {
    let app = test_app(false).await;
    let health = |token: Option<String>| {
        let state = app.state.clone();
        async move {
            let mut req = Request::get("/health");
            if let Some(t) = token {
                req = req.header(header::AUTHORIZATION, format!("Bearer {t}"));
            }
            let (status, body) = send(&state, req.body(Body::empty()).unwrap()).await;
            (status, serde_json::from_slice::<Value>(&body).unwrap())
        }
    };
    let (status, up) = health(None).await;
    assert_eq!(status, StatusCode::OK, "{up}");
    // Checked a moment ago: the next calls reuse that check, even with the store gone.
    app.db.store.close().await;
    let (status, cached) = health(None).await;
    assert_eq!(
        (status, &cached["store"]["status"]),
        (StatusCode::OK, &Value::from("up"))
    );
    tokio::time::sleep(scaling_facts::store::CHECK_TTL).await;
    let (status, anonymous) = health(None).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(anonymous["status"], "degraded");
    assert_eq!(anonymous["store"]["status"], "down");
    assert!(anonymous["store"]["error"].is_null(), "{anonymous}");
    // A bad token is no token here: probes are never refused.
    let (status, bad) = health(Some("nonsense".into())).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(bad["store"]["error"].is_null());
    let (_, detailed) = health(Some(token_of("reader"))).await;
    assert!(
        detailed["store"]["error"]
            .as_str()
            .is_some_and(|e| !e.is_empty()),
        "{detailed}"
    );
}
