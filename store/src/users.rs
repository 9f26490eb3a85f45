//! Users and their roles. Passwords arrive here already hashed; hashing belongs to
//! the access layer, so this module never sees a plain password.

use std::fmt;

use super::{conflict_on_unique, now_ms, Listing, Store, StoreError, Window};
use crate::found::OrNotFound;

pub use api_types::Role;

#[derive(Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct User {
    pub id: String,
    pub tenant_id: String,
    pub username: String,
    pub role: Role,
    pub password_hash: String,
    pub created_at_ms: i64,
    /// Sessions made under an older epoch are void (see `bump_session_epoch`).
    pub session_epoch: i64,
}

impl fmt::Debug for User {
    // The hash is a secret too: keep it out of logs and panics.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("User")
            .field("id", &self.id)
            .field("tenant_id", &self.tenant_id)
            .field("username", &self.username)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

/// A user to create; `password_hash` is a PHC string (argon2id).
#[derive(Clone)]
pub struct NewUser {
    pub tenant_id: String,
    pub username: String,
    pub role: Role,
    pub password_hash: String,
}

const COLUMNS: &str = "id, tenant_id, username, role, password_hash, created_at_ms, session_epoch";

impl Store {
    pub async fn create_user(&self, new: &NewUser) -> Result<User, StoreError> {
        let user = User {
            id: uuid::Uuid::new_v4().to_string(),
            tenant_id: new.tenant_id.clone(),
            username: new.username.clone(),
            role: new.role,
            password_hash: new.password_hash.clone(),
            created_at_ms: now_ms(),
            session_epoch: 0,
        };
        let result = sqlx::query(
            "INSERT INTO users (id, tenant_id, username, role, password_hash, created_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&user.id)
        .bind(&user.tenant_id)
        .bind(&user.username)
        .bind(user.role.as_str())
        .bind(&user.password_hash)
        .bind(user.created_at_ms)
        .execute(&self.pool)
        .await;
        conflict_on_unique(result, || format!("user {:?}", new.username))?;
        Ok(user)
    }

    pub async fn user_by_username(&self, username: &str) -> Result<User, StoreError> {
        sqlx::query_as(&format!("SELECT {COLUMNS} FROM users WHERE username = $1"))
            .bind(username)
            .fetch_optional(&self.pool)
            .await?
            .or_not_found(|| format!("user {username:?}"))
    }

    /// Users of one tenant, by name.
    pub async fn list_users(&self, tenant_id: &str) -> Result<Vec<User>, StoreError> {
        let listing = Listing {
            columns: COLUMNS,
            from: "users WHERE tenant_id = $1",
            order: "username",
            params: &[tenant_id],
        };
        self.listed(&listing).await
    }

    /// One window of the users, by username: the tenant's, or every tenant's (`None`).
    pub async fn users_window(
        &self,
        tenant_id: Option<&str>,
        window: Window,
    ) -> Result<(Vec<User>, u64), StoreError> {
        let listing = match tenant_id {
            Some(tenant_id) => Listing {
                columns: COLUMNS,
                from: "users WHERE tenant_id = $1",
                order: "username, id",
                params: &[tenant_id],
            },
            None => Listing {
                columns: COLUMNS,
                from: "users",
                order: "username, id",
                params: &[],
            },
        };
        self.windowed(&listing, window).await
    }

    /// The usernames of those of `ids` that are users of `tenant_id`, by id (one
    /// query for a page of clusters' owners; other ids are left out).
    pub async fn usernames_in(
        &self,
        tenant_id: &str,
        ids: &[&str],
    ) -> Result<std::collections::HashMap<String, String>, StoreError> {
        if ids.is_empty() {
            return Ok(std::collections::HashMap::new());
        }
        let places: Vec<String> = (2..ids.len() + 2).map(|n| format!("${n}")).collect();
        let sql = format!(
            "SELECT id, username FROM users WHERE tenant_id = $1 AND id IN ({})",
            places.join(", ")
        );
        let mut query = sqlx::query_as::<sqlx::Any, (String, String)>(&sql).bind(tenant_id);
        for id in ids {
            query = query.bind(*id);
        }
        Ok(query.fetch_all(&self.pool).await?.into_iter().collect())
    }

    /// How many users `tenant_id` has.
    pub async fn count_tenant_users(&self, tenant_id: &str) -> Result<u64, StoreError> {
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users WHERE tenant_id = $1")
            .bind(tenant_id)
            .fetch_one(&self.pool)
            .await?;
        Ok(u64::try_from(count).unwrap_or(0))
    }

    pub async fn count_users(&self) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar("SELECT COUNT(*) FROM users")
            .fetch_one(&self.pool)
            .await?)
    }

    pub async fn user(&self, id: &str) -> Result<User, StoreError> {
        sqlx::query_as(&format!("SELECT {COLUMNS} FROM users WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .or_not_found(|| format!("user {id:?}"))
    }

    /// Ends every session of the user at once and revokes their API tokens: whoever
    /// asks for this suspects someone else holds one.
    pub async fn bump_session_epoch(&self, id: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE users SET session_epoch = session_epoch + 1 WHERE id = $1")
            .bind(id)
            .execute(&self.pool)
            .await?;
        self.revoke_user_tokens(id, now_ms()).await
    }

    /// Replaces the password hash, ends the user's sessions and revokes their API
    /// tokens (a reset is how an admin takes an account back).
    pub async fn set_password_hash(&self, id: &str, password_hash: &str) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE users SET password_hash = $2, session_epoch = session_epoch + 1 WHERE id = $1",
        )
        .bind(id)
        .bind(password_hash)
        .execute(&self.pool)
        .await?
        .or_not_found(|| format!("user {id:?}"))?;
        self.revoke_user_tokens(id, now_ms()).await
    }

    pub async fn set_role(&self, id: &str, role: Role) -> Result<(), StoreError> {
        sqlx::query("UPDATE users SET role = $2, session_epoch = session_epoch + 1 WHERE id = $1")
            .bind(id)
            .bind(role.as_str())
            .execute(&self.pool)
            .await?
            .or_not_found(|| format!("user {id:?}"))
    }

    /// Moves the user from tenant `from` to tenant `to` as one change: their sessions
    /// end and their live API tokens are revoked with it (a token acts as its user, so
    /// a script of the old tenant would otherwise carry on in the new one). Superadmins
    /// are never moved: they belong to the default tenant. `false`, with nothing
    /// changed, when the user is no longer in `from` or has become a superadmin.
    pub async fn move_user(
        &self,
        id: &str,
        from: &str,
        to: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let (_turn, mut tx) = self.begin_write().await?;
        let moved = sqlx::query(
            "UPDATE users SET tenant_id = $3, session_epoch = session_epoch + 1 \
             WHERE id = $1 AND tenant_id = $2 AND role <> $4",
        )
        .bind(id)
        .bind(from)
        .bind(to)
        .bind(Role::Superadmin.as_str())
        .execute(&mut *tx)
        .await?;
        if moved.rows_affected() == 0 {
            return Ok(false);
        }
        sqlx::query(
            "UPDATE api_tokens SET revoked_at_ms = $2 WHERE user_id = $1 AND revoked_at_ms IS NULL",
        )
        .bind(id)
        .bind(now_ms)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    pub async fn delete_user(&self, id: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM users WHERE id = $1")
            .bind(id)
            .execute(&self.pool)
            .await?
            .or_not_found(|| format!("user {id:?}"))
    }
}
