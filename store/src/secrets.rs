//! The server's secret key, and secrets sealed with it before they are stored.
//!
//! Some rows must hold a secret Corral itself uses later (an ssh-pool host's client
//! private key; provider credentials next): hashing is no use, so they are encrypted
//! with ChaCha20-Poly1305 (ring's AEAD) under a 256-bit key that is not in the
//! database. A database dump or backup then holds no usable key. The key comes from
//! `CORRAL_SECRET_KEY` (base64 of 32 bytes; what several processes on several machines
//! share) or else from `<data dir>/secret.key`, made with mode 0600 on first start.
//!
//! A sealed value is `sealed:v1:` + base64(nonce ‖ ciphertext ‖ tag). Each is bound to
//! the place it belongs (`context`, e.g. the row's table, column and id), so a sealed
//! value copied into another row does not open there.

use std::io::Write;
use std::path::Path;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305, NONCE_LEN};
use ring::rand::{SecureRandom, SystemRandom};

/// What marks a stored value as sealed (anything else is a value from before sealing).
const SEALED_PREFIX: &str = "sealed:v1:";

/// The environment variable holding the key (base64 of 32 bytes).
pub const SECRET_KEY_ENV: &str = "CORRAL_SECRET_KEY";

/// The key file's name in the data dir.
pub const SECRET_KEY_FILE: &str = "secret.key";

#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error(
        "{SECRET_KEY_ENV} must be the base64 of 32 random bytes (e.g. `openssl rand -base64 32`)"
    )]
    BadEnvKey,
    #[error("the secret key file {path} must hold the base64 of 32 bytes")]
    BadKeyFile { path: String },
    #[error("cannot {action} the secret key file {path}: {source}")]
    KeyFile {
        action: &'static str,
        path: String,
        source: std::io::Error,
    },
    #[error("the random source failed")]
    Random,
    #[error(
        "a stored secret ({context}) does not open with this server's secret key: every \
         process sharing a database needs the same {SECRET_KEY_ENV} (or copy of {SECRET_KEY_FILE})"
    )]
    WrongKey { context: String },
}

/// The key secrets are sealed with. Its `Debug` shows nothing of it.
pub struct SecretKey {
    key: LessSafeKey,
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(***)")
    }
}

impl SecretKey {
    pub fn from_bytes(bytes: &[u8; 32]) -> Self {
        // 32 bytes is CHACHA20_POLY1305's key length, so this cannot fail.
        let unbound = UnboundKey::new(&CHACHA20_POLY1305, bytes)
            .unwrap_or_else(|_| unreachable!("a 32-byte key is ChaCha20-Poly1305's length"));
        Self {
            key: LessSafeKey::new(unbound),
        }
    }

