//! Authentication: password login with throttling, API tokens, and sessions checked
//! against the user's session epoch (so "log out everywhere" and a password change
//! end every session at once).
//!
//! A failed login says only "wrong username or password", whether or not the user
//! exists, and costs the same argon2 work either way.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tokio::time::Instant;

use super::{Service, ServiceError};
use crate::accounts::{generate_password, hash_password, verify_password, Password, TokenSecret};
use crate::principal::Principal;
use crate::store::{now_ms, StoreError};
use crate::sync::lock_unpoisoned;

/// How many failed logins are allowed before the account or address must wait.
#[derive(Debug, Clone, Copy)]
pub struct ThrottleSettings {
    pub per_account: u32,
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

/// Counters kept before stale ones are swept.
const MAX_COUNTERS: usize = 10_000;

/// Failed-login counters per account and per client address, in memory: a restart
/// forgets them, which costs an attacker a restart per window.
#[derive(Debug)]
pub struct LoginThrottle {
    settings: ThrottleSettings,
    /// A panicking holder leaves at worst a counter with a failure more or less, which
    /// only moves a throttle's end; the map stays usable.
    failures: Mutex<HashMap<String, Vec<Instant>>>,
}

impl LoginThrottle {
    pub fn new(settings: ThrottleSettings) -> Self {
        Self {
            settings,
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// The counters a login attempt touches, each with its limit.
    fn counters(&self, username: &str, address: Option<&str>) -> Vec<(String, u32)> {
        let mut counters = vec![(format!("user:{username}"), self.settings.per_account)];
        if let Some(address) = address {
            counters.push((format!("addr:{address}"), self.settings.per_address));
        }
        counters
    }

    /// `Err` with the seconds to wait when either counter is at its limit.
    fn check(&self, username: &str, address: Option<&str>) -> Result<(), u64> {
        let now = Instant::now();
        let mut failures = lock_unpoisoned(&self.failures);
        for (key, limit) in self.counters(username, address) {
            let Some(times) = failures.get_mut(&key) else {
                continue;
            };
            times.retain(|at| now.duration_since(*at) < self.settings.window);
            if times.len() >= limit as usize {
                let oldest = times.first().copied().unwrap_or(now);
                let wait = self
                    .settings
                    .window
                    .saturating_sub(now.duration_since(oldest));
                return Err(wait.as_secs().max(1));
            }
        }
        Ok(())
    }

    fn record_failure(&self, username: &str, address: Option<&str>) {
        let now = Instant::now();
        let mut failures = lock_unpoisoned(&self.failures);
        // Many distinct names or addresses must not grow the map without bound:
        // counters with nothing left in the window go first.
        if failures.len() >= MAX_COUNTERS {
            let window = self.settings.window;
            failures.retain(|_, times| times.iter().any(|at| now.duration_since(*at) < window));
        }
        for (key, _) in self.counters(username, address) {
            failures.entry(key).or_default().push(now);
        }
    }

    fn clear_account(&self, username: &str) {
        lock_unpoisoned(&self.failures).remove(&format!("user:{username}"));
    }
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
    /// Checks a username and password. Throttled per account and per `address`.
    pub async fn login(
        &self,
        username: &str,
        password: &Password,
        address: Option<&str>,
    ) -> Result<(Principal, SessionUser), ServiceError> {
        let username = username.trim().to_ascii_lowercase();
        if let Err(wait) = self.throttle.check(&username, address) {
            return Err(ServiceError::TooManyAttempts { wait_secs: wait });
        }
        let user = match self.store.user_by_username(&username).await {
            Ok(user) => Some(user),
            Err(StoreError::NotFound(_)) => None,
            Err(error) => return Err(error.into()),
        };
        let hash = user.as_ref().map(|user| user.password_hash.clone());
        let password = password.clone();
        // argon2 takes tens of milliseconds of CPU: keep it off the async threads.
        let matches = tokio::task::spawn_blocking(move || {
            verify_password(&password, hash.as_deref().unwrap_or_else(|| decoy_hash()))
        })
        .await
        .map_err(ServiceError::internal)?;
        match user {
            Some(user) if matches => {
                self.throttle.clear_account(&username);
                Ok((
                    Principal::from_user(&user),
                    SessionUser {
                        epoch: user.session_epoch,
                        user_id: user.id,
                    },
                ))
            }
            _ => {
                self.throttle.record_failure(&username, address);
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

    /// The user an `Authorization: Bearer` secret belongs to, if the token is live.
    pub async fn token_principal(&self, raw: &str) -> Result<Principal, ServiceError> {
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
        let user = match self.store.user(&token.user_id).await {
            Ok(user) => user,
            Err(StoreError::NotFound(_)) => return Err(ServiceError::Unauthenticated),
            Err(error) => return Err(error.into()),
        };
        if token.needs_touch(now) {
            self.store.touch_token(&token.id, now).await?;
        }
        Ok(Principal::from_user(&user))
    }

    /// Ends every session of the caller (tokens stay valid; revoke them separately).
    pub async fn logout_everywhere(&self, caller: &super::Caller) -> Result<(), ServiceError> {
        self.store
            .bump_session_epoch(&caller.principal.user_id)
            .await?;
        self.audit(
            caller,
            super::AuditRecord::new(
                caller.tenant_id(),
                "user.logout-everywhere",
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

    #[tokio::test(start_paused = true)]
    async fn an_account_waits_after_too_many_failures_then_recovers() {
        let throttle = LoginThrottle::new(ThrottleSettings {
            per_account: 3,
            per_address: 100,
            window: Duration::from_secs(60),
        });
        for _ in 0..3 {
            assert!(throttle.check("alice", Some("10.0.0.1")).is_ok());
            throttle.record_failure("alice", Some("10.0.0.1"));
        }
        let wait = throttle.check("alice", Some("10.0.0.2")).unwrap_err();
        assert_eq!(wait, 60);
        assert!(
            throttle.check("bob", Some("10.0.0.1")).is_ok(),
            "other accounts are fine"
        );
        tokio::time::advance(Duration::from_secs(61)).await;
        assert!(throttle.check("alice", Some("10.0.0.1")).is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn an_address_spraying_many_accounts_is_stopped() {
        let throttle = LoginThrottle::new(ThrottleSettings {
            per_account: 100,
            per_address: 4,
            window: Duration::from_secs(60),
        });
        for user in ["a", "b", "c", "d"] {
            throttle.record_failure(user, Some("10.0.0.9"));
        }
        assert!(throttle.check("e", Some("10.0.0.9")).is_err());
        assert!(throttle.check("e", Some("10.0.0.8")).is_ok());
    }
}
