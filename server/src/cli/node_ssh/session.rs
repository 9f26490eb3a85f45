//! The SSH session over the node tunnel, with russh: only the node's pinned host key is
//! accepted, the ephemeral key signs in with its certificate, and then either an
//! interactive shell on a PTY (when standard input and output are a terminal, which
//! goes raw and follows window size changes) or `COMMAND`, whose standard output,
//! standard error and exit status become this process's.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context};
use api_types::NodeCertificate;
use russh::client::{self, Handle};
use russh::keys::ssh_key::Certificate;
use russh::keys::{PrivateKey, PublicKey, PublicKeyOrCertificate};
use russh::ChannelMsg;
use std::io::Write as _;

use super::terminal::{self, RawMode};
use super::tunnel::{self, Tunnel};

/// Accepts the node's pinned host key and nothing else (no certificate either).
struct PinnedNode {
    pinned: PublicKey,
}

impl client::Handler for PinnedNode {
    type Error = anyhow::Error;

    async fn check_server_key(
        &mut self,
        presented: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        let accepted = match presented {
            PublicKeyOrCertificate::PublicKey { key, .. } => {
                key.key_data() == self.pinned.key_data()
            }
            _ => false,
        };
        if !accepted {
            bail!(
                "the node presented a host key other than the one Corral pinned ({}): \
                 refusing to connect",
                self.pinned.fingerprint(Default::default())
            );
        }
        Ok(true)
    }
}

/// Signs in to the node at the end of `tunnel` with `key` and its certificate, runs
/// `command` (or a shell) and returns its exit status.
pub async fn run(
    tunnel: Tunnel,
    key: PrivateKey,
    signed: &NodeCertificate,
    command: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let pinned = PublicKey::from_openssh(&signed.host_key)
        .context("the server sent an unreadable host key")?;
    let certificate = Certificate::from_openssh(&signed.certificate)
        .context("the server sent an unreadable certificate")?;
    let config = Arc::new(client::Config {
        inactivity_timeout: None,
        ..client::Config::default()
    });
    let handler = PinnedNode { pinned };
    let mut handle: Handle<PinnedNode> =
        client::connect_stream(config, tunnel::into_stream(tunnel), handler)
            .await
            .context("the SSH handshake with the node failed")?;
    let auth = handle
        .authenticate_openssh_cert(signed.user.clone(), Arc::new(key), certificate)
        .await
        .context("signing in to the node failed")?;
    if !auth.success() {
        bail!(
            "the node refused the certificate for {:?} (does it trust this tenant's SSH \
             certificate authority? nodes made before Corral had one do not)",
            signed.user
        );
    }
    let mut channel = handle
        .channel_open_session()
        .await
        .context("the node refused a session")?;
    let interactive = command.is_none() && terminal::is_interactive();
    let raw_mode = if interactive {
        let (columns, rows) = terminal::size();
        let term = std::env::var("TERM").unwrap_or_else(|_| "xterm-256color".to_owned());
        channel
            .request_pty(false, &term, columns, rows, 0, 0, &[])
            .await?;
        channel.request_shell(true).await?;
        Some(RawMode::enter()?)
    } else {
        match command {
            Some(command) => channel.exec(true, command).await?,
            None => channel.request_shell(true).await?,
        }
        None
    };
    let mut window_changes =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::window_change())?;
    let mut input = terminal::stdin_chunks();
    let mut input_open = true;
    // Plain blocking writes: a terminal or pipe takes them at once (tokio's own stdout
    // is not built into this binary).
    let mut stdout = std::io::stdout();
    let mut stderr = std::io::stderr();
    let mut status = None;
    loop {
        tokio::select! {
            chunk = input.recv(), if input_open => match chunk {
                Some(chunk) => channel.data_bytes(chunk).await?,
                None => {
                    input_open = false;
                    channel.eof().await?;
                }
            },
            _ = window_changes.recv(), if interactive => {
                let (columns, rows) = terminal::size();
                channel.window_change(columns, rows, 0, 0).await?;
            }
            message = channel.wait() => match message {
                Some(ChannelMsg::Data { data }) => {
                    stdout.write_all(&data)?;
                    stdout.flush()?;
                }
                Some(ChannelMsg::ExtendedData { data, ext: 1 }) => {
                    stderr.write_all(&data)?;
                    stderr.flush()?;
                }
                Some(ChannelMsg::ExitStatus { exit_status }) => status = Some(exit_status),
                // As OpenSSH's ssh does: a command killed by a signal is a failure.
                Some(ChannelMsg::ExitSignal { .. }) => status = Some(255),
                Some(_) => {}
                None => break,
            },
        }
    }
    let _ = handle
        .disconnect(russh::Disconnect::ByApplication, "", "en")
        .await;
    // The terminal is itself again before anything more is printed.
    drop(raw_mode);
    match status {
        Some(code) => Ok(ExitCode::from(u8::try_from(code).unwrap_or(255))),
        None => bail!("the session ended without an exit status (the connection dropped?)"),
    }
}
