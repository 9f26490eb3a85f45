//! API token secrets: minted from the OS RNG, shown once, stored as SHA-256.
//!
//! A secret is `corral_` plus 43 URL-safe base64 characters (256 random bits), so it
//! is recognisable in a config file or a leaked log and cannot be guessed. SHA-256
//! rather than argon2 is enough here: the secret has full entropy, and a fast hash
//! keeps every API call cheap.

use std::fmt;

use base64::Engine as _;
use rand_core::{OsRng, RngCore};
use sha2::{Digest, Sha256};

const PREFIX: &str = "corral_";

/// A token secret in the clear; never printed by `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenSecret(String);

impl TokenSecret {
    pub fn generate() -> Self {
        let mut bytes = [0u8; 32];
        OsRng.fill_bytes(&mut bytes);
        Self(format!(
            "{PREFIX}{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
        ))
    }

    /// Accepts what a client sent; `None` when it cannot be one of ours.
    pub fn parse(raw: &str) -> Option<Self> {
        let raw = raw.trim();
        (raw.starts_with(PREFIX) && raw.len() == PREFIX.len() + 43).then(|| Self(raw.to_owned()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// What the store keeps and looks tokens up by.
    pub fn sha256_hex(&self) -> String {
        hex::encode(Sha256::digest(self.0.as_bytes()))
    }
}

impl fmt::Debug for TokenSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenSecret(***)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_secrets_parse_back_and_hash_stably() {
        let secret = TokenSecret::generate();
        let parsed = TokenSecret::parse(secret.expose()).expect("parses");
        assert_eq!(parsed.sha256_hex(), secret.sha256_hex());
        assert_eq!(secret.sha256_hex().len(), 64);
        assert_ne!(TokenSecret::generate(), secret);
    }

    #[test]
    fn foreign_strings_are_not_secrets() {
        assert!(TokenSecret::parse("Bearer abc").is_none());
        assert!(TokenSecret::parse("corral_short").is_none());
    }

    #[test]
    fn debug_hides_the_secret() {
        let secret = TokenSecret::generate();
        assert!(!format!("{secret:?}").contains(secret.expose()));
    }
}
