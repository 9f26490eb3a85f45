//! One authenticated SSH connection to one node, and running commands over it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use russh::client::{self, Handle};
use russh::keys::{PrivateKey, PrivateKeyWithHashAlg, PublicKeyOrCertificate};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use super::step_shell::StepShell;
use super::{CommandOutcome, HostKey, OutputChunk, SshError};
use crate::sync::lock_unpoisoned;

/// The client's private key file, read when a connection is made: a command on an open
/// session reads nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientKey {
    path: PathBuf,
}

impl ClientKey {
    pub fn at(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The key file (an SSH client of our own, Ansible's, reads it from there).
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Loads the key: an unencrypted OpenSSH private key file.
    fn load(&self) -> Result<PrivateKey, SshError> {
        russh::keys::load_secret_key(&self.path, None).map_err(|error| SshError::ClientKey {
            path: self.path.display().to_string(),
            reason: error.to_string(),
        })
    }
}

/// Where and as whom to connect, and which host key to expect.
#[derive(Debug, Clone)]
pub struct SshTarget {
    /// The node's id, used in errors and as the pool key.
    pub node: String,
    pub host: String,
    pub port: u16,
    pub user: String,
    pub host_key: HostKey,
    pub client_key: ClientKey,
}

impl SshTarget {
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// How to run one command.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// After this long the command's process group on the node is killed, the channel is
    /// closed and [`SshError::CommandTimedOut`] returned.
    pub timeout: Duration,
    /// Receives output as it arrives. When the receiver is gone the output is dropped and
    /// the command still runs to its end.
    pub output: Option<mpsc::Sender<OutputChunk>>,
}

impl RunOptions {
    pub fn with_timeout(timeout: Duration) -> Self {
        Self {
            timeout,
            output: None,
        }
    }
}

/// Why a handshake stopped, before the node's name is attached.
#[derive(Debug)]
pub(super) enum HandshakeFailure {
    HostKeyMismatch { pinned: String, presented: String },
    Ssh(russh::Error),
}

impl From<russh::Error> for HandshakeFailure {
    fn from(error: russh::Error) -> Self {
        HandshakeFailure::Ssh(error)
    }
}

/// The russh client handler: accepts exactly the pinned host key and nothing else.
pub(super) struct PinnedHostKey {
    pub(super) pinned: HostKey,
}

impl client::Handler for PinnedHostKey {
    type Error = HandshakeFailure;

    async fn check_server_key(
        &mut self,
        presented: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        let PublicKeyOrCertificate::PublicKey { key, .. } = presented else {
            // Host certificates are not pinned keys; accepting one would bypass the pin.
            return Err(HandshakeFailure::HostKeyMismatch {
                pinned: self.pinned.fingerprint(),
                presented: "a host certificate".to_owned(),
            });
        };
        if self.pinned.matches(key) {
            Ok(true)
        } else {
            Err(HandshakeFailure::HostKeyMismatch {
                pinned: self.pinned.fingerprint(),
                presented: HostKey::from_public_key(key.clone()).fingerprint(),
            })
        }
    }
}

/// Connection settings shared by all sessions.
pub fn client_config() -> Arc<client::Config> {
    // curve25519 is both fast and what OpenSSH prefers after its post-quantum hybrids, which
    // cost several milliseconds of CPU per handshake on each side.
    let preferred = russh::Preferred {
        kex: std::borrow::Cow::Owned(vec![
            russh::kex::CURVE25519,
            russh::kex::CURVE25519_PRE_RFC_8731,
            russh::kex::EXTENSION_SUPPORT_AS_CLIENT,
            russh::kex::EXTENSION_OPENSSH_STRICT_KEX_AS_CLIENT,
        ]),
        ..russh::Preferred::default()
    };
    Arc::new(client::Config {
        nodelay: true,
        preferred,
        inactivity_timeout: None,
        ..client::Config::default()
    })
}

/// One authenticated connection to one node; commands run on channels opened over it.
pub struct SshSession {
    target: SshTarget,
    handle: Handle<PinnedHostKey>,
    /// A step shell waiting for the next command; one at most, so that commands run
    /// concurrently on this node hold no more than one channel open after they ended.
    /// Only ever taken out or put back whole, so a panicking holder cannot break it.
    idle_shell: Mutex<Option<StepShell>>,
}

impl std::fmt::Debug for SshSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SshSession")
            .field("node", &self.target.node)
            .field("address", &self.target.address())
            .finish()
    }
}

impl SshSession {
    /// Connects (TCP_NODELAY on), verifies the pinned host key and authenticates.
    pub async fn connect(
        target: &SshTarget,
        handshake_timeout: Duration,
    ) -> Result<Self, SshError> {
        let address = target.address();
        let connecting = Self::handshake(target, &address);
        match tokio::time::timeout(handshake_timeout, connecting).await {
            Ok(result) => result,
            Err(_) => Err(SshError::HandshakeTimeout {
                node: target.node.clone(),
                address,
                timeout: handshake_timeout,
            }),
        }
    }

