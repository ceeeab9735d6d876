//! The OpenAPI document of the API, generated from the handlers' annotations.
//!
//! The checked-in copy is `openapi/v1.json`; a test fails when it differs from what the
//! code generates, and `cargo run -- openapi > openapi/v1.json` regenerates it.

use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

use super::{config, events, ops, releases};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "scaling-facts",
        description = "Measured Knative wake times and scaling facts per release, and a runtime read that never wakes anything.",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    paths(
        releases::list, releases::scaling, releases::runtime, releases::batch_scaling,
        releases::cold_starts, config::get_config, config::put_config,
        events::release_events, events::all_events,
        ops::alive, ops::ready, ops::health, ops::metrics, ops::openapi,
    ),
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

/// The document as checked in: pretty JSON with a final newline.
pub fn document() -> String {
    let mut text = ApiDoc::openapi()
        .to_pretty_json()
        .expect("the document serializes");
    text.push('\n');
    text
}
