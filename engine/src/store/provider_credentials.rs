//! Each tenant's credentials for the providers of its catalog, sealed with the server's
//! secret key. [`StoredCredentials`] (what pages and the API show) holds the field names
//! and who set them, never a value; only [`Store::provider_credentials`] opens them, for
//! the provider that uses them.

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
        let field_names = serde_json::to_string(&credentials.field_names()).map_err(|error| {
            StoreError::CorruptRow {
                table: "provider_credentials",
                reason: format!("field names: {error}"),
            }
        })?;
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
        let opened = self.secret_key()?.open(&stored, &context)?;
        Credentials::from_json_text(&opened)
            .map(Some)
            .map_err(|error| StoreError::CorruptRow {
                table: "provider_credentials",
                reason: format!("credentials of {provider:?}: {error}"),
            })
    }
}
