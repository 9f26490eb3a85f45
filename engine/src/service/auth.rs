//! Authentication: password login with throttling, API tokens, and sessions checked
//! against the user's session epoch (so "log out everywhere" and a password change
//! end every session at once).
//!
//! A failed login says only "wrong username or password", whether or not the user
//! exists, and costs the same argon2 work either way.
//!
//! Throttling counts failed logins in the database (every server process shares the
//! counts) under two keys: the account *from one client address*, and the client
//! address alone. A guesser is stopped on the account from their address, and an
//! address spraying many accounts is stopped, but nobody elsewhere can lock the owner
//! out by failing on purpose. Behind a reverse proxy the client address is the one
//! the configured trusted proxy forwarded (see the server's `--trusted-proxy`).

use std::sync::OnceLock;
use std::time::Duration;

use api_types::AuditAction;
use sha2::{Digest, Sha256};

use super::{Service, ServiceError};
use crate::accounts::{
    generate_password, hash_password, verify_password_blocking, Password, TokenSecret,
};
use crate::principal::Principal;
use crate::store::login_attempts::ThrottleKey;
use crate::store::tokens::TokenScope;
use crate::store::{now_ms, StoreError};

/// How many failed logins are allowed before the account or address must wait.
#[derive(Debug, Clone, Copy)]
pub struct ThrottleSettings {
    /// Failures on one account from one client address.
    pub per_account: u32,
    /// Failures from one client address, whatever the account.
    pub per_address: u32,
    /// Failures older than this are forgotten; a throttled login waits out the rest.
    pub window: Duration,
}

impl Default for ThrottleSettings {
    fn default() -> Self {
        Self {
            per_account: 5,
            per_address: 20,
            window: Duration::from_secs(15 * 60),
        }
    }
}

impl ThrottleSettings {
    /// The counters a login attempt touches. Keys are hashes: a username of any length
    /// costs one fixed-size row, and neither names nor addresses are stored.
    fn keys(&self, username: &str, address: Option<&str>) -> Vec<ThrottleKey> {
        let address = address.unwrap_or("unknown");
        vec![
            ThrottleKey {
                key_hash: throttle_hash(&["account", username, address]),
                limit: self.per_account,
            },
            ThrottleKey {
                key_hash: throttle_hash(&["address", address]),
                limit: self.per_address,
            },
        ]
    }

    fn window_ms(&self) -> i64 {
        i64::try_from(self.window.as_millis()).unwrap_or(i64::MAX)
    }
}

/// SHA-256 hex of the parts, each length-prefixed so no two part lists collide.
fn throttle_hash(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    hex::encode(hasher.finalize())
}

/// What a request does with its credentials: a read-only token may only read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// A logged-in user as a session stores it: who, and the epoch the session belongs to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SessionUser {
    pub user_id: String,
    pub epoch: i64,
}

/// An argon2id hash of a random password nobody knows, verified against when the
/// username does not exist so both failures take the same time.
fn decoy_hash() -> &'static str {
    static DECOY: OnceLock<String> = OnceLock::new();
    DECOY.get_or_init(|| hash_password(&generate_password()).unwrap_or_default())
}

impl Service {
    /// Checks a username and password. Throttled per account and client `address`,
    /// and per `address`; the attempt is counted before the password is checked.
    pub async fn login(
        &self,
        username: &str,
        password: &Password,
        address: Option<&str>,
    ) -> Result<(Principal, SessionUser), ServiceError> {
        let username = username.trim().to_ascii_lowercase();
        let settings = self.throttle;
        let keys = settings.keys(&username, address);
        let now = now_ms();
        let reservation = match self
            .store
            .reserve_login_attempt(&keys, now, settings.window_ms())
            .await?
        {
            Ok(reservation) => reservation,
            Err(wait_ms) => {
                return Err(ServiceError::TooManyAttempts {
                    wait_secs: u64::try_from((wait_ms + 999) / 1000).unwrap_or(1).max(1),
                })
            }
        };
        let user = match self.store.user_by_username(&username).await {
            Ok(user) => Some(user),
            Err(StoreError::NotFound(_)) => None,
            Err(error) => {
                self.store.release_login_attempt(&reservation).await?;
                return Err(error.into());
            }
        };
        let hash = user.as_ref().map_or_else(
            || decoy_hash().to_owned(),
            |user| user.password_hash.clone(),
        );
        let matches = verify_password_blocking(password, &hash).await;
        // A user of a single sign-on issuer that switches local passwords off signs in
        // there only, whatever password an admin may have set.
        let allowed = match &user {
            Some(user) if matches => self.store.password_login_allowed(&user.id).await?,
            _ => false,
        };
        match user {
            Some(user) if allowed => {
                self.store.release_login_attempt(&reservation).await?;
                self.store
                    .clear_login_attempts(&keys[0].key_hash, now - settings.window_ms())
                    .await?;
                Ok((
                    Principal::from_user(&user),
                    SessionUser {
                        epoch: user.session_epoch,
                        user_id: user.id,
                    },
                ))
            }
            _ => {
                // The reserved rows stay: they are this failure. Older ones go.
                self.store
                    .forget_login_attempts_before(now - settings.window_ms())
                    .await?;
                Err(ServiceError::Unauthenticated)
            }
        }
    }

