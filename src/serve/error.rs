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
use scaling_facts_api::ErrorCode;

use crate::store::StoreError;
use crate::telemetry::ErrorChain;

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
    #[error("{scope} has {limit} event streams open, its limit; close one or retry later")]
    TooManyStreams { limit: usize, scope: &'static str },
    #[error("the request body did not arrive within {limit_ms} ms")]
    BodyTimeout { limit_ms: u64 },
    #[error("the desired values of {release} are stored but not applied: {message}")]
    ApplyConflict { release: String, message: String },
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
        status_of(self.code())
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            Self::UnknownRelease { .. } => ErrorCode::UnknownRelease,
            Self::NoRoute { .. } => ErrorCode::NotFound,
            Self::Unauthenticated(_) => ErrorCode::Unauthenticated,
            Self::Forbidden { .. } => ErrorCode::Forbidden,
            Self::InvalidField { .. } => ErrorCode::InvalidField,
            Self::InvalidJson(_) => ErrorCode::InvalidJson,
            Self::BodyTooLarge { .. } => ErrorCode::BodyTooLarge,
            Self::UnsupportedMediaType => ErrorCode::UnsupportedMediaType,
            Self::TooManyStreams { .. } => ErrorCode::TooManyStreams,
            Self::BodyTimeout { .. } => ErrorCode::Timeout,
            Self::ApplyConflict { .. } => ErrorCode::ApplyConflict,
            Self::StoreUnavailable(_) => ErrorCode::StoreUnavailable,
            Self::Internal(_) => ErrorCode::Internal,
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

/// The status every response with `code` has: one table, read by the handlers, the
/// envelope and the OpenAPI document alike.
pub fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::UnknownRelease | ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
        ErrorCode::ApplyConflict => StatusCode::CONFLICT,
        ErrorCode::Unauthenticated => StatusCode::UNAUTHORIZED,
        ErrorCode::Forbidden => StatusCode::FORBIDDEN,
        ErrorCode::InvalidField => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorCode::InvalidJson | ErrorCode::BadRequest => StatusCode::BAD_REQUEST,
        ErrorCode::BodyTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ErrorCode::TooManyStreams => StatusCode::TOO_MANY_REQUESTS,
        ErrorCode::Timeout | ErrorCode::StoreUnavailable => StatusCode::SERVICE_UNAVAILABLE,
        // `internal`, and codes of a newer contract, which this server never sends.
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// What a handler's error leaves for the envelope middleware.
#[derive(Debug, Clone)]
pub(crate) struct PendingError {
    pub code: ErrorCode,
    pub message: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        // The source chain is for operators only; the request id ties it to the response.
        if let Some(source) = std::error::Error::source(&self) {
            tracing::error!(error_code = %self.code(), error = %self, cause = %ErrorChain(source), "request failed");
        }
        let mut response = self.status().into_response();
        if let Self::TooManyStreams { .. } = self {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(super::streams::RETRY_AFTER_SECONDS),
            );
        }
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
        StatusCode::NOT_FOUND => (ErrorCode::NotFound, "no such route"),
        StatusCode::METHOD_NOT_ALLOWED => (
            ErrorCode::MethodNotAllowed,
            "method not allowed on this route",
        ),
        StatusCode::REQUEST_TIMEOUT | StatusCode::SERVICE_UNAVAILABLE => {
            (ErrorCode::Timeout, "the request took too long; try again")
        }
        StatusCode::PAYLOAD_TOO_LARGE => (ErrorCode::BodyTooLarge, "request body too large"),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            (ErrorCode::UnsupportedMediaType, "unsupported media type")
        }
        s if s.is_client_error() => (ErrorCode::BadRequest, "the request was not understood"),
        _ => (ErrorCode::Internal, "internal error"),
    };
    PendingError {
        code,
        message: message.to_owned(),
    }
}