    /// The key from `CORRAL_SECRET_KEY`, else from the data dir's key file, which is
    /// made (mode 0600) when it does not exist yet.
    pub fn load(data_dir: &Path) -> Result<Self, SecretError> {
        if let Ok(raw) = std::env::var(SECRET_KEY_ENV) {
            return decode_key(&raw)
                .map(|bytes| Self::from_bytes(&bytes))
                .ok_or(SecretError::BadEnvKey);
        }
        let path = data_dir.join(SECRET_KEY_FILE);
        let shown = path.display().to_string();
        match std::fs::read_to_string(&path) {
            Ok(raw) => decode_key(&raw)
                .map(|bytes| Self::from_bytes(&bytes))
                .ok_or(SecretError::BadKeyFile { path: shown }),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let mut bytes = [0u8; 32];
                SystemRandom::new()
                    .fill(&mut bytes)
                    .map_err(|_| SecretError::Random)?;
                write_new_key_file(&path, &STANDARD.encode(bytes)).or_else(|error| {
                    if error.kind() == std::io::ErrorKind::AlreadyExists {
                        // Another process made it first: use theirs.
                        return Ok(());
                    }
                    Err(SecretError::KeyFile {
                        action: "create",
                        path: shown.clone(),
                        source: error,
                    })
                })?;
                Self::load_file_only(&path)
            }
            Err(source) => Err(SecretError::KeyFile {
                action: "read",
                path: shown,
                source,
            }),
        }
    }

    fn load_file_only(path: &Path) -> Result<Self, SecretError> {
        let shown = path.display().to_string();
        let raw = std::fs::read_to_string(path).map_err(|source| SecretError::KeyFile {
            action: "read",
            path: shown.clone(),
            source,
        })?;
        decode_key(&raw)
            .map(|bytes| Self::from_bytes(&bytes))
            .ok_or(SecretError::BadKeyFile { path: shown })
    }

    /// Seals `plaintext` for the place named by `context`.
    pub fn seal(&self, plaintext: &str, context: &str) -> Result<String, SecretError> {
        let mut nonce = [0u8; NONCE_LEN];
        SystemRandom::new()
            .fill(&mut nonce)
            .map_err(|_| SecretError::Random)?;
        let mut buffer = plaintext.as_bytes().to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(context.as_bytes()),
                &mut buffer,
            )
            .map_err(|_| SecretError::Random)?;
        let mut sealed = nonce.to_vec();
        sealed.extend_from_slice(&buffer);
        Ok(format!("{SEALED_PREFIX}{}", STANDARD.encode(sealed)))
    }

    /// Opens a value [`SecretKey::seal`] made for `context`. A value that was never
    /// sealed (stored before sealing existed) is returned as it is.
    pub fn open(&self, stored: &str, context: &str) -> Result<String, SecretError> {
        let Some(encoded) = stored.strip_prefix(SEALED_PREFIX) else {
            return Ok(stored.to_owned());
        };
        let wrong_key = || SecretError::WrongKey {
            context: context.to_owned(),
        };
        let mut bytes = STANDARD.decode(encoded).map_err(|_| wrong_key())?;
        if bytes.len() < NONCE_LEN {
            return Err(wrong_key());
        }
        let mut nonce = [0u8; NONCE_LEN];
        nonce.copy_from_slice(&bytes[..NONCE_LEN]);
        let opened = self
            .key
            .open_in_place(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(context.as_bytes()),
                &mut bytes[NONCE_LEN..],
            )
            .map_err(|_| wrong_key())?;
        String::from_utf8(opened.to_vec()).map_err(|_| wrong_key())
    }

    /// Whether a stored value is sealed already.
    pub fn is_sealed(stored: &str) -> bool {
        stored.starts_with(SEALED_PREFIX)
    }
}

fn decode_key(raw: &str) -> Option<[u8; 32]> {
    STANDARD.decode(raw.trim()).ok()?.try_into().ok()
}

fn write_new_key_file(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(contents.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn sealed_values_open_only_with_the_key_and_in_their_place() {
        let key = SecretKey::from_bytes(&[7; 32]);
        let sealed = key
            .seal("-----BEGIN OPENSSH PRIVATE KEY-----", "row 1")
            .unwrap();
        assert!(SecretKey::is_sealed(&sealed));
        assert!(!sealed.contains("OPENSSH"));
        assert_eq!(
            key.open(&sealed, "row 1").unwrap(),
            "-----BEGIN OPENSSH PRIVATE KEY-----"
        );
        assert!(key.open(&sealed, "row 2").is_err(), "bound to its place");
        let other = SecretKey::from_bytes(&[8; 32]);
        let error = other.open(&sealed, "row 1").unwrap_err().to_string();
        assert!(error.contains(SECRET_KEY_ENV), "{error}");
        assert_eq!(key.open("legacy plain", "row 1").unwrap(), "legacy plain");
        assert_ne!(
            key.seal("x", "c").unwrap(),
            key.seal("x", "c").unwrap(),
            "fresh nonces"
        );
    }

    #[test]
    fn the_key_file_is_made_private_once_and_read_back() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let first = SecretKey::load(dir.path()).unwrap();
        let mode = std::fs::metadata(dir.path().join(SECRET_KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let sealed = first.seal("secret", "c").unwrap();
        let again = SecretKey::load(dir.path()).unwrap();
        assert_eq!(again.open(&sealed, "c").unwrap(), "secret");
    }
}
