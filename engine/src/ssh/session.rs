//! One authenticated SSH connection to one node, and running commands over it.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use russh::client::{self, Handle, Msg};
use russh::keys::{PrivateKey, PrivateKeyWithHashAlg, PublicKeyOrCertificate};
use russh::{ChannelMsg, ChannelWriteHalf, Sig};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use super::{CommandOutcome, ExitStatus, HostKey, OutputChunk, OutputStream, SshError};

/// The client's private key, loaded once and shared by every connection that uses it.
#[derive(Clone)]
pub struct ClientKey(Arc<PrivateKey>);

impl ClientKey {
    /// Loads an unencrypted OpenSSH private key file.
    pub fn load(path: &Path) -> Result<Self, SshError> {
        russh::keys::load_secret_key(path, None)
            .map(|key| Self(Arc::new(key)))
            .map_err(|error| SshError::ClientKey {
                path: path.display().to_string(),
                reason: error.to_string(),
            })
    }
}

impl std::fmt::Debug for ClientKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let fingerprint = self.0.public_key().fingerprint(Default::default());
        write!(f, "ClientKey({fingerprint})")
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
enum HandshakeFailure {
    HostKeyMismatch { pinned: String, presented: String },
    Ssh(russh::Error),
}

impl From<russh::Error> for HandshakeFailure {
    fn from(error: russh::Error) -> Self {
        HandshakeFailure::Ssh(error)
    }
}

/// The russh client handler: accepts exactly the pinned host key and nothing else.
struct PinnedHostKey {
    pinned: HostKey,
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
pub(crate) fn client_config() -> Arc<client::Config> {
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
        let key = PrivateKeyWithHashAlg::new(target.client_key.0.clone(), None);
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
        })
    }

    pub fn target(&self) -> &SshTarget {
        &self.target
    }

    /// Whether the connection has gone away (server stopped, network reset).
    pub fn is_closed(&self) -> bool {
        self.handle.is_closed()
    }

    /// Runs `command`, POSIX sh, with the node's login shell in `$HOME` on a new channel
    /// (see [`STEP_RUNNER`]), streaming its output to
    /// `options.output`. On timeout, or when the returned future is dropped (a cancelled
    /// task), the step's whole process group on the node is killed.
    pub async fn run(
        &self,
        command: &str,
        options: RunOptions,
    ) -> Result<CommandOutcome, SshError> {
        let node = || self.target.node.clone();
        let protocol = |source| SshError::Protocol {
            node: node(),
            source,
        };
        let channel =
            self.handle
                .channel_open_session()
                .await
                .map_err(|source| SshError::ChannelOpen {
                    node: node(),
                    source,
                })?;
        let (mut reader, writer) = channel.split();
        let mut running = KillOnDrop(Some(writer));
        if let Some(writer) = &running.0 {
            writer
                .exec(true, step_command(command))
                .await
                .map_err(protocol)?;
        }
        let deadline = tokio::time::sleep(options.timeout);
        tokio::pin!(deadline);
        let mut exit = None;
        let mut output = options.output;
        loop {
            tokio::select! {
                message = reader.wait() => match message {
                    Some(ChannelMsg::Data { data }) => {
                        forward(&mut output, OutputStream::Stdout, &data).await;
                    }
                    Some(ChannelMsg::ExtendedData { data, ext: 1 }) => {
                        forward(&mut output, OutputStream::Stderr, &data).await;
                    }
                    Some(ChannelMsg::ExitStatus { exit_status }) => {
                        exit = Some(ExitStatus::Code(exit_status));
                    }
                    Some(ChannelMsg::ExitSignal { signal_name, .. }) => {
                        exit = Some(ExitStatus::Signal(signal_name_of(&signal_name)));
                    }
                    Some(ChannelMsg::Failure) => {
                        return Err(SshError::ExecRefused { node: node() });
                    }
                    Some(ChannelMsg::Close) | None => break,
                    Some(_) => {}
                },
                () = &mut deadline => {
                    if let Some(writer) = running.0.take() {
                        stop(&writer).await;
                    }
                    return Err(SshError::CommandTimedOut { node: node(), timeout: options.timeout });
                }
            }
        }
        running.0 = None;
        match exit {
            Some(exit) => Ok(CommandOutcome { exit }),
            None => Err(SshError::NoExitStatus { node: node() }),
        }
    }

    /// Says goodbye politely; the connection is also closed when the session is dropped.
    pub async fn disconnect(&self) {
        let _ = self
            .handle
            .disconnect(russh::Disconnect::ByApplication, "", "en")
            .await;
    }
}

