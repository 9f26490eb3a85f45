//! The host key a node's record pins, and where it came from ([`HostKeySource`]).
//!
//! cloud-init prints an instance's host keys to its console between
//! `-----BEGIN SSH HOST KEY KEYS-----` markers at first boot; the console is read for
//! them (Ed25519 preferred) for [`CONSOLE_WAIT`]. Where it says nothing in time, the key
//! sshd presents on the first connection is pinned instead (trust on first use, logged
//! and told to the user). Instances Corral never connects to get a key nobody holds the
//! private half of, so nothing could be trusted by mistake.

use std::time::Duration;

use base64::Engine as _;

use super::api::{self, Params, QueryClient};
use super::errors::ec2_error;
use super::{Connect, HostKeySource, MAX_POLL, SSH_PORT};
use crate::provider::ProviderError;
use crate::ssh::{ClientKeyPair, HostKey};

const HOST_KEYS_BEGIN: &str = "-----BEGIN SSH HOST KEY KEYS-----";
const HOST_KEYS_END: &str = "-----END SSH HOST KEY KEYS-----";

/// How long the console is read for the host keys before the first connection decides.
const CONSOLE_WAIT: Duration = Duration::from_secs(240);
/// How long sshd may take to answer that first connection.
const FIRST_USE_WAIT: Duration = Duration::from_secs(300);

/// The key to pin for `instance_id`, reached at `host`, and where it came from.
pub(super) async fn host_key(
    client: &QueryClient,
    node: &str,
    provider: &str,
    instance_id: &str,
    host: &str,
    connect: Connect,
) -> Result<(HostKey, HostKeySource), ProviderError> {
    let failure = |action: &'static str, detail: String| ProviderError::Ec2 {
        node: node.to_owned(),
        provider: provider.to_owned(),
        action,
        detail,
    };
    let console_wait = if connect == Connect::None {
        Duration::ZERO
    } else {
        CONSOLE_WAIT
    };
    let deadline = tokio::time::Instant::now() + console_wait;
    loop {
        let output: api::ConsoleOutput = client
            .call_as(
                "GetConsoleOutput",
                Params::new().set("InstanceId", instance_id).as_slice(),
            )
            .await
            .map_err(ec2_error(node, provider, "read the console output"))?;
        let text = output
            .output
            .and_then(|encoded| {
                base64::engine::general_purpose::STANDARD
                    .decode(encoded.trim())
                    .ok()
            })
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default();
        if let Some(key) = console_host_key(&text) {
            return Ok((key, HostKeySource::Console));
        }
        if tokio::time::Instant::now() + MAX_POLL > deadline {
            break;
        }
        tokio::time::sleep(MAX_POLL).await;
    }
    if connect == Connect::None {
        // Never used to connect; a key whose private half is discarded right here
        // makes sure nothing could be trusted by mistake.
        let placeholder = ClientKeyPair::generate("corral: host key unknown")
            .map_err(|error| failure("record the host key", error.to_string()))?;
        let key = HostKey::from_openssh(&placeholder.public_openssh)
            .map_err(|error| failure("record the host key", error.to_string()))?;
        return Ok((key, HostKeySource::Unknown));
    }
    let deadline = tokio::time::Instant::now() + FIRST_USE_WAIT;
    loop {
        match crate::ssh::first_seen_host_key(host, SSH_PORT, Duration::from_secs(20)).await {
            Ok(key) => {
                tracing::warn!(
                    node,
                    instance = instance_id,
                    fingerprint = %key.fingerprint(),
                    "the instance's console shows no host keys; pinning the key it \
                     presented on first connection (trust on first use)"
                );
                return Ok((key, HostKeySource::FirstUse));
            }
            Err(error) if tokio::time::Instant::now() + MAX_POLL > deadline => {
                return Err(failure(
                    "learn the instance's host key",
                    format!(
                        "the console showed none within {}s and sshd at {host}:{SSH_PORT} \
                         did not answer within {}s: {error}",
                        CONSOLE_WAIT.as_secs(),
                        FIRST_USE_WAIT.as_secs()
                    ),
                ));
            }
            Err(_) => tokio::time::sleep(MAX_POLL).await,
        }
    }
}

/// The Ed25519 key (else the first key) between cloud-init's host key markers.
fn console_host_key(console: &str) -> Option<HostKey> {
    let start = console.find(HOST_KEYS_BEGIN)? + HOST_KEYS_BEGIN.len();
    let block = &console[start..];
    let block = &block[..block.find(HOST_KEYS_END)?];
    let keys: Vec<HostKey> = block
        .lines()
        .filter_map(|line| HostKey::from_openssh(line.trim()).ok())
        .collect();
    keys.iter()
        .find(|key| key.to_openssh().starts_with("ssh-ed25519 "))
        .or_else(|| keys.first())
        .cloned()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_host_key_is_read_from_cloud_inits_console_block() {
        let ed = ClientKeyPair::generate("x").unwrap().public_openssh;
        let console = format!(
            "boot...\n{HOST_KEYS_BEGIN}\necdsa-sha2-nistp256 AAAA-not-a-key\n{ed}\n\
             {HOST_KEYS_END}\nlogin:"
        );
        let key = console_host_key(&console).unwrap();
        assert_eq!(key, HostKey::from_openssh(&ed).unwrap());
        assert!(console_host_key("no keys here").is_none());
        assert!(console_host_key(&format!("{HOST_KEYS_BEGIN}\n{ed}\n")).is_none());
    }
}
