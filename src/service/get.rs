//! The plain HTTP/1.1 GETs the service sends itself: its own hot reads before readiness
//! opens ([`super::warm`]) and the wake of a declared dependency ([`super::deps`]). One
//! connection, kept alive for as many requests as the caller sends, over hyper's client
//! connection, since the production build carries no HTTP client of its own.

use axum::http::{HeaderName, Request, StatusCode, header};
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

/// A connection to one `host:port`.
pub struct Connection {
    sender: SendRequest<Empty<Bytes>>,
    driving: JoinHandle<Result<(), hyper::Error>>,
    authority: String,
}

impl Connection {
    pub async fn open(host: &str, port: u16) -> Result<Self, String> {
        let authority = match host.contains(':') {
            true => format!("[{host}]:{port}"),
            false => format!("{host}:{port}"),
        };
        let stream = TcpStream::connect((host, port))
            .await
            .map_err(|e| format!("connecting to {authority}: {e}"))?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("HTTP handshake with {authority}: {e}"))?;
        Ok(Self {
            sender,
            driving: tokio::spawn(connection),
            authority,
        })
    }

    /// GETs `path` (with its query) and reads the whole answer; its status.
    pub async fn get(
        &mut self,
        path: &str,
        headers: &[(HeaderName, &str)],
    ) -> Result<StatusCode, String> {
        let mut request = Request::get(path).header(header::HOST, &self.authority);
        for (name, value) in headers {
            request = request.header(name, *value);
        }
        let request = request
            .body(Empty::new())
            .map_err(|e| format!("GET {path}: {e}"))?;
        let answered = async {
            self.sender.ready().await?;
            let response = self.sender.send_request(request).await?;
            let status = response.status();
            response.into_body().collect().await?;
            Ok::<_, hyper::Error>(status)
        };
        answered
            .await
            .map_err(|e| format!("GET {} {path}: {e}", self.authority))
    }

    /// Ends the connection once the server has let it go.
    pub async fn close(self) {
        drop(self.sender);
        let _ = self.driving.await;
    }
}
