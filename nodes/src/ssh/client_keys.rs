//! Client key pairs Corral makes for hosts it is given (the `ssh-pool`): the private half
//! stays with Corral, the public half is what an administrator authorizes on the host.

use rand_core::{OsRng, RngCore};
use russh::keys::ssh_key::private::Ed25519Keypair;
use russh::keys::ssh_key::LineEnding;
use russh::keys::PrivateKey;

/// A fresh Ed25519 key pair in OpenSSH forms. `Debug` shows only the public half.
pub struct ClientKeyPair {
    /// OpenSSH PEM (`-----BEGIN OPENSSH PRIVATE KEY-----`), unencrypted: a secret.
    pub private_openssh: String,
    /// One line for `authorized_keys`: `ssh-ed25519 AAAA… comment`.
    pub public_openssh: String,
}

impl std::fmt::Debug for ClientKeyPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientKeyPair")
            .field("public_openssh", &self.public_openssh)
            .finish_non_exhaustive()
    }
}

impl ClientKeyPair {
    /// Makes a key pair from the operating system's random source; `comment` ends the
    /// public line so the administrator can tell whose key it is.
    pub fn generate(comment: &str) -> Result<Self, super::SshError> {
        let mut seed = [0u8; 32];
        OsRng.fill_bytes(&mut seed);
        let mut key = PrivateKey::from(Ed25519Keypair::from_seed(&seed));
        seed.fill(0);
        key.set_comment(comment);
        let encode = |reason: String| super::SshError::ClientKey {
            path: "(generated)".to_owned(),
            reason,
        };
        let private_openssh = key
            .to_openssh(LineEnding::LF)
            .map_err(|error| encode(error.to_string()))?
            .to_string();
        let public_openssh = key
            .public_key()
            .to_openssh()
            .map_err(|error| encode(error.to_string()))?;
        Ok(Self {
            private_openssh,
            public_openssh,
        })
    }

    /// The pair of an existing private key in OpenSSH PEM (a key file an earlier version
    /// wrote), its public line derived from it.
    pub fn from_private_openssh(private_openssh: &str) -> Result<Self, super::SshError> {
        let invalid = |reason: String| super::SshError::ClientKey {
            path: "(stored)".to_owned(),
            reason,
        };
        let key = PrivateKey::from_openssh(private_openssh)
            .map_err(|error| invalid(error.to_string()))?;
        let public_openssh = key
            .public_key()
            .to_openssh()
            .map_err(|error| invalid(error.to_string()))?;
        Ok(Self {
            private_openssh: private_openssh.to_owned(),
            public_openssh,
        })
    }
}
