//! Sign-in attempts per throttle key, in the database so that every server process
//! sharing it counts the same attempts.
//!
//! An attempt is *reserved* before its password is checked: its rows are inserted
//! first, then the rows in the window are counted. Whoever counts after inserting sees
//! at least every attempt inserted before their own, so of any number of concurrent
//! attempts at most `limit` see a count within the limit, with no lock held while
//! argon2 runs. A refused attempt takes its rows back; a wrong password keeps them
//! (they are the failures counted); a right one clears its account's key.

use super::{Store, StoreError};

/// One counter an attempt touches: the SHA-256 hex of what it counts, and its limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThrottleKey {
    pub key_hash: String,
    pub limit: u32,
}

/// The rows an attempt reserved, to clear on success.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    ids: Vec<String>,
}

impl Store {
    /// Reserves one attempt under every key, or takes the reservation back and returns
    /// the milliseconds until the fullest key has room again.
    pub async fn reserve_login_attempt(
        &self,
        keys: &[ThrottleKey],
        now_ms: i64,
        window_ms: i64,
    ) -> Result<Result<Reservation, i64>, StoreError> {
        let mut ids = Vec::with_capacity(keys.len());
        for key in keys {
            let id = uuid::Uuid::new_v4().to_string();
            sqlx::query("INSERT INTO login_attempts (id, key_hash, at_ms) VALUES ($1, $2, $3)")
                .bind(&id)
                .bind(&key.key_hash)
                .bind(now_ms)
                .execute(&self.pool)
                .await?;
            ids.push(id);
        }
        let since = now_ms - window_ms;
        let mut wait_ms = None::<i64>;
        for key in keys {
            let (count, oldest): (i64, Option<i64>) = sqlx::query_as(
                "SELECT COUNT(*), MIN(at_ms) FROM login_attempts \
                 WHERE key_hash = $1 AND at_ms > $2",
            )
            .bind(&key.key_hash)
            .bind(since)
            .fetch_one(&self.pool)
            .await?;
            if count > i64::from(key.limit) {
                let wait = oldest.map_or(window_ms, |oldest| oldest + window_ms - now_ms);
                wait_ms = Some(wait_ms.unwrap_or(0).max(wait.max(1)));
            }
        }
        let reservation = Reservation { ids };
        match wait_ms {
            None => Ok(Ok(reservation)),
            Some(wait) => {
                self.release_login_attempt(&reservation).await?;
                Ok(Err(wait))
            }
        }
    }

    /// Takes a reservation back (the attempt did not count).
    pub async fn release_login_attempt(&self, reservation: &Reservation) -> Result<(), StoreError> {
        for id in &reservation.ids {
            sqlx::query("DELETE FROM login_attempts WHERE id = $1")
                .bind(id)
                .execute(&self.pool)
                .await?;
        }
        Ok(())
    }

    /// Forgets every attempt under `key_hash` (a successful sign-in clears its
    /// account's counter) and, while at it, every attempt older than the window.
    pub async fn clear_login_attempts(
        &self,
        key_hash: &str,
        forget_before_ms: i64,
    ) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM login_attempts WHERE key_hash = $1 OR at_ms <= $2")
            .bind(key_hash)
            .bind(forget_before_ms)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Forgets attempts older than the window, so failures do not pile up.
    pub async fn forget_login_attempts_before(&self, before_ms: i64) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM login_attempts WHERE at_ms <= $1")
            .bind(before_ms)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
