//! What service calls return: plain serializable views of stored rows, with no
//! secrets (no password hashes, no token secrets, no node keys) and with JSON
//! columns parsed, so the API and the pages show exactly these.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::queue::{Event, Job, TaskRecord};
use crate::resources::ResourceVersion;
use crate::store::audit::AuditEntry;
use crate::store::clusters::nodes::Node;
use crate::store::clusters::Cluster;
use crate::store::tenants::Tenant;
use crate::store::tokens::{ApiToken, TokenScope};
use crate::store::users::User;

fn parse_json(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or(Value::Null)
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TenantView {
    pub id: String,
    pub name: String,
    /// Most live clusters the tenant may have; absent means no limit.
    pub max_clusters: Option<i64>,
    /// Most live nodes across the tenant's clusters; absent means no limit.
    pub max_nodes: Option<i64>,
    pub created_at_ms: i64,
    /// May build on the `local` provider (node steps on the server's own host).
    pub local_nodes: bool,
}

impl From<Tenant> for TenantView {
    fn from(tenant: Tenant) -> Self {
        Self {
            id: tenant.id,
            name: tenant.name,
            max_clusters: tenant.max_clusters,
            max_nodes: tenant.max_nodes,
            created_at_ms: tenant.created_at_ms,
            local_nodes: tenant.local_nodes,
        }
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct UserView {
    pub id: String,
    pub username: String,
    pub tenant_id: String,
    /// `superadmin`, `tenant-admin` or `user`.
    pub role: String,
    pub created_at_ms: i64,
}

impl From<User> for UserView {
    fn from(user: User) -> Self {
        Self {
            id: user.id,
            username: user.username,
            tenant_id: user.tenant_id,
            role: user.role.as_str().to_owned(),
            created_at_ms: user.created_at_ms,
        }
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
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

impl From<ApiToken> for TokenView {
    fn from(token: ApiToken) -> Self {
        Self {
            id: token.id,
            name: token.name,
            created_at_ms: token.created_at_ms,
            last_used_at_ms: token.last_used_at_ms,
            expires_at_ms: token.expires_at_ms,
            revoked_at_ms: token.revoked_at_ms,
            scope: token.scope,
            renews_on_use: token.renew_ms.is_some(),
        }
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ClusterView {
    pub id: String,
    pub name: String,
    /// creating, active, updating, failed, deleting, deleted.
    pub state: String,
    pub template: String,
    pub template_version: i64,
    pub provider: String,
    pub owner_id: Option<String>,
    pub size: usize,
    /// The solved layout: nodes with their hardware, image and services.
    #[schema(value_type = Object)]
    pub layout: Value,
    #[schema(value_type = Object)]
    pub config: Value,
    pub lease_expires_ms: Option<i64>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

impl From<Cluster> for ClusterView {
    fn from(cluster: Cluster) -> Self {
        let layout = parse_json(&cluster.layout_json);
        let size = layout
            .get("nodes")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        Self {
            id: cluster.id,
            name: cluster.name,
            state: cluster.state,
            template: cluster.template_name,
            template_version: cluster.template_version,
            provider: cluster.provider,
            owner_id: cluster.owner_id,
            size,
            layout,
            config: parse_json(&cluster.config_json),
            lease_expires_ms: cluster.lease_expires_ms,
            created_at_ms: cluster.created_at_ms,
            updated_at_ms: cluster.updated_at_ms,
        }
    }
}

/// A node as users see it: where it is and what runs there (never its keys).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct NodeView {
    pub id: String,
    pub number: i64,
    pub hostname: Option<String>,
    /// The address services and SSH reach the node at, once it exists.
    pub address: Option<String>,
    pub hardwaretype: String,
    pub imagetype: String,
    pub services: Vec<String>,
    pub state: String,
}

impl From<Node> for NodeView {
    fn from(node: Node) -> Self {
        let address = node
            .provider_json
            .as_deref()
            .map(parse_json)
            .and_then(|record| {
                record
                    .get("host")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            });
        let services = serde_json::from_str(&node.services_json).unwrap_or_default();
        Self {
            id: node.id,
            number: node.number,
            hostname: node.hostname,
            address,
            hardwaretype: node.hardwaretype,
            imagetype: node.imagetype,
            services,
            state: node.state,
        }
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ClusterDetail {
    #[serde(flatten)]
    pub cluster: ClusterView,
    pub nodes: Vec<NodeView>,
    /// The cluster's jobs, newest first.
    pub jobs: Vec<JobView>,
    /// The template's and services' links, macros expanded against the live nodes
    /// (links naming a node without an address yet are left out).
    pub links: Vec<crate::links::ClusterLink>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct JobView {
    pub id: String,
    pub cluster_id: String,
    pub operation: String,
    /// queued, running, failed, succeeded, cancelling, cancelled.
    pub state: String,
    pub tasks_total: i64,
    pub tasks_succeeded: i64,
    pub created_at_ms: i64,
    pub started_at_ms: Option<i64>,
    pub finished_at_ms: Option<i64>,
    /// For a failed job: which step on which node failed, and why.
    pub error: Option<String>,
    /// A forced delete: stop and remove steps that failed were passed over.
    pub forced: bool,
}

impl From<Job> for JobView {
    fn from(job: Job) -> Self {
        Self {
            id: job.id,
            cluster_id: job.cluster_id,
            operation: job.operation,
            state: job.state.as_str().to_owned(),
            tasks_total: job.tasks_total,
            tasks_succeeded: job.tasks_succeeded,
            created_at_ms: job.created_at_ms,
            started_at_ms: job.started_at_ms,
            finished_at_ms: job.finished_at_ms,
            error: job.error,
            forced: job.forced,
        }
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TaskView {
    pub id: String,
    pub number: u32,
    pub node: u32,
    pub service: Option<String>,
    pub action: String,
    pub state: String,
    pub attempts: i64,
    pub max_attempts: i64,
    pub started_at_ms: Option<i64>,
    pub finished_at_ms: Option<i64>,
    pub error: Option<String>,
}

impl From<TaskRecord> for TaskView {
    fn from(task: TaskRecord) -> Self {
        Self {
            id: task.id,
            number: task.number.0,
            node: task.node,
            service: task.service.map(|service| service.to_string()),
            action: task.action.to_string(),
            state: task.state.as_str().to_owned(),
            attempts: task.attempts,
            max_attempts: task.max_attempts,
            started_at_ms: task.started_at_ms,
            finished_at_ms: task.finished_at_ms,
            error: task.error,
        }
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EventView {
    /// Pass the last id seen as `after` to read on.
    pub id: i64,
    pub task_id: Option<String>,
    pub attempt: Option<i64>,
    pub at_ms: i64,
    /// `output` (with `stream` stdout or stderr) or `state`.
    pub kind: String,
    pub stream: Option<String>,
    pub data: String,
}

impl From<Event> for EventView {
    fn from(event: Event) -> Self {
        Self {
            id: event.id,
            task_id: event.task_id,
            attempt: event.attempt,
            at_ms: event.at_ms,
            kind: event.kind,
            stream: event.stream,
            data: event.data,
        }
    }
}

/// A dry run of a create or change: the layout it leads to and the tasks it runs.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PlanView {
    #[schema(value_type = Object)]
    pub from: Value,
    #[schema(value_type = Object)]
    pub to: Value,
    pub tasks: usize,
    /// Each task as `node-action-service`, in plan order.
    pub steps: Vec<String>,
    /// The task DAG: `{"tasks": [{"id", "node", "service", "action", "after", "stage"}]}`.
    #[schema(value_type = Object)]
    pub dag: Value,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SubmittedJob {
    pub cluster: ClusterView,
    pub job_id: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ResourceView {
    pub kind: String,
    pub name: String,
    pub version: i64,
    pub sha256: String,
    pub size_bytes: i64,
    pub staged: bool,
    pub created_at_ms: i64,
}

impl From<ResourceVersion> for ResourceView {
    fn from(resource: ResourceVersion) -> Self {
        Self {
            kind: resource.kind.as_str().to_owned(),
            name: resource.name,
            version: resource.version,
            sha256: resource.sha256,
            size_bytes: resource.size_bytes,
            staged: resource.staged,
            created_at_ms: resource.created_at_ms,
        }
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AuditView {
    pub id: String,
    pub tenant_id: String,
    pub actor: String,
    pub action: String,
    pub target_kind: String,
    pub target: String,
    pub address: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub before: Option<Value>,
    #[schema(value_type = Option<Object>)]
    pub after: Option<Value>,
    pub at_ms: i64,
}

impl From<AuditEntry> for AuditView {
    fn from(entry: AuditEntry) -> Self {
        Self {
            id: entry.id,
            tenant_id: entry.tenant_id,
            actor: entry.actor_name,
            action: entry.action,
            target_kind: entry.target_kind,
            target: entry.target,
            address: entry.address,
            before: entry.before_json.as_deref().map(parse_json),
            after: entry.after_json.as_deref().map(parse_json),
            at_ms: entry.at_ms,
        }
    }
}

/// A catalog entity's current body with its version.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EntityView {
    pub kind: String,
    pub name: String,
    pub version: i64,
    /// Coopr-format JSON of the entity.
    #[schema(value_type = Object)]
    pub body: Value,
    pub author_id: Option<String>,
    pub created_at_ms: i64,
}

/// One revision in an entity's history; `body` is absent for a deletion.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RevisionView {
    pub version: i64,
    #[schema(value_type = Option<Object>)]
    pub body: Option<Value>,
    pub author_id: Option<String>,
    pub created_at_ms: i64,
}
