//! The OpenAPI document: the handlers' annotations, collected by the one route table
//! ([`super::routes`]), plus what no single handler says (title, tags, the bearer scheme,
//! the error responses each route can give).
//!
//! The checked-in copy is `openapi/v1.json`; a test fails when it differs from what the
//! code generates, and `cargo run -- openapi > openapi/v1.json` regenerates it.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use scaling_facts_api::{ErrorBody, ErrorCode, examples};
use utoipa::openapi::example::ExampleBuilder;
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, RefOr};
use utoipa::{Modify, OpenApi};

use super::error::status_of;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "scaling-facts",
        description = "Measured Knative wake times and scaling facts per release, and a runtime read that never wakes anything.",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    components(schemas(ErrorBody, ErrorCode)),
    modifiers(&BearerAuth),
    tags(
        (name = "releases", description = "Scaling facts, runtime state and cold starts"),
        (name = "config", description = "Desired min_instances and idle window"),
        (name = "events", description = "Server-Sent Events of runtime changes"),
        (name = "operations", description = "Health, metrics, this document"),
    )
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}

/// The error responses for `codes`, one per status, each with an example per code.
pub fn error_responses(codes: &[ErrorCode]) -> BTreeMap<String, RefOr<Response>> {
    let mut by_status: BTreeMap<u16, Vec<ErrorCode>> = BTreeMap::new();
    for &code in codes {
        by_status
            .entry(status_of(code).as_u16())
            .or_default()
            .push(code);
    }
    by_status
        .into_iter()
        .map(|(status, codes)| {
            let description = codes
                .iter()
                .map(|c| format!("`{c}`: {}", c.meaning()))
                .collect::<Vec<_>>()
                .join("; ");
            let example = |c: ErrorCode| serde_json::to_value(examples::error(c)).ok();
            let content = ContentBuilder::new().schema(Some(Ref::from_schema_name("ErrorBody")));
            let content = match codes.as_slice() {
                [one] => content.example(example(*one)),
                many => content.examples_from_iter(
                    many.iter()
                        .map(|&c| (c.as_str(), ExampleBuilder::new().value(example(c)).build())),
                ),
            };
            let response = ResponseBuilder::new()
                .description(description)
                .content("application/json", content.build())
                .build();
            (status.to_string(), RefOr::T(response))
        })
        .collect()
}

/// Declares a set of error responses for a route's `responses(...)`.
macro_rules! error_set {
    ($($(#[$doc:meta])* $name:ident: [$($code:ident),+ $(,)?];)+) => {$(
        $(#[$doc])*
        pub struct $name;
        impl utoipa::IntoResponses for $name {
            fn responses() -> BTreeMap<String, RefOr<Response>> {
                error_responses(&[$(ErrorCode::$code),+])
            }
        }
    )+};
}

error_set! {
    /// A read of the whole fleet.
    FleetReadErrors: [Unauthenticated, Timeout];
    /// A read of one release.
    ReleaseReadErrors: [BadRequest, Unauthenticated, UnknownRelease, Timeout];
    /// The batch read, with its JSON body.
    BatchErrors: [InvalidJson, BadRequest, Unauthenticated, BodyTooLarge, UnsupportedMediaType, InvalidField, Timeout];
    /// The event stream of every release.
    FleetStreamErrors: [Unauthenticated, TooManyStreams, Timeout];
    /// The event stream of one release.
    ReleaseStreamErrors: [BadRequest, Unauthenticated, UnknownRelease, TooManyStreams, Timeout];
    /// A read of one release that needs the store.
    StoredReadErrors: [BadRequest, Unauthenticated, UnknownRelease, StoreUnavailable, Timeout];
    /// The config write.
    ConfigWriteErrors: [
        InvalidJson, BadRequest, Unauthenticated, Forbidden, UnknownRelease, BodyTooLarge,
        UnsupportedMediaType, InvalidField, ApplyConflict, StoreUnavailable, Timeout,
    ];
    /// An operations read, which can only time out.
    OpsErrors: [Timeout];
}

/// The document, built once.
pub static DOCUMENT: LazyLock<utoipa::openapi::OpenApi> = LazyLock::new(|| {
    let mut doc = ApiDoc::openapi();
    doc.merge(super::routes().into_openapi());
    doc
});

/// The document as checked in: pretty JSON with a final newline.
pub fn document() -> String {
    let mut text = DOCUMENT.to_pretty_json().expect("the document serializes");
    text.push('\n');
    text
}
