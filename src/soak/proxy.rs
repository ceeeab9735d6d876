//! A TCP proxy on loopback between the service and PostgreSQL, so that the soak can take
//! the database away the way a network or a failover does: new connections refused, and
//! the ones open cut mid-query.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// The proxy; dropping it stops it.
pub struct Proxy {
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: CancellationToken,
}

struct State {
    up: bool,
    /// Cancelled to cut every connection opened since the last outage.
    generation: CancellationToken,
}

impl Proxy {
    /// Listens on a free loopback port and forwards to `target`.
    pub async fn start(target: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(State {
            up: true,
            generation: CancellationToken::new(),
        }));
        let stop = CancellationToken::new();
        let (st, halt) = (state.clone(), stop.clone());
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    a = listener.accept() => a,
                    () = halt.cancelled() => return,
                };
                let Ok((client, _)) = accepted else { continue };
                let cut = {
                    let s = st.lock().unwrap_or_else(|e| e.into_inner());
                    s.up.then(|| s.generation.clone())
                };
                // Down: the connection is closed at once, as a refused one would be.
                let Some(cut) = cut else { continue };
                tokio::spawn(forward(client, target, cut));
            }
        });
        Ok(Self { addr, state, stop })
    }

    /// Refuses new connections and cuts the open ones.
    pub fn down(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.up = false;
        s.generation.cancel();
        s.generation = CancellationToken::new();
    }

    pub fn up(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).up = true;
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.cancel();
        self.down();
    }
}

async fn forward(mut client: TcpStream, target: SocketAddr, cut: CancellationToken) {
    let Ok(mut server) = TcpStream::connect(target).await else {
        return;
    };
    tokio::select! {
        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
        () = cut.cancelled() => {}
    }
}
