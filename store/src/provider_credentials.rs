//! Each tenant's credentials for the providers of its catalog, and users' own for the
//! providers that allow them (`"user_credentials": true`), sealed with the server's
//! secret key. [`StoredCredentials`] (what pages and the API show) holds the field names
//! and who set them, never a value; only [`Store::provider_credentials`] (the tenant's,
//! for the provider check) and [`Store::credentials_for`] (a provider call's) open them,
//! for the provider that uses them.
//!
//! A user's own are theirs in one tenant: their row is keyed by (tenant, user,
//! provider), so a user moved to another tenant neither reads nor moves the row they
//! left behind. And they are bound to the provider's definition when they were set (its
//! [`CredentialBinding`]: type and where credentials go): a provider its admins have
//! since pointed elsewhere does not get them ([`CredentialsChoice::Rebound`]).

use sqlx::any::AnyArguments;
use sqlx::query::Query;
use sqlx::{Any, FromRow};

use super::{Store, StoreError};
use crate::credentials::Credentials;

/// A provider definition's fingerprint, as stored with a user's credentials: how a
/// change of where the provider sends credentials is noticed (the engine's
/// `provider::binding` computes it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialBinding(String);

impl CredentialBinding {
    /// A binding as stored.
    pub fn stored(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

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

/// Whose credentials these are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialsSource {
    /// The tenant's, set by its admins.
    Tenant,
    /// This user's own.
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

    /// The table holding this source's credentials.
    fn table(&self) -> &'static str {
        match self {
            Self::Tenant => "provider_credentials",
            Self::User(_) => "user_provider_credentials",
        }
    }

    /// What a sealed object is bound to: it opens in its own place only. A user's is
    /// bound to their tenant and to the provider's definition too, so a row copied to
    /// another tenant, or given another binding, does not open.
    fn sealed_context(&self, tenant_id: &str, provider: &str, binding: &str) -> String {
        match self {
            Self::Tenant => format!("provider_credentials:{tenant_id}:{provider}"),
            Self::User(user) => {
                format!("user_provider_credentials:{tenant_id}:{user}:{provider}:{binding}")
            }
        }
    }

    /// The row's key: a user's rows are matched on their tenant too.
    fn key_condition(&self) -> &'static str {
        match self {
            Self::Tenant => "tenant_id = $1 AND provider = $2",
            Self::User(_) => "tenant_id = $1 AND provider = $2 AND user_id = $3",
        }
    }

    /// `head` (`DELETE`, `SELECT <columns>`) of this source's row.
    fn keyed_sql(&self, head: &str) -> String {
        format!(
            "{head} FROM {} WHERE {}",
            self.table(),
            self.key_condition()
        )
    }

    /// The statement `sql` (see [`Self::keyed_sql`]) with the row's key bound.
    fn keyed_query<'q>(
        &'q self,
        sql: &'q str,
        tenant_id: &'q str,
        provider: &'q str,
    ) -> Query<'q, Any, AnyArguments<'q>> {
        let query = sqlx::query(sql).bind(tenant_id).bind(provider);
        match self {
            Self::Tenant => query,
            Self::User(user) => query.bind(user.as_str()),
        }
    }
}

/// Whose credentials a provider call for a user (a job's requester, or the user whose
/// own made a node) uses, decided without opening any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialsChoice {
    /// The user's own.
    User(String),
    /// The tenant's: the user has none of their own (or the provider takes none).
    Tenant,
    /// Neither is set.
    Nothing,
    /// The user's own are bound to another definition of the provider: they are not
    /// used (nor the tenant's in their place) until the user enters them again.
    Rebound(String),
}

/// The decision behind [`CredentialsChoice`]: `user` is the user and the binding of
/// their own row when they have one, given only where the provider takes users' own.
fn choose(
    user: Option<(&str, Option<&str>)>,
    current: &CredentialBinding,
    tenant_set: bool,
) -> CredentialsChoice {
    match user {
        Some((user, Some(bound))) if bound == current.as_str() => {
            CredentialsChoice::User(user.to_owned())
        }
        Some((user, Some(_))) => CredentialsChoice::Rebound(user.to_owned()),
        _ if tenant_set => CredentialsChoice::Tenant,
        _ => CredentialsChoice::Nothing,
    }
}

/// What [`Store::credentials_for`] found.
#[derive(Debug)]
pub enum OpenedCredentials {
    Open(Credentials, CredentialsSource),
    Nothing,
    /// See [`CredentialsChoice::Rebound`].
    Rebound(String),
}

fn field_names_json(credentials: &Credentials) -> Result<String, StoreError> {
    serde_json::to_string(&credentials.field_names()).map_err(|error| StoreError::CorruptRow {
        table: "provider_credentials",
        reason: format!("field names: {error}"),
    })
}

