//! Host keys pinned at node creation and checked on every connection.

use std::fmt;

use russh::keys::{HashAlg, PublicKey};
use serde::{Deserialize, Serialize};

/// A node's host public key, kept in OpenSSH one-line form (`ssh-ed25519 AAAA…`) so node
/// records stay plain text in the database.
#[derive(Clone, PartialEq, Eq)]
pub struct HostKey {
    key: PublicKey,
}

impl HostKey {
    /// Parses an OpenSSH public key line; a trailing comment is ignored.
    pub fn from_openssh(text: &str) -> Result<Self, super::SshError> {
        let key = PublicKey::from_openssh(text.trim()).map_err(|error| {
            super::SshError::InvalidHostKey {
                text: text.to_owned(),
                reason: error.to_string(),
            }
        })?;
        Ok(Self::from_public_key(key))
    }

    pub fn from_public_key(key: PublicKey) -> Self {
        // Comments are labels, not identity: two keys with the same material are the same key.
        let key = PublicKey::new(key.key_data().clone(), "");
        Self { key }
    }

    /// The OpenSSH one-line form, without a comment.
    pub fn to_openssh(&self) -> String {
        self.key.to_openssh().unwrap_or_else(|_| self.fingerprint())
    }

    /// `SHA256:…`, as `ssh-keygen -l` and OpenSSH's own warnings print it.
    pub fn fingerprint(&self) -> String {
        self.key.fingerprint(HashAlg::Sha256).to_string()
    }

    pub fn matches(&self, presented: &PublicKey) -> bool {
        self.key.key_data() == presented.key_data()
    }
}

impl fmt::Debug for HostKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HostKey({})", self.fingerprint())
    }
}

impl Serialize for HostKey {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_openssh())
    }
}

impl<'de> Deserialize<'de> for HostKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        HostKey::from_openssh(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMjL5g2tLCXY/mxtwGZ1QuYVzyZ8Z7reMrGN53ioWB2o";

    #[test]
    fn round_trips_and_ignores_comments() {
        let with_comment = HostKey::from_openssh(&format!("{KEY} root@somewhere")).unwrap();
        let bare = HostKey::from_openssh(KEY).unwrap();
        assert_eq!(with_comment, bare);
        assert_eq!(bare.to_openssh(), KEY);
        assert!(bare.fingerprint().starts_with("SHA256:"));
        let json = serde_json::to_string(&bare).unwrap();
        assert_eq!(serde_json::from_str::<HostKey>(&json).unwrap(), bare);
    }

    #[test]
    fn rejects_garbage() {
        let error = HostKey::from_openssh("ssh-ed25519 not-base64").unwrap_err();
        assert!(error.to_string().contains("invalid host key"));
    }
}
