//! The signed client every EC2 call goes through: whose credentials (a user's own where
//! the provider allows them and they are set for this region and endpoint, else the
//! tenant's), for which region and endpoint. A recorded node's calls sign as the create
//! that made it did ([`Ec2Provider::client_for`]).

use super::api::{QueryClient, EC2_VERSION};
use super::{state_of, Ec2NodeState, Ec2Provider};
use crate::provider::{NodeRecord, ProviderError};
use store::provider_credentials::{CredentialsSource, OpenedCredentials};

impl Ec2Provider {
    /// A client signing with the credentials [`Store::credentials_for`](store::Store::credentials_for) picks for
    /// `provider` of `tenant_id` at `region` and `endpoint` (`user`'s own where
    /// `users_allowed` and set for this region and endpoint, the tenant's otherwise),
    /// and whose they are.
    pub(super) async fn client(
        &self,
        tenant_id: &str,
        provider: &str,
        (user, users_allowed): (Option<&str>, bool),
        region: &str,
        endpoint: &str,
    ) -> Result<(QueryClient, CredentialsSource), ProviderError> {
        // A user's own open only for the region and endpoint they were set for.
        let binding = crate::provider::binding::ec2(region, endpoint);
        let found = self
            .store
            .credentials_for(tenant_id, provider, &binding, user, users_allowed)
            .await
            .map_err(|error| ProviderError::CredentialsUnusable {
                provider: provider.to_owned(),
                reason: error.to_string(),
            })?;
        let (credentials, source) = match found {
            OpenedCredentials::Open(credentials, source) => (credentials, source),
            OpenedCredentials::Nothing => {
                return Err(ProviderError::NoCredentials {
                    provider: provider.to_owned(),
                })
            }
            OpenedCredentials::Rebound(_) => {
                return Err(ProviderError::CredentialsRebound {
                    provider: provider.to_owned(),
                })
            }
        };
        let field = |name: &str| {
            credentials
                .field(name)
                .ok_or_else(|| ProviderError::CredentialsUnusable {
                    provider: provider.to_owned(),
                    reason: format!(
                        "field `{name}` is missing (EC2 needs access_key_id and \
                         secret_access_key, and session_token for temporary credentials)"
                    ),
                })
        };
        let client = QueryClient::new(
            self.http.clone(),
            endpoint,
            region,
            "ec2",
            EC2_VERSION,
            field("access_key_id")?,
            field("secret_access_key")?,
            credentials.field("session_token"),
        );
        Ok((client, source))
    }

    /// The node's state in `record`, and a client for its instance signing with the
    /// credentials of whoever made it (the tenant's, or the requester's own).
    pub(super) async fn client_for(
        &self,
        record: &NodeRecord,
    ) -> Result<(Ec2NodeState, QueryClient), ProviderError> {
        let state = state_of(record)?;
        let (client, _) = self
            .client(
                &state.tenant_id,
                &state.provider,
                (state.credentials_user.as_deref(), true),
                &state.region,
                &state.endpoint,
            )
            .await?;
        Ok((state, client))
    }
}