fn opened(table: &'static str, provider: &str, text: &str) -> Result<Credentials, StoreError> {
    Credentials::from_json_text(text).map_err(|error| StoreError::CorruptRow {
        table,
        reason: format!("credentials of {provider:?}: {error}"),
    })
}

impl Store {
    /// Sets (or replaces) `source`'s credentials for `provider` of `tenant_id`, sealed;
    /// a user's bound to `binding` (the provider's definition now). Whether the provider
    /// takes a user's own is the caller's check.
    #[allow(clippy::too_many_arguments)]
    pub async fn set_credentials(
        &self,
        tenant_id: &str,
        provider: &str,
        source: &CredentialsSource,
        binding: &CredentialBinding,
        credentials: &Credentials,
        updated_by: Option<&str>,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let sealed = self.secret_key()?.seal(
            &credentials.expose_json(),
            &source.sealed_context(tenant_id, provider, binding.as_str()),
        )?;
        let field_names = field_names_json(credentials)?;
        // A user's row is replaced in its own tenant only: the key holds the tenant.
        let (user_columns, user_values, conflict, user_updates) = match source {
            CredentialsSource::Tenant => ("", "", "tenant_id, provider", ""),
            CredentialsSource::User(_) => (
                ", user_id, binding",
                ", $7, $8",
                "tenant_id, user_id, provider",
                ", binding = excluded.binding",
            ),
        };
        let sql = format!(
            "INSERT INTO {table} \
             (tenant_id, provider, sealed, field_names, updated_by, updated_at_ms{user_columns}) \
             VALUES ($1, $2, $3, $4, $5, $6{user_values}) \
             ON CONFLICT ({conflict}) DO UPDATE SET \
             sealed = excluded.sealed, field_names = excluded.field_names, \
             updated_by = excluded.updated_by, updated_at_ms = excluded.updated_at_ms\
             {user_updates}",
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
            query = query.bind(user.as_str()).bind(binding.as_str());
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
        let sql = source.keyed_sql("DELETE");
        let query = source.keyed_query(&sql, tenant_id, provider);
        Ok(query.execute(&self.pool).await?.rows_affected() > 0)
    }

    /// What `source` has set for `provider` of `tenant_id`, without the values.
    pub async fn stored_credentials(
        &self,
        tenant_id: &str,
        provider: &str,
        source: &CredentialsSource,
    ) -> Result<Option<StoredCredentials>, StoreError> {
        let sql = source.keyed_sql(&format!("SELECT {COLUMNS}"));
        let query = source.keyed_query(&sql, tenant_id, provider);
        let row = query.fetch_optional(&self.pool).await?;
        Ok(row
            .map(|row| StoredCredentials::from_row(&row))
            .transpose()?)
    }

    /// The sealed object and binding of `source`'s row (a tenant's has no binding).
    async fn sealed_row(
        &self,
        tenant_id: &str,
        provider: &str,
        source: &CredentialsSource,
    ) -> Result<Option<(String, String)>, StoreError> {
        let binding = match source {
            CredentialsSource::Tenant => "''",
            CredentialsSource::User(_) => "binding",
        };
        let sql = source.keyed_sql(&format!("SELECT sealed, {binding}"));
        let query = source.keyed_query(&sql, tenant_id, provider);
        let row = query.fetch_optional(&self.pool).await?;
        Ok(row
            .map(|row| <(String, String)>::from_row(&row))
            .transpose()?)
    }

    /// `source`'s credentials for `provider` of `tenant_id`, opened: for the provider
    /// that signs with them, never for showing. `None` when none are set.
    async fn open_credentials(
        &self,
        tenant_id: &str,
        provider: &str,
        source: &CredentialsSource,
    ) -> Result<Option<Credentials>, StoreError> {
        let Some((stored, binding)) = self.sealed_row(tenant_id, provider, source).await? else {
            return Ok(None);
        };
        let context = source.sealed_context(tenant_id, provider, &binding);
        let text = self.secret_key()?.open(&stored, &context)?;
        opened(source.table(), provider, &text).map(Some)
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
        // A tenant's credentials are not bound: its admins define the provider.
        let unbound = CredentialBinding::stored("");
        let source = CredentialsSource::Tenant;
        self.set_credentials(
            tenant_id,
            provider,
            &source,
            &unbound,
            credentials,
            updated_by,
            now_ms,
        )
        .await
    }

    /// Sets (or replaces) `user_id`'s own credentials for `provider` of `tenant_id`,
    /// bound to the provider's definition `binding`.
    #[allow(clippy::too_many_arguments)]
    pub async fn set_user_provider_credentials(
        &self,
        tenant_id: &str,
        user_id: &str,
        provider: &str,
        binding: &CredentialBinding,
        credentials: &Credentials,
        updated_by: Option<&str>,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let source = CredentialsSource::User(user_id.to_owned());
        self.set_credentials(
            tenant_id,
            provider,
            &source,
            binding,
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

    /// Whose credentials a call of `provider` (of `tenant_id`, defined as `binding`
    /// says) for `user` uses: `user`'s own when `users_allowed` (the provider's
    /// `user_credentials`) and they set some for this definition, none when they set
    /// some for another, the tenant's otherwise. Opens nothing: what a plan shows.
    pub async fn credentials_choice(
        &self,
        tenant_id: &str,
        provider: &str,
        binding: &CredentialBinding,
        user: Option<&str>,
        users_allowed: bool,
    ) -> Result<CredentialsChoice, StoreError> {
        let own = match (user, users_allowed) {
            (Some(user), true) => {
                let bound: Option<String> = sqlx::query_scalar(
                    "SELECT binding FROM user_provider_credentials \
                     WHERE tenant_id = $1 AND provider = $2 AND user_id = $3",
                )
                .bind(tenant_id)
                .bind(provider)
                .bind(user)
                .fetch_optional(&self.pool)
                .await?;
                Some((user, bound))
            }
            _ => None,
        };
        let tenant_set = sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM provider_credentials WHERE tenant_id = $1 AND provider = $2",
        )
        .bind(tenant_id)
        .bind(provider)
        .fetch_one(&self.pool)
        .await?
            > 0;
        let own = own.as_ref().map(|(user, bound)| (*user, bound.as_deref()));
        Ok(choose(own, binding, tenant_set))
    }

    /// The credentials a call of `provider` for `user` uses (see
    /// [`Store::credentials_choice`]), opened: for the provider that signs with them,
    /// never for showing.
    ///
    /// A create passes the job's requester (never the cluster's owner: one user's
    /// credentials are spent only on what they asked for); delete and adopt pass the
    /// user whose own made the node (recorded at create), so they use the credentials
    /// the node was made with, or the tenant's once that user's are gone.
    pub async fn credentials_for(
        &self,
        tenant_id: &str,
        provider: &str,
        binding: &CredentialBinding,
        user: Option<&str>,
        users_allowed: bool,
    ) -> Result<OpenedCredentials, StoreError> {
        let choice = self
            .credentials_choice(tenant_id, provider, binding, user, users_allowed)
            .await?;
        let source = match choice {
            CredentialsChoice::User(user) => CredentialsSource::User(user),
            CredentialsChoice::Tenant => CredentialsSource::Tenant,
            CredentialsChoice::Nothing => return Ok(OpenedCredentials::Nothing),
            CredentialsChoice::Rebound(user) => return Ok(OpenedCredentials::Rebound(user)),
        };
        let Some((stored, bound)) = self.sealed_row(tenant_id, provider, &source).await? else {
            // Removed since the choice: nothing of the user's is used.
            return Ok(OpenedCredentials::Nothing);
        };
        if let CredentialsSource::User(user) = &source {
            // Set again since the choice, for another definition.
            if bound != binding.as_str() {
                return Ok(OpenedCredentials::Rebound(user.clone()));
            }
        }
        let context = source.sealed_context(tenant_id, provider, &bound);
        let text = self.secret_key()?.open(&stored, &context)?;
        let credentials = opened(source.table(), provider, &text)?;
        Ok(OpenedCredentials::Open(credentials, source))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_users_own_are_used_only_for_the_definition_they_were_set_for() {
        let now = CredentialBinding::stored("b2");
        let user = |bound: Option<&'static str>| Some(("alice", bound));
        let cases = [
            // (the user and their row's binding, tenant's set, choice)
            (
                user(Some("b2")),
                true,
                CredentialsChoice::User("alice".into()),
            ),
            (
                user(Some("b2")),
                false,
                CredentialsChoice::User("alice".into()),
            ),
            (
                user(Some("b1")),
                true,
                CredentialsChoice::Rebound("alice".into()),
            ),
            (
                user(Some("")),
                false,
                CredentialsChoice::Rebound("alice".into()),
            ),
            (user(None), true, CredentialsChoice::Tenant),
            (user(None), false, CredentialsChoice::Nothing),
            (None, true, CredentialsChoice::Tenant),
            (None, false, CredentialsChoice::Nothing),
        ];
        for (own, tenant_set, expected) in cases {
            assert_eq!(
                choose(own, &now, tenant_set),
                expected,
                "{own:?} {tenant_set}"
            );
        }
    }
}
