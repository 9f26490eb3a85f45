//! An interactive shell on a node's PTY, with the server as the SSH client: what the
//! browser's terminal talks to (the server relays its keystrokes and output over a
//! WebSocket, see `server/src/api/node_terminal.rs`).
//!
//! The connection checks the node's pinned host key as every step's does, and signs in
//! as the node user with a short-lived certificate from the tenant's SSH user CA (the
//! caller makes the key and the certificate), so the node's sshd logs whose session it
//! is and nothing is installed on the node. The shell is the node user's own login
//! shell on a PTY of the size the browser asked; [`TerminalInput::resize`] passes window
//! size changes on.

use std::sync::Arc;
use std::time::Duration;

use russh::client::{self, Handle, Msg};
use russh::keys::ssh_key::Certificate;
use russh::keys::PrivateKey;
use russh::{ChannelMsg, ChannelReadHalf, ChannelWriteHalf};
use tokio::net::TcpStream;

use super::session::{client_config, HandshakeFailure, PinnedHostKey};
use super::{HostKey, SshError};

/// Columns and rows of a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TerminalSize {
    pub columns: u32,
    pub rows: u32,
}

impl TerminalSize {
    /// The most of either a terminal may ask for; larger asks are clamped (a PTY that
    /// size is of no use and costs the node memory).
    pub const MAX: u32 = 1000;

    /// `columns` × `rows`, each clamped to 1..=[`Self::MAX`].
    pub fn clamped(columns: u32, rows: u32) -> Self {
        Self {
            columns: columns.clamp(1, Self::MAX),
            rows: rows.clamp(1, Self::MAX),
        }
    }
}

impl Default for TerminalSize {
    fn default() -> Self {
        Self {
            columns: 80,
            rows: 24,
        }
    }
}

/// Where the shell runs and how to sign in there.
pub struct TerminalLogin<'a> {
    /// Names the node in errors (`shop/1000`).
    pub node: &'a str,
    pub host: &'a str,
    pub port: u16,
    pub user: &'a str,
    pub host_key: &'a HostKey,
    pub key: PrivateKey,
    pub certificate: Certificate,
}

/// What the node's side of a terminal says.
#[derive(Debug)]
pub enum TerminalEvent {
    /// Bytes the PTY wrote (standard output and error are one stream on a PTY).
    Output(Vec<u8>),
    /// The shell exited with this status (the channel closes next).
    Exited(u32),
}

/// The keyboard and window side of an open terminal; dropping it ends the session.
pub struct TerminalInput {
    node: String,
    writer: ChannelWriteHalf<Msg>,
    handle: Handle<PinnedHostKey>,
}

/// The screen side of an open terminal.
pub struct TerminalOutput {
    reader: ChannelReadHalf,
}

/// Connects, checks the pinned host key, signs in with the certificate and starts a
/// login shell on a PTY of `size`; all within `timeout`.
pub async fn open_terminal(
    login: TerminalLogin<'_>,
    size: TerminalSize,
    timeout: Duration,
) -> Result<(TerminalInput, TerminalOutput), SshError> {
    let node = login.node.to_owned();
    let address = format!("{}:{}", login.host, login.port);
    match tokio::time::timeout(timeout, open(login, size, &address)).await {
        Ok(result) => result,
        Err(_) => Err(SshError::HandshakeTimeout {
            node,
            address,
            timeout,
        }),
    }
}

async fn open(
    login: TerminalLogin<'_>,
    size: TerminalSize,
    address: &str,
) -> Result<(TerminalInput, TerminalOutput), SshError> {
    let node = || login.node.to_owned();
    let protocol = |source| SshError::Protocol {
        node: node(),
        source,
    };
    let connect_error = |source| SshError::Connect {
        node: node(),
        address: address.to_owned(),
        source,
    };
    let stream = TcpStream::connect((login.host, login.port))
        .await
        .map_err(connect_error)?;
    // Keystrokes go one by one: no waiting to fill a packet.
    stream.set_nodelay(true).map_err(connect_error)?;
    let handler = PinnedHostKey {
        pinned: login.host_key.clone(),
    };
    let mut handle = client::connect_stream(client_config(), stream, handler)
        .await
        .map_err(|failure| match failure {
            HandshakeFailure::HostKeyMismatch { pinned, presented } => SshError::HostKeyMismatch {
                node: node(),
                pinned,
                presented,
            },
            HandshakeFailure::Ssh(source) => protocol(source),
        })?;
    let auth = handle
        .authenticate_openssh_cert(login.user, Arc::new(login.key), login.certificate)
        .await
        .map_err(protocol)?;
    if !auth.success() {
        return Err(SshError::AuthRefused {
            node: node(),
            user: login.user.to_owned(),
        });
    }
    let channel = handle
        .channel_open_session()
        .await
        .map_err(|source| SshError::ChannelOpen {
            node: node(),
            source,
        })?;
    let (mut reader, writer) = channel.split();
    writer
        .request_pty(false, "xterm-256color", size.columns, size.rows, 0, 0, &[])
        .await
        .map_err(protocol)?;
    writer.request_shell(true).await.map_err(protocol)?;
    // The shell's answer: anything else before it (the PTY's, which was not asked for
    // a reply) is passed over.
    loop {
        match reader.wait().await {
            Some(ChannelMsg::Success) => break,
            Some(ChannelMsg::Failure) | None => {
                return Err(SshError::ExecRefused { node: node() });
            }
            Some(_) => {}
        }
    }
    Ok((
        TerminalInput {
            node: node(),
            writer,
            handle,
        },
        TerminalOutput { reader },
    ))
}

impl TerminalInput {
    /// Types `bytes` into the terminal.
    pub async fn send(&self, bytes: &[u8]) -> Result<(), SshError> {
        self.writer
            .data(bytes)
            .await
            .map_err(|source| self.protocol(source))
    }

    /// Tells the PTY its window is now `size` (the shell gets SIGWINCH).
    pub async fn resize(&self, size: TerminalSize) -> Result<(), SshError> {
        self.writer
            .window_change(size.columns, size.rows, 0, 0)
            .await
            .map_err(|source| self.protocol(source))
    }

    /// Ends the session politely (dropping it closes the connection too).
    pub async fn close(self) {
        let _ = self.writer.eof().await;
        let _ = self
            .handle
            .disconnect(russh::Disconnect::ByApplication, "", "en")
            .await;
    }

    fn protocol(&self, source: russh::Error) -> SshError {
        SshError::Protocol {
            node: self.node.clone(),
            source,
        }
    }
}

impl TerminalOutput {
    /// The next thing the node's side says; `None` once the channel is closed.
    pub async fn next(&mut self) -> Option<TerminalEvent> {
        loop {
            match self.reader.wait().await? {
                ChannelMsg::Data { data } => return Some(TerminalEvent::Output(data.to_vec())),
                ChannelMsg::ExtendedData { data, .. } => {
                    return Some(TerminalEvent::Output(data.to_vec()));
                }
                ChannelMsg::ExitStatus { exit_status } => {
                    return Some(TerminalEvent::Exited(exit_status));
                }
                // As OpenSSH's ssh does: a shell killed by a signal is a failure.
                ChannelMsg::ExitSignal { .. } => return Some(TerminalEvent::Exited(255)),
                _ => {}
            }
        }
    }
}
