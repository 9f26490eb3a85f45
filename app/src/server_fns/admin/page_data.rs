//! What the admin console's server functions hand to its pages: catalog entities
//! with their history, tenants, users, tokens, audit entries and the overview's
//! counts. Secrets never appear here, except a new token's secret, shown once.

use api_types::{Role, TenantView, TokenView};
pub use domain::catalog::EntityKind;
use serde::{Deserialize, Serialize};

/// How the console names and addresses each catalog kind.
pub trait ConsoleKind: Sized {
    /// The console's URL segment: `/admin/<path>`.
    fn path(self) -> &'static str;
    fn title(self) -> &'static str;
    fn singular(self) -> &'static str;
    /// From the catalog key or the URL segment.
    fn parse(raw: &str) -> Option<Self>;
}

impl ConsoleKind for EntityKind {
    fn path(self) -> &'static str {
        match self {
            EntityKind::Provider => "providers",
            EntityKind::HardwareType => "hardware",
            EntityKind::ImageType => "images",
            EntityKind::Service => "services",
            EntityKind::ClusterTemplate => "templates",
            EntityKind::PartialTemplate => "partials",
        }
    }

    fn title(self) -> &'static str {
        match self {
            EntityKind::Provider => "Providers",
            EntityKind::HardwareType => "Hardware types",
            EntityKind::ImageType => "Image types",
            EntityKind::Service => "Services",
            EntityKind::ClusterTemplate => "Cluster templates",
            EntityKind::PartialTemplate => "Partial templates",
        }
    }

    fn singular(self) -> &'static str {
        match self {
            EntityKind::Provider => "provider",
            EntityKind::HardwareType => "hardware type",
            EntityKind::ImageType => "image type",
            EntityKind::Service => "service",
            EntityKind::ClusterTemplate => "cluster template",
            EntityKind::PartialTemplate => "partial template",
        }
    }

    fn parse(raw: &str) -> Option<EntityKind> {
        EntityKind::ALL
            .into_iter()
            .find(|kind| kind.key() == raw || kind.path() == raw)
    }
}

/// One entity in a list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntityRow {
    pub name: String,
    pub description: String,
    /// What tells entities of this kind apart at a glance (provider type, flavors,
    /// dependencies, size bounds).
    pub summary: String,
    pub version: i64,
    pub updated_at_ms: i64,
}

/// One revision of an entity; `body` is pretty JSON, `None` for a deletion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevisionRow {
    pub version: i64,
    pub author: Option<String>,
    pub at_ms: i64,
    pub body: Option<String>,
}

/// An entity's page: its current body and every revision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntityPage {
    pub kind: EntityKind,
    pub name: String,
    pub description: String,
    pub version: i64,
    /// The whole body, pretty JSON.
    pub body: String,
    /// The body without `name` and `description` (what the form's JSON field edits).
    pub rest: String,
    /// Oldest first.
    pub history: Vec<RevisionRow>,
    /// For a provider: what the tenant has set as its credentials (names only). Read
    /// with the page, so the provider's panel needs no resource of its own (one made
    /// inside the page's suspended view would not hydrate).
    pub credentials: Option<api_types::ProviderCredentialsView>,
}

/// The names in the tenant's catalog, per kind, for pickers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogNames {
    pub providers: Vec<String>,
    pub hardware: Vec<String>,
    pub images: Vec<String>,
    pub services: Vec<String>,
    pub templates: Vec<String>,
    pub partials: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TenantRow {
    pub tenant: TenantView,
    /// Names of the tenant's live clusters: while there are any it cannot be deleted.
    pub live_clusters: Vec<String>,
    /// Usernames of the tenant's users (they go with it when it is deleted).
    pub users: Vec<String>,
    /// The default tenant, which is never deleted.
    pub is_default: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserRow {
    pub id: String,
    pub username: String,
    pub tenant: String,
    pub role: Role,
    pub created_at_ms: i64,
}

/// A user's admin page: who they are, and what the viewer may do to them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserDetail {
    pub user: UserRow,
    /// The viewer themself: their own role and account cannot be changed here.
    pub is_me: bool,
    /// Whether the viewer may grant (and take away) superadmin.
    pub viewer_is_superadmin: bool,
    /// The user's API tokens, when the viewer may change the account (never secrets).
    pub tokens: Vec<TokenView>,
    /// The live clusters the user owns, when the viewer may change the account: a
    /// delete or a move leaves them with the tenant, which the confirmation says.
    pub owned_clusters: Vec<String>,
    /// The tenants the user may be moved to, by name: every other tenant for a
    /// superadmin viewing a tenant's user; empty when the user cannot be moved.
    pub move_targets: Vec<String>,
    /// Whether the user is the only tenant admin of their tenant (so that, once they
    /// are gone, only superadmins administer it).
    pub only_tenant_admin: bool,
}

impl UserDetail {
    /// Whether the viewer may change this account (its role, password, tokens) and
    /// delete it: not their own, and a superadmin's only as a superadmin.
    pub fn may_change(&self) -> bool {
        !self.is_me && (self.user.role != Role::Superadmin || self.viewer_is_superadmin)
    }
}

/// A token just created: the only time its secret is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewToken {
    pub name: String,
    pub secret: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRow {
    pub id: String,
    pub tenant_id: String,
    pub actor: String,
    pub action: String,
    pub target: String,
    pub address: Option<String>,
    pub at_ms: i64,
    /// Whether before/after bodies were recorded.
    pub has_change: bool,
    /// A browser terminal session's end whose session was recorded (its recording is
    /// at `/api/v1/audit/{id}/recording`).
    #[serde(default)]
    pub recorded: bool,
}

/// The admin scope: the tenant being administered, and (superadmins) the others.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdminScope {
    pub tenant_id: String,
    pub tenant_name: String,
    /// `(id, name)` of every tenant, for a superadmin's switcher; empty otherwise.
    pub tenants: Vec<(String, String)>,
}

/// What an import found; `applied` is false on a dry run or with errors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportOutcome {
    pub applied: bool,
    /// `(path, message)`.
    pub errors: Vec<(String, String)>,
    pub warnings: Vec<(String, String)>,
    pub counts: Vec<(String, u64)>,
}
