//! Tenants, users, API tokens and sessions. Password fields are in requests only,
//! and their `Debug` leaves them out; no view carries a hash or a token secret except
//! [`CreatedToken`] and [`SsoCliToken`], the responses that show a new token's secret.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::states::{Role, TokenScope};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TenantView {
    pub id: String,
    pub name: String,
    /// Most live clusters the tenant may have; absent means no limit.
    pub max_clusters: Option<i64>,
    /// Most live nodes across the tenant's clusters; absent means no limit.
    pub max_nodes: Option<i64>,
    pub created_at_ms: i64,
    /// May build on the `local` provider (node steps on the server's own host): whether
    /// `provider_types` holds `local`.
    pub local_nodes: bool,
    /// The provider types the tenant may build on (`local`, `ssh-pool`, `docker`,
    /// `ec2`, `exec`), set by superadmins.
    pub provider_types: Vec<String>,
    /// Only workers started for this tenant (`corral worker --tenant NAME`) run its
    /// tasks; shared workers never do.
    #[serde(default)]
    pub dedicated_workers: bool,
    /// The tenant's cluster owners and admins may open SSH sessions to their nodes
    /// through Corral (`corral cluster ssh`); set by the tenant's admins.
    #[serde(default = "default_node_shell")]
    pub node_shell: bool,
}

fn default_node_shell() -> bool {
    true
}

/// Whether a tenant's users may open SSH sessions to their nodes through Corral.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NodeShellUpdate {
    /// Allow `corral cluster ssh` and the node shell WebSocket for the tenant's nodes.
    pub node_shell: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UserView {
    pub id: String,
    pub username: String,
    pub tenant_id: String,
    pub role: Role,
    pub created_at_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TokenView {
    pub id: String,
    pub name: String,
    pub created_at_ms: i64,
    pub last_used_at_ms: Option<i64>,
    pub expires_at_ms: Option<i64>,
    pub revoked_at_ms: Option<i64>,
    pub scope: TokenScope,
    /// Whether each use moves `expires_at_ms` later.
    pub renews_on_use: bool,
}

/// A new token with its secret: shown once.
#[derive(Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreatedToken {
    #[serde(flatten)]
    pub token: TokenView,
    /// Send as `Authorization: Bearer <secret>`. Not retrievable later.
    pub secret: String,
}

impl fmt::Debug for CreatedToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CreatedToken")
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

/// Who is signed in, and the CSRF token their forms and cookie requests send back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SessionView {
    pub user: UserView,
    /// Send as `X-CSRF-Token` on every state-changing request made with the cookie
    /// (the web forms send it as their `csrf` field).
    pub csrf_token: String,
}

#[derive(Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    pub username: String,
    pub password: String,
}

impl fmt::Debug for LoginRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoginRequest")
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TenantRequest {
    pub name: String,
    #[serde(default)]
    pub max_clusters: Option<i64>,
    #[serde(default)]
    pub max_nodes: Option<i64>,
    /// Name of a tenant whose current catalog (and the staged versions of its plugin
    /// resources) the new tenant starts with.
    #[serde(default)]
    pub seed_catalog_from: Option<String>,
    /// Allow the `local` provider, whose node steps run on the Corral server's own
    /// host (off unless a superadmin says so).
    #[serde(default)]
    pub local_nodes: bool,
    /// The provider types the tenant may build on; absent means every type but `local`
    /// (which `local_nodes` adds).
    #[serde(default)]
    pub provider_types: Option<Vec<String>>,
}

/// The provider types a tenant may build on (replaces the list).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ProviderTypesUpdate {
    pub provider_types: Vec<String>,
}

/// Whether only the tenant's own workers run its tasks.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct DedicatedWorkersUpdate {
    /// Run the tenant's tasks only on workers started with `--tenant NAME`.
    pub dedicated_workers: bool,
}

/// Which providers a tenant may use beyond those of its own catalog.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct LocalNodesUpdate {
    /// Allow the `local` provider (node steps on the Corral server's own host).
    pub local_nodes: bool,
}

/// New quotas; absent means no limit.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct QuotaUpdate {
    #[serde(default)]
    pub max_clusters: Option<i64>,
    #[serde(default)]
    pub max_nodes: Option<i64>,
}

#[derive(Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct UserRequest {
    pub username: String,
    /// At least [`MIN_PASSWORD_CHARS`] characters.
    pub password: String,
    pub role: Role,
    /// Tenant name; absent means the caller's tenant.
    #[serde(default)]
    pub tenant: Option<String>,
}

/// The shortest password accepted.
pub const MIN_PASSWORD_CHARS: usize = 12;

impl fmt::Debug for UserRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserRequest")
            .field("username", &self.username)
            .field("role", &self.role)
            .field("tenant", &self.tenant)
            .finish_non_exhaustive()
    }
}

/// An admin's change to a user; absent fields stay as they are.
#[derive(Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct UserUpdate {
    #[serde(default)]
    pub role: Option<Role>,
    /// A new password; the user's sessions end and their API tokens are revoked.
    #[serde(default)]
    pub password: Option<String>,
    /// Your current password: required when `password` changes your own.
    #[serde(default)]
    pub current_password: Option<String>,
}

impl fmt::Debug for UserUpdate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserUpdate")
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

/// A superadmin moving a user to another tenant. The user's API tokens are revoked
/// and their sessions end; the clusters they own stay with the tenant they leave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct UserMove {
    /// The name of the tenant the user moves to.
    pub tenant: String,
}

/// A user changing their own password.
#[derive(Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PasswordChange {
    pub current_password: String,
    pub new_password: String,
}

impl fmt::Debug for PasswordChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PasswordChange(***)")
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TokenRequest {
    /// What the token is for, e.g. `ci`.
    pub name: String,
    /// Lifetime in seconds; absent means until revoked.
    #[serde(default)]
    pub expires_in_seconds: Option<u64>,
    /// With `expires_in_seconds`: the lifetime restarts at each use, so a token in
    /// use stays valid and a forgotten one expires (what `corral login` makes).
    #[serde(default)]
    pub renew_on_use: bool,
    /// `full` (the default) or `read-only` (any change is refused).
    #[serde(default)]
    pub scope: TokenScope,
}

/// What `corral login --sso` trades for an API token at `/auth/sso/cli-token`: the
/// one-time code the browser brought back and the verifier of the challenge it started
/// with.
#[derive(Clone, Serialize, Deserialize)]
pub struct SsoCliTokenRequest {
    pub code: String,
    pub code_verifier: String,
    /// The new token's name; absent means a default one.
    #[serde(default)]
    pub token_name: Option<String>,
}

impl fmt::Debug for SsoCliTokenRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SsoCliTokenRequest")
            .field("token_name", &self.token_name)
            .finish_non_exhaustive()
    }
}

/// The API token single sign-on made for the CLI: shown once.
#[derive(Clone, Serialize, Deserialize)]
pub struct SsoCliToken {
    /// Who signed in.
    pub username: String,
    pub token_id: String,
    /// Send as `Authorization: Bearer <token>`. Not retrievable later.
    pub token: String,
}

impl fmt::Debug for SsoCliToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SsoCliToken")
            .field("username", &self.username)
            .field("token_id", &self.token_id)
            .finish_non_exhaustive()
    }
}
