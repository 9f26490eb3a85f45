//! Single sign-on rows: which user an OpenID Connect identity (issuer, subject) is,
//! whether that user may also sign in with a local password, and the one-time codes a
//! browser sign-in hands to `corral login --sso`.

use super::users::User;
use super::{now_ms, Store, StoreError};

/// A one-time code for `corral login --sso`, as taken (once) from the store.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct CliCode {
    pub user_id: String,
    /// The CLI's PKCE challenge (base64url SHA-256 of its verifier).
    pub challenge: String,
    pub expires_at_ms: i64,
}

impl Store {
    /// The user signed in with `subject` at `issuer` before, if any.
    pub async fn sso_user(&self, issuer: &str, subject: &str) -> Result<Option<User>, StoreError> {
        let user_id: Option<String> = sqlx::query_scalar(
            "SELECT user_id FROM sso_identities WHERE issuer = $1 AND subject = $2",
        )
        .bind(issuer)
        .bind(subject)
        .fetch_optional(&self.pool)
        .await?;
        match user_id {
            Some(id) => Ok(Some(self.user(&id).await?)),
            None => Ok(None),
        }
    }

    /// Records that `user_id` is `subject` at `issuer`, or that they signed in again
    /// (with the issuer's current local-password setting).
    pub async fn record_sso_identity(
        &self,
        issuer: &str,
        subject: &str,
        user_id: &str,
        local_passwords: bool,
    ) -> Result<(), StoreError> {
        let now = now_ms();
        sqlx::query(
            "INSERT INTO sso_identities \
             (issuer, subject, user_id, local_passwords, created_at_ms, signed_in_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $5) \
             ON CONFLICT (issuer, subject) DO UPDATE SET \
             local_passwords = excluded.local_passwords, signed_in_at_ms = excluded.signed_in_at_ms",
        )
        .bind(issuer)
        .bind(subject)
        .bind(user_id)
        .bind(i64::from(local_passwords))
        .bind(now)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Whether the user may sign in with a password: not when an issuer they signed in
    /// with switches local passwords off.
    pub async fn password_login_allowed(&self, user_id: &str) -> Result<bool, StoreError> {
        let refusing: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM sso_identities WHERE user_id = $1 AND local_passwords = 0",
        )
        .bind(user_id)
        .fetch_one(&self.pool)
        .await?;
        Ok(refusing == 0)
    }

    /// Stores a one-time code (its SHA-256) for `corral login --sso`.
    pub async fn create_sso_cli_code(
        &self,
        code_hash: &str,
        user_id: &str,
        challenge: &str,
        expires_at_ms: i64,
    ) -> Result<(), StoreError> {
        // Codes nobody came for are of no use to anyone: drop them on the way.
        sqlx::query("DELETE FROM sso_cli_codes WHERE expires_at_ms < $1")
            .bind(now_ms())
            .execute(&self.pool)
            .await?;
        sqlx::query(
            "INSERT INTO sso_cli_codes (code_hash, user_id, challenge, expires_at_ms) \
             VALUES ($1, $2, $3, $4)",
        )
        .bind(code_hash)
        .bind(user_id)
        .bind(challenge)
        .bind(expires_at_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Takes the code whose SHA-256 is `code_hash`: one DELETE, so of two concurrent
    /// takers one gets it. `None` when there is none (never made, or taken already).
    pub async fn take_sso_cli_code(&self, code_hash: &str) -> Result<Option<CliCode>, StoreError> {
        // In a transaction: SQLite commits a lone `DELETE ... RETURNING` read this way
        // only when the statement is reset, where sqlx does not report a failed commit,
        // and a code handed out must be gone (it is single-use).
        let (_turn, mut tx) = self.begin_write().await?;
        let code = sqlx::query_as(
            "DELETE FROM sso_cli_codes WHERE code_hash = $1 \
             RETURNING user_id, challenge, expires_at_ms",
        )
        .bind(code_hash)
        .fetch_optional(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(code)
    }
}
