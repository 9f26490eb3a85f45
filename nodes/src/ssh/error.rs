//! Everything that can go wrong talking SSH to a node, each naming the node.

use std::time::Duration;

/// An SSH failure; every variant names the node so a job log says where it happened.
#[derive(Debug, thiserror::Error)]
pub enum SshError {
    #[error(
        "node {node}: host key changed: pinned {pinned}, presented {presented}; \
         refusing to connect (the node may have been replaced, or someone is intercepting)"
    )]
    HostKeyMismatch {
        node: String,
        pinned: String,
        presented: String,
    },
    #[error("node {node}: cannot connect to {address}: {source}")]
    Connect {
        node: String,
        address: String,
        source: std::io::Error,
    },
    #[error("node {node}: SSH handshake with {address} did not finish within {timeout:?}")]
    HandshakeTimeout {
        node: String,
        address: String,
        timeout: Duration,
    },
    #[error("node {node}: public key authentication as {user:?} was refused")]
    AuthRefused { node: String, user: String },
    #[error("node {node}: SSH protocol error: {source}")]
    Protocol { node: String, source: russh::Error },
    /// Nothing ran: safe to retry on a new connection.
    #[error("node {node}: cannot open a channel (the connection may have dropped): {source}")]
    ChannelOpen { node: String, source: russh::Error },
    #[error("node {node}: the server refused to run the command")]
    ExecRefused { node: String },
    #[error(
        "node {node}: command timed out after {timeout:?}; its processes on the node were killed"
    )]
    CommandTimedOut { node: String, timeout: Duration },
    #[error(
        "node {node}: the connection or the step shell on the node closed before the command \
         reported how it ended"
    )]
    NoExitStatus { node: String },
    /// The connection is open but the node answers nothing (its sshd hangs or is
    /// stopped): no channel opened within the step's time, so nothing ran.
    #[error(
        "node {node}: the node did not answer within {timeout:?} (its connection is open, \
         but no session could be started on it); nothing ran"
    )]
    Unresponsive { node: String, timeout: Duration },
    #[error("invalid host key {text:?}: {reason}")]
    InvalidHostKey { text: String, reason: String },
    #[error("cannot load client key {path}: {reason}")]
    ClientKey { path: String, reason: String },
}

impl SshError {
    /// Whether retrying the connection later may succeed (the server is still starting,
    /// a connection was reset); a changed host key or refused key never heals by itself.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            SshError::Connect { .. }
                | SshError::HandshakeTimeout { .. }
                | SshError::Protocol { .. }
                | SshError::ChannelOpen { .. }
                | SshError::NoExitStatus { .. }
                | SshError::Unresponsive { .. }
        )
    }
}
