//! Password hashing (argon2id, PHC strings) and generation.

use std::fmt;

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use rand_core::{OsRng, RngCore};

/// Shortest password accepted for a user.
pub use api_types::MIN_PASSWORD_CHARS;

#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error("password is too short: use at least {MIN_PASSWORD_CHARS} characters")]
    TooShort,
    #[error("cannot hash the password: {0}")]
    Hash(String),
}

/// A plain password. Its `Debug` never shows the value, so it cannot leak into logs.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    pub fn new(plain: impl Into<String>) -> Self {
        Self(plain.into())
    }

    /// The plain value, for the one place that must show it (first-run output).
    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn check_strength(&self) -> Result<(), PasswordError> {
        if self.0.chars().count() < MIN_PASSWORD_CHARS {
            return Err(PasswordError::TooShort);
        }
        Ok(())
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(***)")
    }
}

/// Hashes with argon2id and a fresh random salt.
pub fn hash_password(password: &Password) -> Result<String, PasswordError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.0.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|err| PasswordError::Hash(err.to_string()))
}

/// Whether `password` matches the stored PHC `hash`. A malformed hash never matches.
pub fn verify_password(password: &Password, hash: &str) -> bool {
    PasswordHash::new(hash)
        .map(|parsed| {
            Argon2::default()
                .verify_password(password.0.as_bytes(), &parsed)
                .is_ok()
        })
        .unwrap_or(false)
}

/// [`hash_password`] on a blocking thread: argon2 takes tens of milliseconds of CPU,
/// which would stall every other request sharing the async worker thread.
pub async fn hash_password_blocking(password: &Password) -> Result<String, PasswordError> {
    let password = password.clone();
    tokio::task::spawn_blocking(move || hash_password(&password))
        .await
        .map_err(|error| PasswordError::Hash(error.to_string()))?
}

/// [`verify_password`] on a blocking thread (see [`hash_password_blocking`]).
pub async fn verify_password_blocking(password: &Password, hash: &str) -> bool {
    let (password, hash) = (password.clone(), hash.to_owned());
    tokio::task::spawn_blocking(move || verify_password(&password, &hash))
        .await
        .unwrap_or(false)
}

/// A 20-character password from the OS random source (about 119 bits).
pub fn generate_password() -> Password {
    // 62 symbols; rejection sampling keeps every symbol equally likely.
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut out = String::with_capacity(20);
    while out.len() < 20 {
        let byte = (OsRng.next_u32() & 0xff) as u8;
        if usize::from(byte) < ALPHABET.len() * 4 {
            out.push(char::from(ALPHABET[usize::from(byte) % ALPHABET.len()]));
        }
    }
    Password(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_verify_and_differ_by_salt() {
        let password = Password::new("correct horse battery");
        let first = hash_password(&password).unwrap();
        let second = hash_password(&password).unwrap();
        assert!(first.starts_with("$argon2id$"));
        assert_ne!(first, second);
        assert!(verify_password(&password, &first));
        assert!(!verify_password(
            &Password::new("wrong horse battery"),
            &first
        ));
        assert!(!verify_password(&password, "not a hash"));
    }

    #[test]
    fn short_passwords_are_refused() {
        assert!(matches!(
            Password::new("short").check_strength(),
            Err(PasswordError::TooShort)
        ));
    }

    #[test]
    fn generated_passwords_are_strong_and_distinct() {
        let a = generate_password();
        let b = generate_password();
        assert_eq!(a.expose().len(), 20);
        assert!(a.expose().chars().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(a, b);
        a.check_strength().unwrap();
    }

    #[test]
    fn debug_never_shows_the_password() {
        assert_eq!(
            format!("{:?}", Password::new("s3cret-value!")),
            "Password(***)"
        );
    }
}
