//! A typed client of the scaling-facts v1 API, and the caller contract built on it.
//!
//! - [`Client`] (feature `http`, on by default): one method per read and write of the API,
//!   over reqwest with rustls (the platform's own CAs are read from the system store, or
//!   pass a configured `reqwest::Client` to [`Client::with_http`]);
//! - [`caller`]: how an SDK calls a release (ADR 0041 §2-§6): readiness limit, warm-path
//!   cache, deadline header, errors that name their phase, one idempotent retry;
//! - [`prewarm`]: the guarded prewarm of dependencies (ADR 0041 §7).
//!
//! The JSON types are the wire contract's, re-exported as [`api`]; this crate adds no type
//! of its own to the contract, and depends on no part of the service. Without the `http`
//! feature it is the caller contract and the prewarm guard alone, over a transport of the
//! user's (the service wakes declared dependencies with it).
//!
//! ```
//! use scaling_facts_client::Client;
//! # use tokio::io::{AsyncReadExt, AsyncWriteExt};
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), scaling_facts_client::ClientError> {
//! # // A stand-in for the service, answering one request the way it would.
//! # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
//! # let base = format!("http://{}", listener.local_addr().unwrap());
//! # tokio::spawn(async move {
//! #     let (mut socket, _) = listener.accept().await.unwrap();
//! #     let mut request = [0u8; 4096];
//! #     let n = socket.read(&mut request).await.unwrap();
//! #     let head = String::from_utf8_lossy(&request[..n]);
//! #     assert!(head.starts_with("GET /v1/releases/shop.prod/scaling "), "{head}");
//! #     let body = r#"{"min_instances":0,"idle_timeout_seconds":90.0,"expected_cold_start_seconds":2.4,"serving_since":null}"#;
//! #     let reply = format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len());
//! #     socket.write_all(reply.as_bytes()).await.unwrap();
//! # });
//! // `base` is the service's address, e.g. "https://scaling-facts.platform.svc:8080".
//! let client = Client::new(base, Some("sf_read_token".to_owned()));
//! let scaling = client.scaling("shop.prod").await?;
//! // A caller at zero waits for the measured cold start, with room to spare.
//! let wait = scaling.expected_cold_start_seconds.unwrap_or(30.0) * 2.0;
//! assert_eq!(scaling.min_instances, 0);
//! assert!(wait > 4.0);
//! # Ok(())
//! # }
//! ```

pub mod caller;
#[cfg(feature = "http")]
mod http;
pub mod prewarm;

#[cfg(feature = "http")]
pub use http::{Client, ClientError, DEFAULT_TIMEOUT};
pub use scaling_facts_api as api;
