//! [`Client`]: the v1 API over reqwest (feature `http`).

use std::time::Duration;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;

use scaling_facts_api::{
    BatchScalingRequest, BatchScalingResponse, ColdStarts, ConfigUpdate, ConfigView, ErrorBody,
    ErrorCode, ReleaseList, Runtime, Scaling,
};

/// How long a request may take before the client gives up, unless the caller built its own
/// `reqwest::Client`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Everything but RFC 3986's unreserved characters is escaped in a path segment, so a
/// release key holding `/`, `?`, `#` or `%` still names one release.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

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
            .timeout(DEFAULT_TIMEOUT)
            .build()
            .expect("the default TLS settings build");
        Self::with_http(http, base, token)
    }

    /// With a `reqwest::Client` the caller configured (its own CA, proxy or timeouts).
    pub fn with_http(
        http: reqwest::Client,
        base: impl Into<String>,
        token: Option<String>,
    ) -> Self {
        Self {
            http,
            base: base.into().trim_end_matches('/').to_owned(),
            token,
        }
    }

    fn req(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        let r = self.http.request(method, format!("{}{path}", self.base));
        match &self.token {
            Some(t) => r.bearer_auth(t),
            None => r,
        }
    }

    /// `/v1/releases/{release}/{what}`, the key escaped as one path segment.
    fn release_path(release: &str, what: &str) -> String {
        format!(
            "/v1/releases/{}/{what}",
            utf8_percent_encode(release, SEGMENT)
        )
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
        // A proxy in between may answer with its own body; the status still says enough.
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

    /// Every known release with its state.
    pub async fn releases(&self) -> Result<ReleaseList, ClientError> {
        self.send(self.req(Method::GET, "/v1/releases")).await
    }

    /// The four scaling facts of a release.
    pub async fn scaling(&self, release: &str) -> Result<Scaling, ClientError> {
        let path = Self::release_path(release, "scaling");
        self.send(self.req(Method::GET, &path)).await
    }

    /// The read that never wakes anything.
    pub async fn runtime(&self, release: &str) -> Result<Runtime, ClientError> {
        let path = Self::release_path(release, "runtime");
        self.send(self.req(Method::GET, &path)).await
    }

    /// The scaling facts of many releases in one call.
    pub async fn batch_scaling(
        &self,
        releases: &[String],
    ) -> Result<BatchScalingResponse, ClientError> {
        let body = BatchScalingRequest {
            releases: releases.to_vec(),
        };
        self.send(self.req(Method::POST, "/v1/scaling/batch").json(&body))
            .await
    }

    /// The cold-start report of a release, per revision.
    pub async fn cold_starts(&self, release: &str) -> Result<ColdStarts, ClientError> {
        let path = Self::release_path(release, "cold-starts");
        self.send(self.req(Method::GET, &path)).await
    }

    /// Desired, applied and effective configuration, drift, and the audit trail.
    pub async fn config(&self, release: &str) -> Result<ConfigView, ClientError> {
        let path = Self::release_path(release, "config");
        self.send(self.req(Method::GET, &path)).await
    }

    /// Sets the desired `min_instances` and idle window (a write-scoped token).
    pub async fn put_config(
        &self,
        release: &str,
        update: &ConfigUpdate,
    ) -> Result<ConfigView, ClientError> {
        let path = Self::release_path(release, "config");
        self.send(self.req(Method::PUT, &path).json(update)).await
    }

    /// True when `/health/ready` answers 200.
    pub async fn ready(&self) -> bool {
        matches!(
            self.req(Method::GET, "/health/ready").send().await,
            Ok(r) if r.status() == StatusCode::OK
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_key_is_one_path_segment() {
        assert_eq!(
            Client::release_path("shop.prod", "scaling"),
            "/v1/releases/shop.prod/scaling"
        );
        assert_eq!(
            Client::release_path("a/b?c#d%e f", "runtime"),
            "/v1/releases/a%2Fb%3Fc%23d%25e%20f/runtime"
        );
        assert_eq!(
            Client::release_path("ünï", "config"),
            "/v1/releases/%C3%BCn%C3%AF/config"
        );
    }
}
