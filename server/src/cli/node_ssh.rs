//! `corral cluster ssh NAME NODE [-- COMMAND]`: an SSH session to a node, through the
//! server. The CLI makes an Ed25519 key in memory, has the server sign it into a
//! certificate valid for minutes (the tenant's SSH user CA, which the node trusts),
//! opens the node tunnel (a WebSocket the server relays to the node's sshd) and speaks
//! SSH over it with russh, accepting only the node's pinned host key. So it works
//! from a workstation for every node the server reaches, docker nodes on the server's
//! loopback included, and no private key a user could keep ever leaves the process.
//!
//! `--proxy` is the tunnel alone, on standard input and output (OpenSSH's
//! `ProxyCommand`); `--config` prints an OpenSSH config using it, with a fresh key and
//! certificates written under the config dir, so `ssh`, `scp` and `rsync` work too.

mod openssh_config;
mod session;
mod terminal;
mod tunnel;

use std::process::ExitCode;

use anyhow::{bail, Context};
use api_types::{NodeCertificate, NodeCertificateRequest};
use clap::Args;
use russh::keys::ssh_key::private::Ed25519Keypair;
use russh::keys::PrivateKey;

use super::remote::Client;

#[derive(Debug, Args)]
pub struct SshArgs {
    /// Print an OpenSSH config for the cluster's nodes (hosts NAME-NODE, e.g. shop-1000)
    /// and write the key and certificates it names under the config dir.
    #[arg(long, conflicts_with_all = ["proxy", "command"])]
    pub config: bool,
    /// Relay standard input and output to the node's sshd, for OpenSSH's ProxyCommand.
    #[arg(long, conflicts_with = "command")]
    pub proxy: bool,
    /// How long the certificate is valid, in minutes (1-1440).
    #[arg(long, default_value_t = 10)]
    pub minutes: u32,
    /// The cluster, by name or id.
    pub cluster: String,
    /// The node's number (e.g. 1000); with --config, every node when left out.
    pub node: Option<i64>,
    /// A command to run instead of an interactive shell (after `--`).
    #[arg(last = true)]
    pub command: Vec<String>,
}

pub async fn run(client: &Client, args: SshArgs) -> anyhow::Result<ExitCode> {
    if args.config {
        return openssh_config::write_and_print(client, &args).await;
    }
    let Some(node) = args.node else {
        bail!(
            "name the node to reach: corral cluster ssh {} NODE",
            args.cluster
        );
    };
    if args.proxy {
        let tunnel = tunnel::open(client, &args.cluster, node).await?;
        tunnel::relay_stdio(tunnel).await?;
        return Ok(ExitCode::SUCCESS);
    }
    let key = ephemeral_key()?;
    let signed = sign(client, &args.cluster, node, &key, args.minutes).await?;
    let tunnel = tunnel::open(client, &args.cluster, node).await?;
    let command = (!args.command.is_empty()).then(|| args.command.join(" "));
    session::run(tunnel, key, &signed, command.as_deref()).await
}

/// A fresh Ed25519 key from the operating system's random source, kept in memory.
fn ephemeral_key() -> anyhow::Result<PrivateKey> {
    use rand_core::RngCore as _;
    let mut seed = [0u8; 32];
    rand_core::OsRng.fill_bytes(&mut seed);
    let mut key = PrivateKey::from(Ed25519Keypair::from_seed(&seed));
    seed.fill(0);
    key.set_comment("corral cluster ssh");
    Ok(key)
}

/// Has the server certify `key`'s public half for node `node` of `cluster`.
async fn sign(
    client: &Client,
    cluster: &str,
    node: i64,
    key: &PrivateKey,
    minutes: u32,
) -> anyhow::Result<NodeCertificate> {
    let public_key = key
        .public_key()
        .to_openssh()
        .context("cannot write the public key")?;
    client
        .node_certificate(
            cluster,
            node,
            &NodeCertificateRequest {
                public_key,
                minutes: Some(minutes),
            },
        )
        .await
}

/// `/api/v1/clusters/{cluster}/nodes/{node}`, the cluster's name or id escaped.
fn node_path(cluster: &str, node: i64) -> String {
    let cluster: String = url::form_urlencoded::byte_serialize(cluster.as_bytes()).collect();
    format!("/api/v1/clusters/{cluster}/nodes/{node}")
}
