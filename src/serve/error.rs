//! The one error shape of the API: `{error_code, message, request_id}`.
//!
//! `error_code` is stable and meant for programs; `message` is for people and names the
//! field at fault; internal detail (database errors, panics) goes to the log under the same
//! request id and never to the client. Handlers return [`ApiError`]; the envelope
//! middleware in [`super::request`] adds the request id and writes the body, and gives the
//! same shape to errors that do not come from a handler (unknown route, wrong method,
//! timeout).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::store::StoreError;
use crate::telemetry::ErrorChain;

/// The body of every error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    /// Stable, machine-readable: `unknown_release`, `unauthenticated`, `forbidden`,
    /// `invalid_field`, `invalid_json`, `body_too_large`, `unsupported_media_type`,
    /// `not_found`, `method_not_allowed`, `timeout`, `store_unavailable`, `internal`.
    pub error_code: String,
    pub message: String,
    /// Also in the `x-request-id` response header; quote it when reporting a problem.
    pub request_id: String,
}

/// Errors of the HTTP layer.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("no release {release:?} is known")]
    UnknownRelease { release: String },
    #[error("no route {path}")]
    NoRoute { path: String },
    #[error("{0}")]
    Unauthenticated(&'static str),
    #[error("this token lacks the scope {needed}")]
    Forbidden { needed: String },
    #[error("{field}: {message}")]
    InvalidField { field: String, message: String },
    #[error("request body is not valid JSON: {0}")]
    InvalidJson(String),
    #[error("request body exceeds {limit_bytes} bytes")]
    BodyTooLarge { limit_bytes: usize },
    #[error("request body must be application/json")]
    UnsupportedMediaType,
    #[error("the store is unavailable; try again")]
    StoreUnavailable(#[source] StoreError),
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl ApiError {
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::InvalidField {
            field: field.into(),
            message: message.into(),
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Self::UnknownRelease { .. } | Self::NoRoute { .. } => StatusCode::NOT_FOUND,
            Self::Unauthenticated(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden { .. } => StatusCode::FORBIDDEN,
            Self::InvalidField { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            Self::InvalidJson(_) => StatusCode::BAD_REQUEST,
            Self::BodyTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::StoreUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            Self::UnknownRelease { .. } => "unknown_release",
            Self::NoRoute { .. } => "not_found",
            Self::Unauthenticated(_) => "unauthenticated",
            Self::Forbidden { .. } => "forbidden",
            Self::InvalidField { .. } => "invalid_field",
            Self::InvalidJson(_) => "invalid_json",
            Self::BodyTooLarge { .. } => "body_too_large",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::StoreUnavailable(_) => "store_unavailable",
            Self::Internal(_) => "internal",
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Query(_) | StoreError::Connect(_) => Self::StoreUnavailable(e),
            other => Self::Internal(Box::new(other)),
        }
    }
}

/// What a handler's error leaves for the envelope middleware.
#[derive(Debug, Clone)]
pub(crate) struct PendingError {
    pub code: &'static str,
    pub message: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        // The source chain is for operators only; the request id ties it to the response.
        if let Some(source) = std::error::Error::source(&self) {
            tracing::error!(error_code = self.code(), error = %self, cause = %ErrorChain(source), "request failed");
        }
        let mut response = self.status().into_response();
        response.extensions_mut().insert(PendingError {
            code: self.code(),
            message: self.to_string(),
        });
        response
    }
}

/// The error code and message for an error response that no handler described.
pub(crate) fn for_status(status: StatusCode) -> PendingError {
    let (code, message) = match status {
        StatusCode::NOT_FOUND => ("not_found", "no such route"),
        StatusCode::METHOD_NOT_ALLOWED => {
            ("method_not_allowed", "method not allowed on this route")
        }
        StatusCode::REQUEST_TIMEOUT | StatusCode::SERVICE_UNAVAILABLE => {
            ("timeout", "the request took too long; try again")
        }
        StatusCode::PAYLOAD_TOO_LARGE => ("body_too_large", "request body too large"),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ("unsupported_media_type", "unsupported media type"),
        s if s.is_client_error() => ("bad_request", "the request was not understood"),
        _ => ("internal", "internal error"),
    };
    PendingError {
        code,
        message: message.to_owned(),
    }
}