    async fn handshake(target: &SshTarget, address: &str) -> Result<Self, SshError> {
        let node = || target.node.clone();
        let client_key = Arc::new(target.client_key.load()?);
        let stream = TcpStream::connect((target.host.as_str(), target.port))
            .await
            .map_err(|source| SshError::Connect {
                node: node(),
                address: address.to_owned(),
                source,
            })?;
        stream
            .set_nodelay(true)
            .map_err(|source| SshError::Connect {
                node: node(),
                address: address.to_owned(),
                source,
            })?;
        let handler = PinnedHostKey {
            pinned: target.host_key.clone(),
        };
        let mut handle = client::connect_stream(client_config(), stream, handler)
            .await
            .map_err(|failure| match failure {
                HandshakeFailure::HostKeyMismatch { pinned, presented } => {
                    SshError::HostKeyMismatch {
                        node: node(),
                        pinned,
                        presented,
                    }
                }
                HandshakeFailure::Ssh(source) => SshError::Protocol {
                    node: node(),
                    source,
                },
            })?;
        let key = PrivateKeyWithHashAlg::new(client_key, None);
        let auth = handle
            .authenticate_publickey(target.user.clone(), key)
            .await
            .map_err(|source| SshError::Protocol {
                node: node(),
                source,
            })?;
        if !auth.success() {
            return Err(SshError::AuthRefused {
                node: node(),
                user: target.user.clone(),
            });
        }
        Ok(Self {
            target: target.clone(),
            handle,
            idle_shell: Mutex::new(None),
        })
    }

    pub fn target(&self) -> &SshTarget {
        &self.target
    }

    /// Whether the connection has gone away (server stopped, network reset).
    pub fn is_closed(&self) -> bool {
        self.handle.is_closed()
    }

    /// Runs `command`, POSIX sh, in `$HOME` on the node, streaming its output to
    /// `options.output`. It runs in the session's idle step shell (see [`step_shell`]),
    /// started first when there is none, or when another command is using it (within
    /// `options.timeout`, or [`SshError::Unresponsive`]). On timeout,
    /// or when the returned future is dropped (a cancelled task), the step's whole process
    /// group on the node is killed.
    ///
    /// [`step_shell`]: super::step_shell
    pub async fn run(
        &self,
        command: &str,
        options: RunOptions,
    ) -> Result<CommandOutcome, SshError> {
        let node = &self.target.node;
        let idle = lock_unpoisoned(&self.idle_shell)
            .take()
            .and_then(|mut shell| {
                let ready = shell.is_ready();
                ready.then_some(shell)
            });
        let mut shell = match idle {
            Some(shell) => shell,
            // Bounded by the step's time: a node that stopped answering (its sshd hung or
            // stopped, the connection still open) never confirms the channel.
            None => tokio::time::timeout(options.timeout, StepShell::open(&self.handle, node))
                .await
                .map_err(|_| SshError::Unresponsive {
                    node: node.clone(),
                    timeout: options.timeout,
                })??,
        };
        // On an error `shell` is dropped here, which closes its channel.
        let outcome = shell.run(node, command, options).await?;
        let mut idle = lock_unpoisoned(&self.idle_shell);
        if idle.is_none() {
            *idle = Some(shell);
        }
        Ok(outcome)
    }

    /// Says goodbye politely; the connection is also closed when the session is dropped.
    pub async fn disconnect(&self) {
        let _ = self
            .handle
            .disconnect(russh::Disconnect::ByApplication, "", "en")
            .await;
    }
}

/// Records the host key a server presents and refuses it: the handshake stops there.
struct FirstSeenHostKey {
    seen: Arc<std::sync::Mutex<Option<HostKey>>>,
}

impl client::Handler for FirstSeenHostKey {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        presented: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        if let PublicKeyOrCertificate::PublicKey { key, .. } = presented {
            if let Ok(mut seen) = self.seen.lock() {
                *seen = Some(HostKey::from_public_key(key.clone()));
            }
        }
        Ok(false)
    }
}

/// The host key the server at `host:port` presents, read without authenticating (and
/// without trusting it: the connection is dropped at the key). Only for providers that
/// have no other way to learn a new machine's key; they record that it was trusted on
/// first use.
pub async fn first_seen_host_key(
    host: &str,
    port: u16,
    timeout: Duration,
) -> Result<HostKey, String> {
    let seen = Arc::new(std::sync::Mutex::new(None));
    let handler = FirstSeenHostKey { seen: seen.clone() };
    let connecting = async {
        let stream = TcpStream::connect((host, port))
            .await
            .map_err(|error| error.to_string())?;
        // The handshake fails once the key is refused; the key was taken first.
        let _ = client::connect_stream(client_config(), stream, handler).await;
        Ok::<(), String>(())
    };
    match tokio::time::timeout(timeout, connecting).await {
        Ok(result) => result?,
        Err(_) => return Err(format!("no SSH handshake within {}s", timeout.as_secs())),
    }
    let key = seen.lock().ok().and_then(|mut seen| seen.take());
    key.ok_or_else(|| "the server presented no plain host key".to_owned())
}
