//! A typed client of the v1 API, and the caller contract built on it.
//!
//! - this module: [`Client`], one method per read and write of the API;
//! - [`caller`]: how an SDK calls a release (ADR 0041 §2-§6): readiness limit, warm-path
//!   cache, deadline header, errors that name their phase, one idempotent retry;
//! - [`prewarm`]: the guarded prewarm of dependencies (ADR 0041 §7).

pub mod caller;
pub mod prewarm;

use std::time::Duration;

use reqwest::StatusCode;
use serde::de::DeserializeOwned;

use scaling_facts_api::{BatchScalingRequest, BatchScalingResponse};
use scaling_facts_api::{ColdStarts, Runtime, Scaling};
use scaling_facts_api::{ConfigUpdate, ConfigView};
use scaling_facts_api::{ErrorBody, ErrorCode};

/// Errors of the client.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("request to the scaling-facts API failed")]
    Http(#[from] reqwest::Error),
    #[error("the API answered {status}: {} ({})", body.message, body.error_code)]
    Api { status: StatusCode, body: ErrorBody },
}

impl ClientError {
    /// The API's stable error code, when the API answered.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Self::Api { body, .. } => Some(body.error_code),
            Self::Http(_) => None,
        }
    }
}

/// A client of one scaling-facts service. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
}

impl Client {
    /// `base` like `http://127.0.0.1:8080`; `token` for `Authorization: Bearer`.
    pub fn new(base: impl Into<String>, token: Option<String>) -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .expect("a client without TLS settings builds");
        Self {
            http,
            base: base.into().trim_end_matches('/').to_owned(),
            token,
        }
    }

    fn req(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let r = self.http.request(method, format!("{}{path}", self.base));
        match &self.token {
            Some(t) => r.bearer_auth(t),
            None => r,
        }
    }

    async fn send<T: DeserializeOwned>(
        &self,
        r: reqwest::RequestBuilder,
    ) -> Result<T, ClientError> {
        let response = r.send().await?;
        let status = response.status();
        if status.is_success() {
            return Ok(response.json().await?);
        }
        let body = response
            .json::<ErrorBody>()
            .await
            .unwrap_or_else(|_| ErrorBody {
                error_code: ErrorCode::Unrecognized,
                message: format!("HTTP {status}"),
                request_id: String::new(),
            });
        Err(ClientError::Api { status, body })
    }

    pub async fn releases(&self) -> Result<scaling_facts_api::ReleaseList, ClientError> {
        self.send(self.req(reqwest::Method::GET, "/v1/releases"))
            .await
    }

    pub async fn scaling(&self, release: &str) -> Result<Scaling, ClientError> {
        self.send(self.req(
            reqwest::Method::GET,
            &format!("/v1/releases/{release}/scaling"),
        ))
        .await
    }

    /// The read that never wakes anything.
    pub async fn runtime(&self, release: &str) -> Result<Runtime, ClientError> {
        self.send(self.req(
            reqwest::Method::GET,
            &format!("/v1/releases/{release}/runtime"),
        ))
        .await
    }

    pub async fn batch_scaling(
        &self,
        releases: &[String],
    ) -> Result<BatchScalingResponse, ClientError> {
        let body = BatchScalingRequest {
            releases: releases.to_vec(),
        };
        self.send(
            self.req(reqwest::Method::POST, "/v1/scaling/batch")
                .json(&body),
        )
        .await
    }

    pub async fn cold_starts(&self, release: &str) -> Result<ColdStarts, ClientError> {
        self.send(self.req(
            reqwest::Method::GET,
            &format!("/v1/releases/{release}/cold-starts"),
        ))
        .await
    }

    pub async fn config(&self, release: &str) -> Result<ConfigView, ClientError> {
        self.send(self.req(
            reqwest::Method::GET,
            &format!("/v1/releases/{release}/config"),
        ))
        .await
    }

    pub async fn put_config(
        &self,
        release: &str,
        update: &ConfigUpdate,
    ) -> Result<ConfigView, ClientError> {
        self.send(
            self.req(
                reqwest::Method::PUT,
                &format!("/v1/releases/{release}/config"),
            )
            .json(update),
        )
        .await
    }

    /// True when `/health/ready` answers 200.
    pub async fn ready(&self) -> bool {
        matches!(
            self.req(reqwest::Method::GET, "/health/ready").send().await,
            Ok(r) if r.status() == StatusCode::OK
        )
    }
}
