//! Each tenant's credentials for the providers of its catalog, and users' own for the
//! providers that allow them (`"user_credentials": true`), sealed with the server's
//! secret key. [`StoredCredentials`] (what pages and the API show) holds the field names
//! and who set them, never a value; only [`Store::provider_credentials`] (the tenant's,
//! for the provider check) and [`Store::credentials_for`] (a node's: its owner's or the
//! tenant's) open them, for the provider that uses them.

use super::{Store, StoreError};
use crate::provider::Credentials;

/// What is known about a provider's credentials without opening them.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct StoredCredentials {
    pub tenant_id: String,
    pub provider: String,
    /// The object's keys, a JSON list (`["access_key_id", "secret_access_key"]`).
    field_names: String,
    pub updated_by: Option<String>,
    pub updated_at_ms: i64,
}

impl StoredCredentials {
    /// The credentials' field names (not their values).
    pub fn field_names(&self) -> Result<Vec<String>, StoreError> {
        serde_json::from_str(&self.field_names).map_err(|error| StoreError::CorruptRow {
            table: "provider_credentials",
            reason: format!("field names of {:?}: {error}", self.provider),
        })
    }
}

const COLUMNS: &str = "tenant_id, provider, field_names, updated_by, updated_at_ms";

/// What a sealed object is bound to: it opens for its own tenant and provider only.
fn sealed_context(tenant_id: &str, provider: &str) -> String {
    format!("provider_credentials:{tenant_id}:{provider}")
}

/// What a user's sealed object is bound to: it opens for its own user and provider only.
fn user_sealed_context(user_id: &str, provider: &str) -> String {
    format!("user_provider_credentials:{user_id}:{provider}")
}

/// Whose credentials [`Store::credentials_for`] opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialsSource {
    /// The tenant's, set by its admins.
    Tenant,
    /// This user's own (the cluster's owner).
    User(String),
}

impl CredentialsSource {
    /// The user whose credentials these are, if they are a user's.
    pub fn user(&self) -> Option<&str> {
        match self {
            Self::Tenant => None,
            Self::User(user) => Some(user),
        }
    }
}

fn field_names_json(credentials: &Credentials) -> Result<String, StoreError> {
    serde_json::to_string(&credentials.field_names()).map_err(|error| StoreError::CorruptRow {
        table: "provider_credentials",
        reason: format!("field names: {error}"),
    })
}

fn opened(
    table: &'static str,
    provider: &str,
    text: &str,
) -> Result<Option<Credentials>, StoreError> {
    Credentials::from_json_text(text)
        .map(Some)
        .map_err(|error| StoreError::CorruptRow {
            table,
            reason: format!("credentials of {provider:?}: {error}"),
        })
}

