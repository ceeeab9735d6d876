//! The one error body of the API, `{error_code, message, request_id}`, and its codes.
//!
//! `error_code` is for programs and stable within v1; `message` is for people and names the
//! field at fault; `request_id` ties the answer to the service's log, where any internal
//! detail goes instead of the body.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

/// The body of every error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    pub error_code: ErrorCode,
    pub message: String,
    /// Also in the `x-request-id` response header; quote it when reporting a problem.
    pub request_id: String,
}

/// A stable, machine-readable error code.
///
/// New codes may be added within v1: a client built before them reads them as
/// [`ErrorCode::Unrecognized`], which the server itself never sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// 404: no release has this key.
    UnknownRelease,
    /// 404: no such route.
    NotFound,
    /// 405: the route exists, the method does not.
    MethodNotAllowed,
    /// 401: no token, or not one the service knows.
    Unauthenticated,
    /// 403: the token lacks the scope the route needs.
    Forbidden,
    /// 422: a field's value is out of range; the message names the field.
    InvalidField,
    /// 400: the body is not JSON of the expected shape; the message says where.
    InvalidJson,
    /// 400: any other request the service cannot read (a bad header, a malformed path).
    BadRequest,
    /// 409: the desired values were stored, but applying them to the Knative Service
    /// would change an annotation another field manager set; nothing was overwritten. The
    /// message names the manager and the field.
    ApplyConflict,
    /// 413: the body exceeds the configured limit.
    BodyTooLarge,
    /// 415: a JSON body without `Content-Type: application/json`.
    UnsupportedMediaType,
    /// 429: too many event streams open, for the service or for this token; retry after
    /// the `Retry-After` header's seconds.
    TooManyStreams,
    /// 503: the request did not finish within the configured time; retry.
    Timeout,
    /// 503: the store did not answer; nothing was changed; retry.
    StoreUnavailable,
    /// 500: a fault of the service; the log has the detail under the request id.
    Internal,
    /// A code this version of the contract does not know (sent by a newer server).
    #[serde(other)]
    Unrecognized,
}

impl ErrorCode {
    /// Every code the server sends, in the order the documentation lists them.
    pub const ALL: [ErrorCode; 15] = [
        Self::UnknownRelease,
        Self::NotFound,
        Self::MethodNotAllowed,
        Self::Unauthenticated,
        Self::Forbidden,
        Self::InvalidField,
        Self::InvalidJson,
        Self::BadRequest,
        Self::ApplyConflict,
        Self::BodyTooLarge,
        Self::UnsupportedMediaType,
        Self::TooManyStreams,
        Self::Timeout,
        Self::StoreUnavailable,
        Self::Internal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::UnknownRelease => "unknown_release",
            Self::NotFound => "not_found",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::Unauthenticated => "unauthenticated",
            Self::Forbidden => "forbidden",
            Self::InvalidField => "invalid_field",
            Self::InvalidJson => "invalid_json",
            Self::BadRequest => "bad_request",
            Self::ApplyConflict => "apply_conflict",
            Self::BodyTooLarge => "body_too_large",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::TooManyStreams => "too_many_streams",
            Self::Timeout => "timeout",
            Self::StoreUnavailable => "store_unavailable",
            Self::Internal => "internal",
            Self::Unrecognized => "unrecognized",
        }
    }
}

impl ErrorCode {
    /// What the code means, in a few words: the OpenAPI document's response descriptions.
    pub fn meaning(self) -> &'static str {
        match self {
            Self::UnknownRelease => "no release has this key",
            Self::NotFound => "no such route",
            Self::MethodNotAllowed => "wrong method for the route",
            Self::Unauthenticated => "no token, or an invalid one",
            Self::Forbidden => "the token lacks `write` or `write:<release>`",
            Self::InvalidField => "a field is out of range; the message names it",
            Self::InvalidJson => "the body is not JSON of the expected shape",
            Self::BadRequest => {
                "the request cannot be read (for example a path segment that is not UTF-8)"
            }
            Self::ApplyConflict => {
                "stored, but another field manager set the Service's annotation; nothing was overwritten"
            }
            Self::BodyTooLarge => "the body exceeds the configured limit",
            Self::UnsupportedMediaType => "the body is not sent as `application/json`",
            Self::TooManyStreams => {
                "too many event streams open for the service or this token; retry after `Retry-After` seconds"
            }
            Self::Timeout => "no answer within the request timeout; retry",
            Self::StoreUnavailable => "the store did not answer; nothing was changed; retry",
            Self::Internal | Self::Unrecognized => "a fault of the service",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Lets callers and tests compare a code with its wire text.
impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

// Written by hand so that the document lists exactly the codes the server sends, without
// the client-side `Unrecognized`.
impl PartialSchema for ErrorCode {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(
                "Stable, machine-readable; new codes may be added within v1.",
            ))
            .enum_values(Some(Self::ALL.iter().map(|c| c.as_str())))
            .into()
    }
}

impl ToSchema for ErrorCode {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("ErrorCode")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_text_is_the_serde_name() {
        for code in ErrorCode::ALL {
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, code.as_str());
            assert_eq!(serde_json::from_value::<ErrorCode>(json).unwrap(), code);
        }
    }

    #[test]
    fn a_code_from_a_newer_server_is_still_read() {
        let body: ErrorBody = serde_json::from_str(
            r#"{"error_code":"quota_exceeded","message":"m","request_id":"r"}"#,
        )
        .unwrap();
        assert_eq!(body.error_code, ErrorCode::Unrecognized);
        assert!(!ErrorCode::ALL.contains(&ErrorCode::Unrecognized));
    }
}
