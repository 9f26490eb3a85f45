//! The catalog an admin edits (entities and their history), plugin resources, the
//! `ssh-pool` provider's hosts, the audit log and the admin overview's activity.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::audit::AuditAction;
use crate::error::Problem;
use crate::layout::TaskAction;
use crate::states::PoolHostState;

/// A catalog entity's current body with its version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EntityView {
    pub kind: String,
    pub name: String,
    pub version: i64,
    /// Coopr-format JSON of the entity.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub body: Value,
    pub author_id: Option<String>,
    pub created_at_ms: i64,
}

/// One revision in an entity's history; `body` is absent for a deletion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RevisionView {
    pub version: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub body: Option<Value>,
    pub author_id: Option<String>,
    pub created_at_ms: i64,
}

/// What an import found, and whether it was applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ImportReport {
    /// True when the catalog was replaced (never on a dry run or with errors).
    pub applied: bool,
    pub errors: Vec<Problem>,
    pub warnings: Vec<Problem>,
    /// Entities per kind in the imported bundle.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub counts: Map<String, Value>,
}

/// One stored version of a plugin resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ResourceView {
    /// `scripts`, `archives` or `files`.
    pub kind: String,
    pub name: String,
    pub version: i64,
    pub sha256: String,
    pub size_bytes: i64,
    pub staged: bool,
    pub created_at_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditView {
    pub id: String,
    pub tenant_id: String,
    pub actor: String,
    /// What was done (an [`AuditAction`]'s name), as stored: entries older versions
    /// wrote may carry names no version writes now, and still show.
    pub action: String,
    pub target_kind: String,
    pub target: String,
    pub address: Option<String>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub before: Option<Value>,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub after: Option<Value>,
    pub at_ms: i64,
}

impl AuditView {
    /// The entry's action, when it is one this version knows (`None` for a name only
    /// older versions wrote): what to compare with.
    pub fn known_action(&self) -> Option<AuditAction> {
        self.action.parse().ok()
    }
}

/// A failed task, for "needs attention".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FailedTaskView {
    pub job_id: String,
    pub cluster_id: String,
    pub node: i64,
    pub service: Option<String>,
    pub action: TaskAction,
    pub error: Option<String>,
    pub finished_at_ms: Option<i64>,
}

/// What the tenant's workers are doing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ActivityView {
    /// `(state, count)` for every job state the tenant has.
    pub jobs_by_state: Vec<(crate::states::JobState, i64)>,
    pub running_tasks: i64,
    /// Distinct workers (lease owners) running the tenant's tasks now.
    pub busy_workers: i64,
    /// The latest failed tasks, newest first (at most ten).
    pub failed_tasks: Vec<FailedTaskView>,
}

/// A cluster named in the overview: where to go and what state it is in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClusterRef {
    pub id: String,
    pub name: String,
    pub state: crate::states::ClusterState,
}

/// The administered tenant at a glance: what it runs, what it holds, what needs attention.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OverviewView {
    pub tenant: crate::accounts::TenantView,
    /// Live clusters per state, every live state listed (zeros too), in state order.
    pub clusters_by_state: Vec<(crate::states::ClusterState, u64)>,
    /// Nodes of live clusters.
    pub nodes: u64,
    /// Nodes of active clusters.
    pub active_nodes: u64,
    /// Entities per catalog kind, by the kind's key (`providers`, `services`…).
    pub catalog: Vec<(String, u64)>,
    pub users: u64,
    /// Clusters a job is changing now.
    pub busy: Vec<ClusterRef>,
    /// Clusters in state `failed` (their last job failed).
    pub failed: Vec<ClusterRef>,
    pub activity: ActivityView,
}

/// A host to register with the `ssh-pool` provider.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PoolHostRequest {
    /// Unique in the tenant: letters, digits, `.`, `_`, `-`.
    pub name: String,
    /// Address or DNS name the workers connect to.
    pub host: String,
    /// SSH port, 1-65535 (default 22).
    #[serde(default = "default_ssh_port")]
    pub port: i64,
    /// The account Corral logs in as.
    pub user: String,
    /// The host's public host key in OpenSSH form (`ssh-ed25519 AAAA…`, as in
    /// `/etc/ssh/ssh_host_ed25519_key.pub`; a `ssh-keyscan` line works too).
    pub host_key: String,
    /// Tenant name; absent means the caller's tenant (others: superadmins only).
    #[serde(default)]
    pub tenant: Option<String>,
}

fn default_ssh_port() -> i64 {
    22
}

/// A change to a host; absent fields stay as they are. While the host is lent to a node
/// only its name may change.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PoolHostUpdate {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub host: Option<String>,
    #[serde(default)]
    pub port: Option<i64>,
    #[serde(default)]
    pub user: Option<String>,
    #[serde(default)]
    pub host_key: Option<String>,
}

/// The node a host is lent to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CheckoutView {
    /// `<cluster id>-<node number>`.
    pub node: String,
    pub cluster_id: Option<String>,
    pub cluster_name: Option<String>,
    pub node_number: Option<u32>,
    pub since_ms: Option<i64>,
}

/// A registered host as admins see it. The client private key is never part of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PoolHostView {
    pub id: String,
    pub tenant_id: String,
    pub name: String,
    pub host: String,
    pub port: u16,
    pub user: String,
    /// The pinned host key, OpenSSH form.
    pub host_key: String,
    /// `SHA256:…` of the pinned host key.
    pub host_key_fingerprint: String,
    /// Put this line in the host's `~USER/.ssh/authorized_keys`.
    pub client_public_key: String,
    pub state: PoolHostState,
    pub checked_out: Option<CheckoutView>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}
