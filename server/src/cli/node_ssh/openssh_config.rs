//! `corral cluster ssh --config NAME`: an OpenSSH config for the cluster's nodes, so
//! `ssh NAME-1000`, `scp` and `rsync` reach them through Corral. Each host goes through
//! `corral cluster ssh --proxy` (the node tunnel on standard input and output), signs
//! in with a fresh key and its certificate, and trusts only the node's pinned host key.
//! The key, the certificates and the known hosts are written under the config dir
//! (`ssh/NAME/`, files 0600): the certificates expire after `--minutes`, so run it again
//! for a new set.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context};
use api_types::ClusterDetail;
use russh::keys::ssh_key::LineEnding;

use super::super::remote::{config_dir, Client};
use super::SshArgs;

pub async fn write_and_print(client: &Client, args: &SshArgs) -> anyhow::Result<ExitCode> {
    let cluster: ClusterDetail = client
        .get(&format!(
            "/api/v1/clusters/{}",
            url::form_urlencoded::byte_serialize(args.cluster.as_bytes()).collect::<String>()
        ))
        .await?;
    let name = cluster.cluster.name.clone();
    let mut numbers: Vec<i64> = cluster
        .nodes
        .iter()
        .map(|node| node.number)
        .filter(|number| args.node.is_none_or(|wanted| wanted == *number))
        .collect();
    numbers.sort_unstable();
    if numbers.is_empty() {
        match args.node {
            Some(node) => bail!("cluster {name} has no node {node}"),
            None => bail!("cluster {name} has no nodes yet"),
        }
    }
    let dir = config_dir()?.join("ssh").join(&name);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let key = super::ephemeral_key()?;
    let key_file = dir.join("id_ed25519");
    write_private(
        &key_file,
        key.to_openssh(LineEnding::LF)
            .context("cannot write the key")?
            .as_bytes(),
    )?;
    let corral = std::env::current_exe().context("cannot tell where corral is")?;
    let mut known_hosts = String::new();
    let mut config = format!(
        "# Written by `corral cluster ssh --config {name}`: certificates valid for {} \
         minutes; run it again for new ones.\n",
        args.minutes
    );
    for number in numbers {
        let signed = super::sign(client, &name, number, &key, args.minutes).await?;
        let alias = format!("{name}-{number}");
        let certificate_file = dir.join(format!("{number}-cert.pub"));
        write_private(
            &certificate_file,
            format!("{}\n", signed.certificate).as_bytes(),
        )?;
        known_hosts.push_str(&format!("{alias} {}\n", signed.host_key));
        config.push_str(&format!(
            "\nHost {alias}\n  \
             HostKeyAlias {alias}\n  \
             User {user}\n  \
             ProxyCommand {proxy}\n  \
             IdentityFile {key}\n  \
             CertificateFile {certificate}\n  \
             IdentitiesOnly yes\n  \
             UserKnownHostsFile {known_hosts}\n  \
             StrictHostKeyChecking yes\n",
            user = signed.user,
            proxy = proxy_command(&corral, &name, number),
            key = quoted(&key_file),
            certificate = quoted(&certificate_file),
            known_hosts = quoted(&dir.join("known_hosts")),
        ));
    }
    write_private(&dir.join("known_hosts"), known_hosts.as_bytes())?;
    print!("{config}");
    Ok(ExitCode::SUCCESS)
}

/// `ProxyCommand`'s value: run by OpenSSH through the shell, so each word is quoted.
fn proxy_command(corral: &Path, cluster: &str, node: i64) -> String {
    let word = |text: &str| format!("'{}'", text.replace('\'', r"'\''"));
    format!(
        "{} cluster ssh --proxy {} {node}",
        word(&corral.to_string_lossy()),
        word(cluster)
    )
}

/// A path as an OpenSSH config value (double-quoted: paths may hold spaces).
fn quoted(path: &Path) -> String {
    format!("\"{}\"", path.display())
}

/// Writes `bytes` to `path`, readable by its owner only (OpenSSH refuses a private
/// key others can read), replacing any earlier file.
fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}
