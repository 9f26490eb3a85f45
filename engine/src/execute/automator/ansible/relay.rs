//! The confined controller's one way out: a Unix socket in the run's work dir that
//! Corral connects to the step's node, and nowhere else.
//!
//! The sandbox has no network of its own, so ssh reaches the node through its
//! `ProxyCommand` (`node_proxy.py`), which connects to this socket and hands the
//! connection to ssh (`ProxyUseFdpass`): ssh then talks to this relay directly, with no
//! process copying its bytes inside the sandbox (such a hop cost about 0.1 s a step).
//! Each connection to the socket is one TCP connection from this process to the node's
//! SSH address; the node's host key is still checked by ssh inside, against the pinned
//! one. The relay stops when the step ends (dropping [`Relay`]).

use std::path::{Path, PathBuf};

use tokio::net::{TcpStream, UnixListener};
use tokio::task::JoinHandle;

/// The socket's name in the work dir.
pub(super) const SOCKET: &str = "node.sock";

/// The ssh `ProxyCommand`'s script's name in the work dir.
pub(super) const PROXY_SCRIPT: &str = "node_proxy.py";

/// The script itself: Python is there wherever Ansible is.
pub(super) const PROXY_SCRIPT_TEXT: &str = include_str!("node_proxy.py");

/// Accepts the controller's connections while alive.
pub(super) struct Relay {
    accept: JoinHandle<()>,
}

impl Relay {
    /// Listens on `dir`/[`SOCKET`] and joins each connection to `node` (host, port).
    pub(super) fn start(dir: &Path, node: (String, u16)) -> std::io::Result<(Self, PathBuf)> {
        let path = dir.join(SOCKET);
        let listener = UnixListener::bind(&path)?;
        let accept = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((mut controller, _)) = listener.accept().await {
                let node = node.clone();
                connections.spawn(async move {
                    // A node that cannot be reached closes the controller's side; ssh
                    // then says the connection was closed, and Ansible names the host.
                    if let Ok(mut remote) = TcpStream::connect((node.0.as_str(), node.1)).await {
                        // As ssh sets on a socket of its own: SSH writes small packets
                        // back to back, and Nagle would hold each second one until the
                        // node acknowledged the first (a delayed ACK: up to 40 ms).
                        let _ = remote.set_nodelay(true);
                        let _ = tokio::io::copy_bidirectional(&mut controller, &mut remote).await;
                    }
                });
                // Finished connections are reaped as new ones come.
                while connections.try_join_next().is_some() {}
            }
        });
        Ok((Self { accept }, path))
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        // Aborting the accept loop drops its JoinSet, which aborts every open connection.
        self.accept.abort();
    }
}