    /// The user a session belongs to, if the session is still valid.
    pub async fn session_principal(
        &self,
        session: &SessionUser,
    ) -> Result<Principal, ServiceError> {
        let user = match self.store.user(&session.user_id).await {
            Ok(user) => user,
            Err(StoreError::NotFound(_)) => return Err(ServiceError::Unauthenticated),
            Err(error) => return Err(error.into()),
        };
        if user.session_epoch != session.epoch {
            return Err(ServiceError::Unauthenticated);
        }
        Ok(Principal::from_user(&user))
    }

    /// The user an `Authorization: Bearer` secret belongs to, if the token is live and
    /// its scope allows `access`.
    pub async fn token_principal(
        &self,
        raw: &str,
        access: Access,
    ) -> Result<Principal, ServiceError> {
        let secret = TokenSecret::parse(raw).ok_or(ServiceError::Unauthenticated)?;
        let token = match self.store.token_by_secret(&secret.sha256_hex()).await {
            Ok(token) => token,
            Err(StoreError::NotFound(_)) => return Err(ServiceError::Unauthenticated),
            Err(error) => return Err(error.into()),
        };
        let now = now_ms();
        if !token.is_live(now) {
            return Err(ServiceError::Unauthenticated);
        }
        if access == Access::Write && token.scope == TokenScope::ReadOnly {
            return Err(ServiceError::Forbidden(format!(
                "the token {:?} is read-only: use a full token to change anything",
                token.name
            )));
        }
        let user = match self.store.user(&token.user_id).await {
            Ok(user) => user,
            Err(StoreError::NotFound(_)) => return Err(ServiceError::Unauthenticated),
            Err(error) => return Err(error.into()),
        };
        if token.needs_touch(now) {
            match self.store.touch_token(&token.id, now).await {
                // A full disk must not lock token holders out of reading: the touch
                // only keeps the last-used time (and a renewing token's lifetime) fresh,
                // and the next request tries again.
                Err(error) if error.is_storage_full() => {
                    tracing::warn!(%error, "token use not recorded: the database's disk is full");
                }
                other => other?,
            }
        }
        Ok(Principal::from_user(&user))
    }

    /// Ends every session of the caller and revokes their API tokens.
    pub async fn logout_everywhere(&self, caller: &super::Caller) -> Result<(), ServiceError> {
        self.store
            .bump_session_epoch(&caller.principal.user_id)
            .await?;
        self.audit(
            caller,
            super::AuditRecord::new(
                caller.tenant_id(),
                AuditAction::UserLogoutEverywhere,
                "user",
                &caller.principal.username,
            ),
        )
        .await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_fixed_size_and_separate_accounts_and_addresses() {
        let settings = ThrottleSettings::default();
        let long_name = "a".repeat(100_000);
        let keys = settings.keys(&long_name, Some("10.0.0.1"));
        assert!(keys.iter().all(|key| key.key_hash.len() == 64));
        let other_address = settings.keys(&long_name, Some("10.0.0.2"));
        assert_ne!(keys[0], other_address[0], "per account *and* address");
        let other_account = settings.keys("bob", Some("10.0.0.1"));
        assert_eq!(keys[1], other_account[1], "the address key is shared");
        assert_ne!(
            throttle_hash(&["ab", "c"]),
            throttle_hash(&["a", "bc"]),
            "parts cannot run into each other"
        );
    }
}
