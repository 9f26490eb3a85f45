//! API tokens: rows keyed by the SHA-256 of the secret, never the secret itself.
//!
//! Minting and hashing the secret belongs to the engine's `accounts::tokens`; this module
//! stores and finds rows.

use super::{Listing, Store, StoreError, Window};
use crate::found::OrNotFound;

pub use api_types::TokenScope;

/// A token as listed: everything but the secret, which is not stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ApiToken {
    pub id: String,
    pub user_id: String,
    pub name: String,
    pub created_at_ms: i64,
    pub last_used_at_ms: Option<i64>,
    pub expires_at_ms: Option<i64>,
    pub revoked_at_ms: Option<i64>,
    pub scope: TokenScope,
    /// When set, each use moves the expiry to this long after the use.
    pub renew_ms: Option<i64>,
}

impl ApiToken {
    /// Whether a use at `now_ms` should be recorded (see [`Store::touch_token`]).
    pub fn needs_touch(&self, now_ms: i64) -> bool {
        self.last_used_at_ms
            .is_none_or(|at| at < now_ms - TOUCH_INTERVAL_MS)
    }

    /// Whether the token authenticates at `now_ms`.
    pub fn is_live(&self, now_ms: i64) -> bool {
        self.revoked_at_ms.is_none() && self.expires_at_ms.is_none_or(|at| at > now_ms)
    }
}

/// `last_used_at_ms` is kept to this precision, so most API calls stay reads.
pub const TOUCH_INTERVAL_MS: i64 = 60_000;

const COLUMNS: &str = "id, user_id, name, created_at_ms, last_used_at_ms, expires_at_ms, \
                       revoked_at_ms, scope, renew_ms";

impl Store {
    pub async fn insert_token(
        &self,
        token: &ApiToken,
        secret_sha256: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO api_tokens (id, user_id, name, secret_sha256, created_at_ms, \
             expires_at_ms, scope, renew_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&token.id)
        .bind(&token.user_id)
        .bind(&token.name)
        .bind(secret_sha256)
        .bind(token.created_at_ms)
        .bind(token.expires_at_ms)
        .bind(token.scope.as_str())
        .bind(token.renew_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The token whose secret hashes to `secret_sha256`, revoked or not.
    pub async fn token_by_secret(&self, secret_sha256: &str) -> Result<ApiToken, StoreError> {
        sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM api_tokens WHERE secret_sha256 = $1"
        ))
        .bind(secret_sha256)
        .fetch_optional(&self.pool)
        .await?
        .or_not_found(|| "token".to_owned())
    }

    /// One window of the user's tokens, oldest first.
    pub async fn tokens_window(
        &self,
        user_id: &str,
        window: Window,
    ) -> Result<(Vec<ApiToken>, u64), StoreError> {
        let listing = Listing {
            columns: COLUMNS,
            from: "api_tokens WHERE user_id = $1",
            order: "created_at_ms, id",
            params: &[user_id],
        };
        self.windowed(&listing, window).await
    }

    pub async fn token(&self, id: &str) -> Result<ApiToken, StoreError> {
        sqlx::query_as(&format!("SELECT {COLUMNS} FROM api_tokens WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .or_not_found(|| format!("token {id:?}"))
    }

    /// Marks the token revoked (keeping the first revocation time); idempotent.
    pub async fn revoke_token(&self, id: &str, now_ms: i64) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE api_tokens SET revoked_at_ms = COALESCE(revoked_at_ms, $2) WHERE id = $1",
        )
        .bind(id)
        .bind(now_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Revokes every live token of the user (a password reset, "log out everywhere").
    pub async fn revoke_user_tokens(&self, user_id: &str, now_ms: i64) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE api_tokens SET revoked_at_ms = $2 WHERE user_id = $1 AND revoked_at_ms IS NULL",
        )
        .bind(user_id)
        .bind(now_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Records use, at most once per [`TOUCH_INTERVAL_MS`] per token (also when two
    /// requests race past [`ApiToken::needs_touch`]); a renewing token's expiry moves
    /// to `renew_ms` after this use.
    pub async fn touch_token(&self, id: &str, now_ms: i64) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE api_tokens SET last_used_at_ms = $2, \
             expires_at_ms = CASE WHEN renew_ms IS NULL THEN expires_at_ms ELSE $2 + renew_ms END \
             WHERE id = $1 AND (last_used_at_ms IS NULL OR last_used_at_ms < $2 - $3)",
        )
        .bind(id)
        .bind(now_ms)
        .bind(TOUCH_INTERVAL_MS)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}