/// The step runner, run by the node's login shell (sshd has made it a process group
/// leader), so it must be POSIX sh: Corral needs a Bourne-family login shell on its nodes,
/// as Ansible does. It starts a lifeline reading its own stdin, the SSH channel, and runs
/// the command with stdin /dev/null. When the client sends EOF or closes the channel (a
/// timeout, a cancelled task) or the connection drops (the engine died) while the step
/// still runs, the lifeline kills the whole process group. When the step ends by itself,
/// sshd reaps it before it closes the channel, so the lifeline finds it gone and leaves
/// the group alone: services the step started in the background live on until the node
/// is deleted. OpenSSH's `signal` request would be simpler but sshd refuses it for root
/// sessions and forced commands.
///
/// Every process a step starts on the node costs about a millisecond of the node's CPU,
/// as much as a short command itself, so the runner starts only the lifeline: the
/// command is part of its own text (not handed to another shell), and no exit trap is
/// set, which lets the shell exec the command's last program instead of forking it.
/// The lifeline is disowned where the shell can, so a `wait` in the command does not
/// wait for it.
const STEP_RUNNER: &str = r#"exec 3<&0 0</dev/null
(while read -r _; do :; done; kill -0 "$$" 2>/dev/null && kill -KILL 0) <&3 >/dev/null 2>&1 &
exec 3<&-
disown 2>/dev/null
cd "$HOME" 2>/dev/null
"#;

fn step_command(command: &str) -> String {
    format!("{STEP_RUNNER}{command}")
}

/// Ends the step: asks sshd to kill its process group where sshd allows it, and cuts the
/// runner's lifeline (EOF, close) where it does not. Best effort: the connection may
/// already be gone, and the caller's error is the timeout or the cancellation.
async fn stop(writer: &ChannelWriteHalf<Msg>) {
    let _ = writer.signal(Sig::KILL).await;
    let _ = writer.eof().await;
    let _ = writer.close().await;
}

/// Stops the remote step if the run is abandoned before it finished (timeout or a dropped
/// future); disarmed by taking the writer out.
struct KillOnDrop(Option<ChannelWriteHalf<Msg>>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(writer) = self.0.take() {
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move { stop(&writer).await });
            }
        }
    }
}

async fn forward(
    output: &mut Option<mpsc::Sender<OutputChunk>>,
    stream: OutputStream,
    data: &[u8],
) {
    if let Some(sender) = output {
        let chunk = OutputChunk {
            stream,
            bytes: data.to_vec(),
        };
        if sender.send(chunk).await.is_err() {
            *output = None;
        }
    }
}

fn signal_name_of(signal: &Sig) -> String {
    match signal {
        Sig::Custom(name) => name.clone(),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    use super::*;

    #[test]
    fn the_step_runner_runs_commands_verbatim_with_their_exit_code() {
        let tricky = r#"printf '%s|' "$PWD" 'x'"'"'y' $((1+1)); exit 3"#;
        // Whichever Bourne-family shell the node logs in with.
        for shell in ["/bin/sh", "/bin/bash"] {
            let home = std::env::temp_dir();
            let mut child = Command::new(shell)
                // As sshd would: the runner leads its own process group, which it may kill.
                .process_group(0)
                .env("HOME", &home)
                .args(["-c", &step_command(tricky)])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            // The open stdin stands for the SSH channel; the runner must not need it closed.
            let lifeline = child.stdin.take();
            let mut stdout = String::new();
            child
                .stdout
                .take()
                .unwrap()
                .read_to_string(&mut stdout)
                .unwrap();
            let status = child.wait().unwrap();
            drop(lifeline);
            assert_eq!(stdout, format!("{}|x'y|2|", home.display()), "{shell}");
            assert_eq!(status.code(), Some(3), "{shell}");
        }
    }

    #[test]
    fn closing_the_runners_stdin_kills_the_step() {
        let mut child = Command::new("/bin/sh")
            // As sshd would: the runner leads its own process group, which it may kill.
            .process_group(0)
            .args(["-c", &step_command("echo started; sleep 4247; echo never")])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut started = [0u8; 8];
        stdout.read_exact(&mut started).unwrap();
        assert_eq!(&started, b"started\n");
        drop(child.stdin.take());
        let status = child.wait().unwrap();
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).unwrap();
        assert_eq!(rest, "");
        assert!(!status.success(), "the runner was killed: {status:?}");
    }
}
