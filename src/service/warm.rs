//! ADR-025's self-request warm-up: before readiness opens, the service asks its own hot
//! reads over the socket it listens on, as a caller would.
//!
//! A process that has served nothing yet pays once, on its first requests, for what it
//! builds lazily: the route table's first match, each route's metric series, the token
//! check's first lookup, the book's first read, the allocator's first pages for responses,
//! the connection's first buffers. Those first requests would be the gateway's, on its
//! hot path; the self-requests take them instead. They go through the whole stack (accept
//! loop, envelope, router), which is why they are sent over the socket rather than to the
//! router in memory.
//!
//! Never fatal: an answer of any status is warmth (401 and 403 too: the route, the
//! envelope and the token check ran), and a failure is reported on `/health` with the
//! other warm-up tasks while readiness opens anyway. Skipped when the book is empty, since
//! a read of an unknown release warms the 404 path rather than the hot one.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use axum::http::HeaderName;

use super::get::Connection;
use crate::book::FactsBook;
use scaling_facts_api::REQUEST_ID_HEADER;

/// The request id the warm-up's requests carry, so that the access log tells them apart.
pub const REQUEST_ID: &str = "warm-up";

/// Where to reach a listener bound to `bound`: itself, or loopback for a wildcard.
fn reachable(bound: SocketAddr) -> SocketAddr {
    let ip = match bound.ip() {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, bound.port())
}

/// Reads `scaling` and `runtime` of a known release through the listener at `bound`, on
/// one kept-alive connection. Ok when both were answered, whatever their status.
pub async fn self_requests(bound: SocketAddr, book: Arc<FactsBook>) -> Result<(), String> {
    let Some(release) = book.any_release() else {
        tracing::info!("self-request warm-up skipped: no release known yet");
        return Ok(());
    };
    let addr = reachable(bound);
    let mut connection = Connection::open(&addr.ip().to_string(), addr.port()).await?;
    // A release key is a label value or `<name>.<namespace>`: letters, digits, `-`, `_`
    // and `.`, which a path segment holds as they are.
    let mut result = Ok(());
    for read in ["scaling", "runtime"] {
        let path = format!("/v1/releases/{release}/{read}");
        let started = std::time::Instant::now();
        let id = HeaderName::from_static(REQUEST_ID_HEADER);
        match connection.get(&path, &[(id, REQUEST_ID)]).await {
            Ok(status) => tracing::info!(
                path,
                status = status.as_u16(),
                took_us = started.elapsed().as_micros() as u64,
                "self-request answered"
            ),
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    connection.close().await;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wildcard_listener_is_reached_on_loopback() {
        let at = |s: &str| reachable(s.parse().unwrap()).to_string();
        assert_eq!(at("0.0.0.0:8080"), "127.0.0.1:8080");
        assert_eq!(at("[::]:8080"), "[::1]:8080");
        assert_eq!(at("127.0.0.1:9"), "127.0.0.1:9");
        assert_eq!(at("10.1.2.3:8080"), "10.1.2.3:8080");
    }

    #[tokio::test]
    async fn an_empty_book_is_skipped_without_a_connection() {
        // Nothing listens on the discard port: a connection would fail the task.
        let book = Arc::new(FactsBook::new(std::time::Duration::from_secs(90)));
        assert_eq!(
            self_requests("127.0.0.1:9".parse().unwrap(), book.clone()).await,
            Ok(())
        );
        book.upsert(crate::measure::facts::ReleaseFacts::idle(
            "shop.prod",
            "prod",
            "shop",
            chrono::Utc::now(),
        ));
        let err = self_requests("127.0.0.1:9".parse().unwrap(), book)
            .await
            .unwrap_err();
        assert!(err.contains("connecting to 127.0.0.1:9"), "{err}");
    }
}
