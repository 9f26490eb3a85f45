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

impl CredentialsSource {
    /// The table holding this source's credentials.
    fn table(&self) -> &'static str {
        match self {
            Self::Tenant => "provider_credentials",
            Self::User(_) => "user_provider_credentials",
        }
    }

    /// What a sealed object is bound to: it opens in its own place only.
    fn sealed_context(&self, tenant_id: &str, provider: &str) -> String {
        match self {
            Self::Tenant => sealed_context(tenant_id, provider),
            Self::User(user) => user_sealed_context(user, provider),
        }
    }

    /// The row's key after `tenant_id = $1 AND provider = $2`. A user's rows are
    /// matched on the tenant too: a user moved to another tenant does not bring their
    /// credentials to its clusters.
    fn key_condition(&self) -> &'static str {
        match self {
            Self::Tenant => "tenant_id = $1 AND provider = $2",
            Self::User(_) => "tenant_id = $1 AND provider = $2 AND user_id = $3",
        }
    }
}

impl Store {
    /// Sets (or replaces) `source`'s credentials for `provider` of `tenant_id`, sealed.
    /// Whether the provider takes a user's own is the caller's check.
    pub async fn set_credentials(
        &self,
        tenant_id: &str,
        provider: &str,
        source: &CredentialsSource,
        credentials: &Credentials,
        updated_by: Option<&str>,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let sealed = self.secret_key()?.seal(
            &credentials.expose_json(),
            &source.sealed_context(tenant_id, provider),
        )?;
        let field_names = field_names_json(credentials)?;
        let (user_column, user_value, conflict) = match source {
            CredentialsSource::Tenant => ("", "", "tenant_id, provider"),
            CredentialsSource::User(_) => (", user_id", ", $7", "user_id, provider"),
        };
        let sql = format!(
            "INSERT INTO {table} \
             (tenant_id, provider, sealed, field_names, updated_by, updated_at_ms{user_column}) \
             VALUES ($1, $2, $3, $4, $5, $6{user_value}) \
             ON CONFLICT ({conflict}) DO UPDATE SET tenant_id = excluded.tenant_id, \
             sealed = excluded.sealed, field_names = excluded.field_names, \
             updated_by = excluded.updated_by, updated_at_ms = excluded.updated_at_ms",
            table = source.table()
        );
        let mut query = sqlx::query(&sql)
            .bind(tenant_id)
            .bind(provider)
            .bind(&sealed)
            .bind(&field_names)
            .bind(updated_by)
            .bind(now_ms);
        if let CredentialsSource::User(user) = source {
            query = query.bind(user.as_str());
        }
        query.execute(&self.pool).await?;
        Ok(())
    }

    /// Removes `source`'s credentials for `provider` of `tenant_id`; whether there were any.
    pub async fn delete_credentials(
        &self,
        tenant_id: &str,
        provider: &str,
        source: &CredentialsSource,
    ) -> Result<bool, StoreError> {
        let sql = format!(
            "DELETE FROM {} WHERE {}",
            source.table(),
            source.key_condition()
        );
        let mut query = sqlx::query(&sql).bind(tenant_id).bind(provider);
        if let CredentialsSource::User(user) = source {
            query = query.bind(user.as_str());
        }
        Ok(query.execute(&self.pool).await?.rows_affected() > 0)
    }

    /// What `source` has set for `provider` of `tenant_id`, without the values.
    pub async fn stored_credentials(
        &self,
        tenant_id: &str,
        provider: &str,
        source: &CredentialsSource,
    ) -> Result<Option<StoredCredentials>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM {} WHERE {}",
            source.table(),
            source.key_condition()
        );
        let mut query = sqlx::query_as(&sql).bind(tenant_id).bind(provider);
        if let CredentialsSource::User(user) = source {
            query = query.bind(user.as_str());
        }
        Ok(query.fetch_optional(&self.pool).await?)
    }

    /// `source`'s credentials for `provider` of `tenant_id`, opened: for the provider
    /// that signs with them, never for showing. `None` when none are set.
    async fn open_credentials(
        &self,
        tenant_id: &str,
        provider: &str,
        source: &CredentialsSource,
    ) -> Result<Option<Credentials>, StoreError> {
        let sql = format!(
            "SELECT sealed FROM {} WHERE {}",
            source.table(),
            source.key_condition()
        );
        let mut query = sqlx::query_scalar::<_, String>(&sql)
            .bind(tenant_id)
            .bind(provider);
        if let CredentialsSource::User(user) = source {
            query = query.bind(user.as_str());
        }
        let Some(stored) = query.fetch_optional(&self.pool).await? else {
            return Ok(None);
        };
        let context = source.sealed_context(tenant_id, provider);
        let text = self.secret_key()?.open(&stored, &context)?;
        opened(source.table(), provider, &text)
    }

    /// Sets (or replaces) `tenant_id`'s credentials for `provider`.
    pub async fn set_provider_credentials(
        &self,
        tenant_id: &str,
        provider: &str,
        credentials: &Credentials,
        updated_by: Option<&str>,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let source = CredentialsSource::Tenant;
        self.set_credentials(
            tenant_id,
            provider,
            &source,
            credentials,
            updated_by,
            now_ms,
        )
        .await
    }

    /// Sets (or replaces) `user_id`'s own credentials for `provider` of `tenant_id`.
    pub async fn set_user_provider_credentials(
        &self,
        tenant_id: &str,
        user_id: &str,
        provider: &str,
        credentials: &Credentials,
        updated_by: Option<&str>,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let source = CredentialsSource::User(user_id.to_owned());
        self.set_credentials(
            tenant_id,
            provider,
            &source,
            credentials,
            updated_by,
            now_ms,
        )
        .await
    }

    /// Removes `user_id`'s own credentials for `provider` of `tenant_id`.
    pub async fn delete_user_provider_credentials(
        &self,
        tenant_id: &str,
        user_id: &str,
        provider: &str,
    ) -> Result<bool, StoreError> {
        let source = CredentialsSource::User(user_id.to_owned());
        self.delete_credentials(tenant_id, provider, &source).await
    }

    /// What `user_id` has set for `provider` of `tenant_id`, without the values.
    pub async fn stored_user_provider_credentials(
        &self,
        tenant_id: &str,
        user_id: &str,
        provider: &str,
    ) -> Result<Option<StoredCredentials>, StoreError> {
        let source = CredentialsSource::User(user_id.to_owned());
        self.stored_credentials(tenant_id, provider, &source).await
    }

    /// `tenant_id`'s credentials for `provider`, opened (see [`Store::credentials_for`]).
    pub async fn provider_credentials(
        &self,
        tenant_id: &str,
        provider: &str,
    ) -> Result<Option<Credentials>, StoreError> {
        self.open_credentials(tenant_id, provider, &CredentialsSource::Tenant)
            .await
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
            let source = CredentialsSource::User(owner.to_owned());
            if let Some(credentials) = self.open_credentials(tenant_id, provider, &source).await? {
                return Ok(Some((credentials, source)));
            }
        }
        Ok(self
            .provider_credentials(tenant_id, provider)
            .await?
            .map(|credentials| (credentials, CredentialsSource::Tenant)))
    }
}
