//! A loopback TCP proxy that can be cut, to partition one client from a server: while cut,
//! connections are held open and nothing passes (as through a network that drops every
//! packet), so the client sees timeouts, not refusals.

use std::net::SocketAddr;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

pub struct Proxy {
    pub addr: SocketAddr,
    /// The partition's generation: odd while cut. Every pipe ends when it changes.
    state: watch::Sender<u64>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    pub async fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("proxy binds");
        let addr = listener.local_addr().unwrap();
        let (state, _) = watch::channel(0u64);
        let states = state.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((inbound, _)) = listener.accept().await else {
                    return;
                };
                let mut now = states.subscribe();
                tokio::spawn(async move {
                    let generation = *now.borrow_and_update();
                    if generation % 2 == 1 {
                        // Cut: hold the connection, answer nothing, until healed.
                        let _ = now.changed().await;
                        drop(inbound);
                        return;
                    }
                    let Ok(outbound) = TcpStream::connect(target).await else {
                        return;
                    };
                    let (mut ri, mut wi) = inbound.into_split();
                    let (mut ro, mut wo) = outbound.into_split();
                    let pipe = async {
                        tokio::select! {
                            _ = tokio::io::copy(&mut ri, &mut wo) => {}
                            _ = tokio::io::copy(&mut ro, &mut wi) => {}
                        }
                    };
                    tokio::select! {
                        () = pipe => {
                            let _ = wi.shutdown().await;
                        }
                        // Cut mid-connection: stop passing anything, keep the socket.
                        _ = now.changed() => {
                            let _ = now.changed().await;
                        }
                    }
                });
            }
        });
        Self { addr, state, task }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Nothing passes until [`Proxy::heal`].
    pub fn cut(&self) {
        self.state.send_modify(|g| {
            if *g % 2 == 0 {
                *g += 1;
            }
        });
    }

    pub fn heal(&self) {
        self.state.send_modify(|g| {
            if *g % 2 == 1 {
                *g += 1;
            }
        });
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}