impl Store {
    /// Sets (or replaces) `tenant_id`'s credentials for `provider`, sealed.
    pub async fn set_provider_credentials(
        &self,
        tenant_id: &str,
        provider: &str,
        credentials: &Credentials,
        updated_by: Option<&str>,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let sealed = self.secret_key()?.seal(
            &credentials.expose_json(),
            &sealed_context(tenant_id, provider),
        )?;
        let field_names = field_names_json(credentials)?;
        sqlx::query(
            "INSERT INTO provider_credentials \
             (tenant_id, provider, sealed, field_names, updated_by, updated_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (tenant_id, provider) DO UPDATE SET sealed = excluded.sealed, \
             field_names = excluded.field_names, updated_by = excluded.updated_by, \
             updated_at_ms = excluded.updated_at_ms",
        )
        .bind(tenant_id)
        .bind(provider)
        .bind(&sealed)
        .bind(&field_names)
        .bind(updated_by)
        .bind(now_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Removes `tenant_id`'s credentials for `provider`; whether there were any.
    pub async fn delete_provider_credentials(
        &self,
        tenant_id: &str,
        provider: &str,
    ) -> Result<bool, StoreError> {
        let result =
            sqlx::query("DELETE FROM provider_credentials WHERE tenant_id = $1 AND provider = $2")
                .bind(tenant_id)
                .bind(provider)
                .execute(&self.pool)
                .await?;
        Ok(result.rows_affected() > 0)
    }

    /// What is set for `provider` in `tenant_id`, without the values.
    pub async fn stored_provider_credentials(
        &self,
        tenant_id: &str,
        provider: &str,
    ) -> Result<Option<StoredCredentials>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM provider_credentials WHERE tenant_id = $1 AND provider = $2"
        ))
        .bind(tenant_id)
        .bind(provider)
        .fetch_optional(&self.pool)
        .await?)
    }

    /// Every provider of `tenant_id` that has credentials, by provider name.
    pub async fn list_provider_credentials(
        &self,
        tenant_id: &str,
    ) -> Result<Vec<StoredCredentials>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM provider_credentials WHERE tenant_id = $1 ORDER BY provider"
        ))
        .bind(tenant_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// `tenant_id`'s credentials for `provider`, opened: for the provider that signs
    /// with them, never for showing. `None` when none are set.
    pub async fn provider_credentials(
        &self,
        tenant_id: &str,
        provider: &str,
    ) -> Result<Option<Credentials>, StoreError> {
        let stored = sqlx::query_scalar::<_, String>(
            "SELECT sealed FROM provider_credentials WHERE tenant_id = $1 AND provider = $2",
        )
        .bind(tenant_id)
        .bind(provider)
        .fetch_optional(&self.pool)
        .await?;
        let Some(stored) = stored else {
            return Ok(None);
        };
        let context = sealed_context(tenant_id, provider);
        let text = self.secret_key()?.open(&stored, &context)?;
        opened("provider_credentials", provider, &text)
    }

    /// Sets (or replaces) `user_id`'s own credentials for `provider` (of `tenant_id`,
    /// the user's tenant), sealed. Whether the provider allows them is the caller's check.
    pub async fn set_user_provider_credentials(
        &self,
        tenant_id: &str,
        user_id: &str,
        provider: &str,
        credentials: &Credentials,
        updated_by: Option<&str>,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let sealed = self.secret_key()?.seal(
            &credentials.expose_json(),
            &user_sealed_context(user_id, provider),
        )?;
        let field_names = field_names_json(credentials)?;
        sqlx::query(
            "INSERT INTO user_provider_credentials \
             (user_id, tenant_id, provider, sealed, field_names, updated_by, updated_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (user_id, provider) DO UPDATE SET tenant_id = excluded.tenant_id, \
             sealed = excluded.sealed, field_names = excluded.field_names, \
             updated_by = excluded.updated_by, updated_at_ms = excluded.updated_at_ms",
        )
        .bind(user_id)
        .bind(tenant_id)
        .bind(provider)
        .bind(&sealed)
        .bind(&field_names)
        .bind(updated_by)
        .bind(now_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Removes `user_id`'s own credentials for `provider` of `tenant_id`; whether there
    /// were any.
    pub async fn delete_user_provider_credentials(
        &self,
        tenant_id: &str,
        user_id: &str,
        provider: &str,
    ) -> Result<bool, StoreError> {
        let result = sqlx::query(
            "DELETE FROM user_provider_credentials \
             WHERE tenant_id = $1 AND user_id = $2 AND provider = $3",
        )
        .bind(tenant_id)
        .bind(user_id)
        .bind(provider)
        .execute(&self.pool)
        .await?;
        Ok(result.rows_affected() > 0)
    }

    /// What `user_id` has set for `provider` of `tenant_id`, without the values.
    pub async fn stored_user_provider_credentials(
        &self,
        tenant_id: &str,
        user_id: &str,
        provider: &str,
    ) -> Result<Option<StoredCredentials>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM user_provider_credentials \
             WHERE tenant_id = $1 AND user_id = $2 AND provider = $3"
        ))
        .bind(tenant_id)
        .bind(user_id)
        .bind(provider)
        .fetch_optional(&self.pool)
        .await?)
    }

    /// The credentials a node of `tenant_id` made through `provider` uses, opened (for
    /// the provider that signs with them, never for showing): `owner`'s own when
    /// `users_allowed` (the provider's `user_credentials`) and the owner set some, the
    /// tenant's otherwise, with whose they are. `None` when neither is set.
    ///
    /// Delete and adopt pass the user recorded at create with `users_allowed`, so they
    /// use the credentials the node was made with, or the tenant's once the user's are
    /// gone.
    pub async fn credentials_for(
        &self,
        tenant_id: &str,
        provider: &str,
        owner: Option<&str>,
        users_allowed: bool,
    ) -> Result<Option<(Credentials, CredentialsSource)>, StoreError> {
        if let (Some(owner), true) = (owner, users_allowed) {
            // Bound to the tenant too: a user moved to another tenant does not bring
            // their credentials to its clusters.
            let stored = sqlx::query_scalar::<_, String>(
                "SELECT sealed FROM user_provider_credentials \
                 WHERE tenant_id = $1 AND user_id = $2 AND provider = $3",
            )
            .bind(tenant_id)
            .bind(owner)
            .bind(provider)
            .fetch_optional(&self.pool)
            .await?;
            if let Some(stored) = stored {
                let text = self
                    .secret_key()?
                    .open(&stored, &user_sealed_context(owner, provider))?;
                if let Some(credentials) = opened("user_provider_credentials", provider, &text)? {
                    return Ok(Some((
                        credentials,
                        CredentialsSource::User(owner.to_owned()),
                    )));
                }
            }
        }
        Ok(self
            .provider_credentials(tenant_id, provider)
            .await?
            .map(|credentials| (credentials, CredentialsSource::Tenant)))
    }
}
