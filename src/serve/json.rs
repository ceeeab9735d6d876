//! A JSON body extractor whose rejections are API errors naming the field at fault.

use std::task::Poll;

use axum::extract::{FromRequest, Request};
use axum::http::header;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde::de::DeserializeOwned;

use super::AppState;
use super::error::ApiError;

/// Like `axum::Json`, but a type error says which field (`idle_timeout_seconds: invalid
/// type ...`) with 422, broken JSON gets 400, an oversized body 413 (the limit named, from
/// the state), and a body that does not arrive within the request timeout 503.
pub struct ApiJson<T>(pub T);

impl<T> FromRequest<AppState> for ApiJson<T>
where
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, ApiError> {
        let json = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            // Media types are case-insensitive (RFC 9110 §8.3.1).
            .is_some_and(|mime| {
                let mime = mime.trim().as_bytes();
                let (app, json) = (b"application/".as_slice(), b"+json".as_slice());
                mime.eq_ignore_ascii_case(b"application/json")
                    || (mime.len() > app.len() + json.len()
                        && mime[..app.len()].eq_ignore_ascii_case(app)
                        && mime[mime.len() - json.len()..].eq_ignore_ascii_case(json))
            });
        if !json {
            return Err(ApiError::UnsupportedMediaType);
        }
        let (limit, timeout) = (state.max_body_bytes, state.request_timeout);
        // The limit is applied here, where it is reported, rather than by a layer that
        // would put it in every request's extensions, the hot reads' included.
        let body = Limited::new(req.into_body(), limit);
        // A small body usually came with the headers: only one that has not is given a
        // timer, so that the common case pays for none.
        let mut read = std::pin::pin!(body.collect());
        let read =
            match futures::poll!(read.as_mut()) {
                Poll::Ready(r) => r,
                Poll::Pending => tokio::time::timeout(timeout, read).await.map_err(|_| {
                    ApiError::BodyTimeout {
                        limit_ms: timeout.as_millis() as u64,
                    }
                })?,
            };
        let bytes = read
            .map_err(|e| {
                if e.is::<LengthLimitError>() {
                    ApiError::BodyTooLarge { limit_bytes: limit }
                } else {
                    ApiError::InvalidJson(format!("the body could not be read: {e}"))
                }
            })?
            .to_bytes();
        parse(&bytes).map(ApiJson)
    }
}

fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    match serde_path_to_error::deserialize::<_, T>(&mut de) {
        // A valid document followed by anything but whitespace is not one JSON value: the
        // caller sent something other than it thinks.
        Ok(v) => de
            .end()
            .map(|()| v)
            .map_err(|e| ApiError::InvalidJson(e.to_string())),
        Err(e) => {
            let path = e.path().to_string();
            let inner = e.into_inner();
            match inner.classify() {
                serde_json::error::Category::Data => {
                    let message = inner.to_string();
                    let message = strip_position(&message);
                    let field = if path == "." {
                        backticked(message).unwrap_or("body").to_owned()
                    } else {
                        path
                    };
                    Err(ApiError::invalid(field, message))
                }
                _ => Err(ApiError::InvalidJson(inner.to_string())),
            }
        }
    }
}

/// serde_json appends " at line L column C", which means nothing to a caller naming fields.
fn strip_position(message: &str) -> &str {
    message.find(" at line ").map_or(message, |i| &message[..i])
}

/// The first `name` quoted in backticks: serde names missing and unknown fields that way.
fn backticked(message: &str) -> Option<&str> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(&message[start..start + len])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Body {
        count: u32,
        name: String,
    }

    fn field_of(r: Result<Body, ApiError>) -> (String, String) {
        match r {
            Err(ApiError::InvalidField { field, message }) => (field, message),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn names_the_field() {
        let (f, m) = field_of(parse(br#"{"count": -1, "name": "x"}"#));
        assert_eq!(f, "count");
        assert!(m.contains("-1"), "{m}");
        let (f, _) = field_of(parse(br#"{"count": 1}"#));
        assert_eq!(f, "name");
        let (f, _) = field_of(parse(br#"{"count": 1, "name": "x", "extra": 2}"#));
        assert_eq!(f, "extra");
    }

    #[test]
    fn trailing_data_after_the_value_is_broken_json() {
        let ok = br#"{"count": 1, "name": "a"}  
"#;
        assert!(parse::<Body>(ok).is_ok());
        for bad in [
            &br#"{"count": 1, "name": "a"}x"#[..],
            br#"{"count": 1, "name": "a"}{}"#,
        ] {
            assert!(matches!(parse::<Body>(bad), Err(ApiError::InvalidJson(_))));
        }
    }

    #[test]
    fn broken_json_is_not_a_field_error() {
        assert!(matches!(parse::<Body>(b"{"), Err(ApiError::InvalidJson(_))));
    }
}
