//! Clusters and their nodes: what a read shows, what a create or a change takes, and
//! what a dry run would do.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::jobs::JobView;
use crate::layout::{LayoutView, PlanDag};
use crate::operation::Operation;
use crate::states::{ClusterState, NodePresence, NodeState, ServiceHealth};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClusterView {
    pub id: String,
    pub name: String,
    pub state: ClusterState,
    pub template: String,
    pub template_version: i64,
    pub provider: String,
    pub owner_id: Option<String>,
    /// The owner's username, when the owner still exists.
    #[serde(default)]
    pub owner: Option<String>,
    pub size: usize,
    /// The solved layout: nodes with their hardware, image and services.
    pub layout: LayoutView,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub config: Value,
    pub lease_expires_ms: Option<i64>,
    /// Where one extension of the lease by a step of the template takes it; absent
    /// when it cannot be extended (no lease, or already as long as allowed).
    #[serde(default)]
    pub lease_next_end_ms: Option<i64>,
    /// The latest the template lets the lease end; absent means no limit.
    #[serde(default)]
    pub lease_latest_end_ms: Option<i64>,
    /// Set while the cluster's services are stopped because its lease ended (the
    /// template's `grace`): when it is deleted unless the lease is extended first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_deletes_at_ms: Option<i64>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    /// The catalog entities the cluster uses whose definitions moved on since it was
    /// built (or last upgraded): empty when it runs the current ones. An `upgrade`
    /// change moves it to them.
    #[serde(default)]
    pub catalog_behind: Vec<CatalogChange>,
    /// The template's current revision, when the cluster is behind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_current_version: Option<i64>,
    /// What the cluster costs per hour and has cost (from the cost ledger).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::cost::ClusterCost>,
}

/// One page of the tenant's live clusters, expiring first (the soonest lease deadline,
/// then those without a lease; by name within). `next` is the cursor of the page after
/// this one: pass it back as `cursor` until it is absent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClusterList {
    pub items: Vec<ClusterView>,
    /// How many clusters the whole (filtered) list has.
    pub total: u64,
    pub offset: u32,
    pub limit: u32,
    /// The cursor of the next page; absent on the last one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    /// What the whole (filtered) list's clusters cost together; absent when none has
    /// a price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::cost::ClusterCost>,
    /// The templates of the tenant's live clusters (what a filter can pick).
    #[serde(default)]
    pub templates: Vec<String>,
    /// The states of the tenant's live clusters (what a filter can pick).
    #[serde(default)]
    pub states: Vec<ClusterState>,
}

impl ClusterView {
    /// The time left on the lease in words, for lists: "expires in 3 h", "stopped;
    /// deleted in 40 min", "expired"; `None` without a lease.
    pub fn lease_left(&self, now_ms: i64) -> Option<String> {
        if let Some(deletes_at) = self.lease_deletes_at_ms {
            return Some(format!(
                "stopped; deleted in {}",
                duration_words(deletes_at - now_ms)
            ));
        }
        let expires = self.lease_expires_ms?;
        if expires <= now_ms {
            return Some("expired".to_owned());
        }
        Some(format!("expires in {}", duration_words(expires - now_ms)))
    }

    /// When the lease next matters, for sorting lists soonest first: the deletion of
    /// a lease-stopped cluster, else its lease's end; `None` (last) without a lease.
    pub fn lease_deadline_ms(&self) -> Option<i64> {
        self.lease_deletes_at_ms.or(self.lease_expires_ms)
    }

    /// Says how the cluster is behind the catalog, e.g. "built from web-stack r3; r5 is
    /// current: app, lb changed"; `None` when it runs the current definitions.
    pub fn catalog_behind_summary(&self) -> Option<String> {
        if self.catalog_behind.is_empty() {
            return None;
        }
        let mut changed = Vec::new();
        let mut removed = Vec::new();
        for entity in &self.catalog_behind {
            match entity.change {
                DefinitionChange::Changed => changed.push(entity.name.as_str()),
                DefinitionChange::Removed => removed.push(entity.name.as_str()),
            }
        }
        let mut what = Vec::new();
        if !changed.is_empty() {
            what.push(format!("{} changed", changed.join(", ")));
        }
        if !removed.is_empty() {
            what.push(format!("{} removed", removed.join(", ")));
        }
        let current = match self.template_current_version {
            Some(version) if version != self.template_version => format!("r{version} is current"),
            _ => "the catalog moved on".to_owned(),
        };
        Some(format!(
            "built from {} r{}; {current}: {}",
            self.template,
            self.template_version,
            what.join("; ")
        ))
    }
}

/// One catalog entity whose definition differs from a cluster's snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CatalogChange {
    /// The entity's kind as a catalog bundle names it: `services`, `clustertemplates`…
    pub kind: String,
    pub name: String,
    pub change: DefinitionChange,
}

/// How an entity's current definition differs from a cluster's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum DefinitionChange {
    Changed,
    /// The catalog no longer has it.
    Removed,
}

impl DefinitionChange {
    pub fn as_str(self) -> &'static str {
        match self {
            DefinitionChange::Changed => "changed",
            DefinitionChange::Removed => "removed",
        }
    }
}

/// What an upgrade (or its rollback) changes and runs, beside its plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UpgradePlanView {
    /// Each entity whose definition changes, before (the cluster's) and after.
    pub changes: Vec<DefinitionDiff>,
    /// What each changed service runs on its nodes.
    pub services: Vec<ServiceUpgradeView>,
    /// Services configured again at the end: they depend on a restarted service.
    pub reconfigure: Vec<String>,
    /// The node numbers of each batch, in order: a batch starts when the one before
    /// has finished, its services healthy again.
    pub batches: Vec<Vec<u32>>,
}

impl UpgradePlanView {
    /// The batches as text: node numbers joined by `within`, batches by `between`.
    pub fn batches_text(&self, within: &str, between: &str) -> String {
        self.batches
            .iter()
            .map(|batch| {
                batch
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(within)
            })
            .collect::<Vec<_>>()
            .join(between)
    }
}

/// One entity's definitions before and after an upgrade (Coopr JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DefinitionDiff {
    pub kind: String,
    pub name: String,
    pub change: DefinitionChange,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub before: Value,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub after: Option<Value>,
}

/// What an upgrade runs for one service.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ServiceUpgradeView {
    pub service: String,
    pub runs: UpgradeRun,
}

/// The steps an upgrade runs for a changed service on each of its nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum UpgradeRun {
    /// Stop (old definition), start: its start or stop changed.
    Restart,
    /// Stop, configure, start: its configure changed.
    Reconfigure,
    /// Stop, install, configure, start: its install changed.
    Reinstall,
}

impl UpgradeRun {
    pub fn as_str(self) -> &'static str {
        match self {
            UpgradeRun::Restart => "restart",
            UpgradeRun::Reconfigure => "reconfigure",
            UpgradeRun::Reinstall => "reinstall",
        }
    }
}

/// A node as users see it: where it is and what runs there (never its keys).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NodeView {
    pub id: String,
    pub number: i64,
    pub hostname: Option<String>,
    /// The address the node's services listen on and its cluster reaches it at, once it
    /// exists (for `local` nodes also where SSH reaches it).
    pub address: Option<String>,
    pub hardwaretype: String,
    pub imagetype: String,
    pub services: Vec<String>,
    pub state: NodeState,
    /// Each service's health, in the order of `services`.
    #[serde(default)]
    pub health: Vec<ServiceHealthView>,
    /// What the node's provider last said of its machine; absent until the monitor
    /// first asked (it asks about the nodes of active clusters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<MachineView>,
}

/// What a node's provider said of its machine, and since when it says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MachineView {
    pub presence: NodePresence,
    /// When the provider first answered this (Unix ms); the monitor asks again every
    /// few seconds (healing clusters) or every half minute (the others).
    pub since_ms: i64,
}

/// One service's health on one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ServiceHealthView {
    pub service: String,
    pub health: ServiceHealth,
    /// When it was last checked (Unix ms); none before the first check, or when the
    /// service declares no check.
    pub checked_at_ms: Option<i64>,
    /// Why it is down (the check's last output), or why it is unknown.
    pub detail: Option<String>,
}

/// One of a cluster's links, its macros expanded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClusterLink {
    pub label: String,
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClusterDetail {
    #[serde(flatten)]
    pub cluster: ClusterView,
    pub nodes: Vec<NodeView>,
    /// The cluster's jobs, newest first.
    pub jobs: Vec<JobView>,
    /// The template's and services' links, macros expanded against the live nodes
    /// (links naming a node without an address yet are left out).
    pub links: Vec<ClusterLink>,
    /// The cluster's approval requests, newest first: what waits, and why a request
    /// was denied or expired.
    #[serde(default)]
    pub approvals: Vec<crate::ApprovalView>,
    /// The last thing healing did on the cluster, or why it declined (too many nodes
    /// unhealthy at once, nodes that keep data); absent when it never acted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heal_note: Option<HealNote>,
    /// Whether Corral replaces the cluster's dead nodes by itself.
    #[serde(default)]
    pub healing: HealingView,
    /// Pinned by its owner: a rollout of its template's new catalog revision lists it
    /// and passes it over (it stays on its revision until unpinned and upgraded).
    #[serde(default)]
    pub pinned: bool,
}

/// Pin or unpin a cluster (`PUT /clusters/{id}/pin`); the answer is the same shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PinChoice {
    pub pinned: bool,
}

/// Whether a cluster heals, and who decided.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HealingView {
    pub enabled: bool,
    /// The owner's choice for this cluster; absent when the template's policy decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_choice: Option<bool>,
}

/// The owner's healing choice for a cluster: on, off, or (`null`) the template's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct HealingChoice {
    pub enabled: Option<bool>,
}

/// What healing last did or declined to do on a cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HealNote {
    pub text: String,
    /// When healing first said so.
    pub at_ms: i64,
}

/// The most tasks a dry run sends one by one with their dependencies (the job page
/// draws graphs up to the same size). A larger plan's answer counts its tasks by step
/// instead: its dependencies grow with the square of its nodes (a 2,000-node plan's
/// graph was 225 MB of JSON).
pub const PLAN_GRAPH_MAX_TASKS: usize = 150;

/// A dry run of a create or change: the layout it leads to and the tasks it runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PlanView {
    /// The layout before: the cluster's committed one (empty for a create).
    pub from: LayoutView,
    /// The layout the plan leads to.
    pub to: LayoutView,
    pub tasks: usize,
    /// The plan's steps (an action, with its service when it has one) in plan order,
    /// each with how many tasks it has. Always there, whatever the plan's size.
    pub step_counts: Vec<StepCount>,
    /// Every task and its dependencies, for plans of up to [`PLAN_GRAPH_MAX_TASKS`]
    /// tasks; absent for larger plans, which `step_counts` summarises.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph: Option<PlanGraph>,
    /// Whose credentials the plan's new machines are made with (the requester's own,
    /// or the tenant's; never another user's), for providers that take credentials;
    /// absent when it makes none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
    /// For an upgrade and its rollback: what changes, what runs, in which batches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade: Option<UpgradePlanView>,
    /// What to know before going ahead (data a node replacement loses).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// For `sync-keys`: the users' keys the nodes will have (every other key Corral put
    /// there goes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<crate::user_keys::ClusterKeyView>>,
    /// The estimated cost of the cluster after the operation (and, for a change, the
    /// difference it makes), at its hardware types' prices on its provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::cost::CostEstimate>,
}

/// One step of a plan and how many tasks it has (`install` of `web` on 40 nodes: 40).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StepCount {
    /// The action, then the service when it has one: `create`, `install web`.
    pub step: String,
    pub tasks: usize,
}

/// A small plan's every task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PlanGraph {
    /// Each task as `node-action-service`, in plan order.
    pub steps: Vec<String>,
    /// The task DAG: every task with the ones it comes after.
    pub dag: PlanDag,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SubmittedJob {
    pub cluster: ClusterView,
    /// Empty when the operation waits for an approval (`approval`).
    pub job_id: String,
    /// The approval request the operation waits on instead of running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<crate::ApprovalView>,
}

/// What a user asks for.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ClusterCreateRequest {
    pub name: String,
    pub template: String,
    pub size: u32,
    /// Services or aliases; absent means the template's defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub services: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardwaretype: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imagetype: Option<String>,
    /// Merged over the template's default config, key by key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = ConfigSchema))]
    pub config: Option<Map<String, Value>>,
    /// Values of the template's parameters by name (JSON values, or text read as the
    /// parameter's type); checked against the template, kept in the config under
    /// `parameters`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = ConfigSchema))]
    pub parameters: Option<Map<String, Value>>,
}

/// A change to a running cluster, as the API takes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "operation", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ClusterChangeRequest {
    #[cfg_attr(feature = "openapi", schema(title = "AddServicesChange"))]
    AddServices { services: Vec<String> },
    #[cfg_attr(feature = "openapi", schema(title = "AddNodesChange"))]
    AddNodes { count: u32 },
    /// Scale in: `count` nodes the solver picks, or the `nodes` named (by number);
    /// with both, `count` must be the number of nodes named.
    #[cfg_attr(feature = "openapi", schema(title = "RemoveNodesChange"))]
    RemoveNodes {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        count: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nodes: Option<Vec<u32>>,
    },
    /// Stop and remove services (or aliases) on every node that runs them.
    #[cfg_attr(feature = "openapi", schema(title = "RemoveServicesChange"))]
    RemoveServices { services: Vec<String> },
    #[cfg_attr(feature = "openapi", schema(title = "ReconfigureChange"))]
    Reconfigure {
        #[serde(default)]
        restart: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(value_type = ConfigSchema))]
        config: Option<Map<String, Value>>,
    },
    #[cfg_attr(feature = "openapi", schema(title = "StartChange"))]
    Start {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        services: Option<Vec<String>>,
    },
    #[cfg_attr(feature = "openapi", schema(title = "StopChange"))]
    Stop {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        services: Option<Vec<String>>,
    },
    #[cfg_attr(feature = "openapi", schema(title = "RestartChange"))]
    Restart {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        services: Option<Vec<String>>,
    },
    #[cfg_attr(feature = "openapi", schema(title = "RollbackChange"))]
    Rollback { job_id: String },
    /// Move the cluster to the catalog's current definitions of its template and the
    /// entities it uses; at most `max_unavailable` nodes of a service (default 1) are
    /// upgraded at once.
    #[cfg_attr(feature = "openapi", schema(title = "UpgradeChange"))]
    Upgrade {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_unavailable: Option<u32>,
    },
    /// Give each named node (by number) a successor of the same hardware and image
    /// type with the same services, configure the cluster around it, then delete the
    /// old node. A node with a stateful service is only replaced with `force` (its
    /// data is lost).
    #[cfg_attr(feature = "openapi", schema(title = "ReplaceNodesChange"))]
    ReplaceNodes {
        nodes: Vec<u32>,
        #[serde(default)]
        force: bool,
    },
    /// Put the current users' keys (the owner's, and the tenant admins' where the
    /// tenant says so) on every node, replacing those Corral put there before.
    #[cfg_attr(feature = "openapi", schema(title = "SyncKeysChange"))]
    SyncKeys {},
}

impl ClusterChangeRequest {
    /// The operation the change is: the same word the request is tagged with.
    pub fn operation(&self) -> Operation {
        match self {
            ClusterChangeRequest::AddServices { .. } => Operation::AddServices,
            ClusterChangeRequest::AddNodes { .. } => Operation::AddNodes,
            ClusterChangeRequest::RemoveNodes { .. } => Operation::RemoveNodes,
            ClusterChangeRequest::RemoveServices { .. } => Operation::RemoveServices,
            ClusterChangeRequest::Reconfigure { .. } => Operation::Reconfigure,
            ClusterChangeRequest::Start { .. } => Operation::Start,
            ClusterChangeRequest::Stop { .. } => Operation::Stop,
            ClusterChangeRequest::Restart { .. } => Operation::Restart,
            ClusterChangeRequest::Rollback { .. } => Operation::Rollback,
            ClusterChangeRequest::Upgrade { .. } => Operation::Upgrade,
            ClusterChangeRequest::ReplaceNodes { .. } => Operation::ReplaceNodes,
            ClusterChangeRequest::SyncKeys {} => Operation::SyncKeys,
        }
    }
}

/// The OpenAPI schema of a config in a request: keys and JSON values, merged over the
/// template's config key by key. A named component (rather than an inline "object or
/// null") because generated clients (openapi-python-client) cannot read an inline
/// free-form object inside the change request's `oneOf`. Never built: schema only.
#[cfg(feature = "openapi")]
struct ConfigSchema;

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for ConfigSchema {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder};
        ObjectBuilder::new()
            .description(Some("Config keys and their JSON values."))
            .additional_properties(Some(AdditionalProperties::FreeForm(true)))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for ConfigSchema {
    fn name() -> std::borrow::Cow<'static, str> {
        "ClusterConfig".into()
    }
}

/// How much longer the cluster may live.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct LeaseExtension {
    /// Seconds from now; 1 to 10 years' worth.
    pub seconds: u64,
}

/// A span in the largest whole unit that fits: "45 s", "40 min", "3 h", "2 d"
/// (anything past is "0 s").
pub fn duration_words(ms: i64) -> String {
    let seconds = ms.max(0) / 1000;
    match seconds {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s if s < 48 * 3600 => format!("{} h", s / 3600),
        s => format!("{} d", s / 86_400),
    }
}

/// Sorts clusters for a list: those with a lease first, the soonest deadline (see
/// [`ClusterView::lease_deadline_ms`]) first, then the rest; ties keep their order.
pub fn sort_expiring_first(clusters: &mut [ClusterView]) {
    clusters.sort_by_key(|cluster| match cluster.lease_deadline_ms() {
        Some(deadline) => (0, deadline),
        None => (1, 0),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_request_reads_back_what_it_wrote() {
        let change = ClusterChangeRequest::Reconfigure {
            restart: true,
            config: None,
        };
        let json = serde_json::to_value(&change).expect("serialises");
        assert_eq!(
            json,
            serde_json::json!({"operation": "reconfigure", "restart": true})
        );
        let back: ClusterChangeRequest = serde_json::from_value(json).expect("parses");
        assert_eq!(back, change);
    }

    #[test]
    fn a_change_request_is_tagged_with_its_operation_word() {
        let changes = [
            ClusterChangeRequest::AddServices { services: vec![] },
            ClusterChangeRequest::AddNodes { count: 1 },
            ClusterChangeRequest::RemoveNodes {
                count: Some(1),
                nodes: None,
            },
            ClusterChangeRequest::RemoveServices { services: vec![] },
            ClusterChangeRequest::Reconfigure {
                restart: false,
                config: None,
            },
            ClusterChangeRequest::Start { services: None },
            ClusterChangeRequest::Stop { services: None },
            ClusterChangeRequest::Restart { services: None },
            ClusterChangeRequest::Rollback { job_id: "j".into() },
            ClusterChangeRequest::Upgrade {
                max_unavailable: None,
            },
            ClusterChangeRequest::ReplaceNodes {
                nodes: vec![1],
                force: false,
            },
            ClusterChangeRequest::SyncKeys {},
        ];
        for change in changes {
            let json = serde_json::to_value(&change).expect("serialises");
            assert_eq!(json["operation"], change.operation().as_str(), "{change:?}");
            assert_eq!(
                serde_json::from_value::<Operation>(json["operation"].clone()).ok(),
                Some(change.operation())
            );
        }
    }

    fn leased(name: &str, expires: Option<i64>, deletes_at: Option<i64>) -> ClusterView {
        let mut view: ClusterView = serde_json::from_value(serde_json::json!({
            "id": name, "name": name, "state": "active", "template": "t",
            "template_version": 1, "provider": "local", "owner_id": null, "size": 0,
            "layout": {}, "config": {}, "lease_expires_ms": expires,
            "created_at_ms": 0, "updated_at_ms": 0
        }))
        .expect("parses");
        view.lease_deletes_at_ms = deletes_at;
        view
    }

    #[test]
    fn the_lease_left_reads_in_words_and_sorts_soonest_first() {
        const MIN: i64 = 60_000;
        let now = 1_000 * MIN;
        let cases = [
            (leased("none", None, None), None),
            (
                leased("later", Some(now + 180 * MIN), None),
                Some("expires in 3 h"),
            ),
            (
                leased("soon", Some(now + 45_000), None),
                Some("expires in 45 s"),
            ),
            (leased("ended", Some(now - MIN), None), Some("expired")),
            (
                leased("stopped", Some(now - MIN), Some(now + 40 * MIN)),
                Some("stopped; deleted in 40 min"),
            ),
            (
                leased("days", Some(now + 3 * 24 * 60 * MIN), None),
                Some("expires in 3 d"),
            ),
        ];
        for (view, words) in &cases {
            assert_eq!(view.lease_left(now).as_deref(), *words, "{}", view.name);
        }
        let mut views: Vec<ClusterView> = cases.into_iter().map(|(view, _)| view).collect();
        sort_expiring_first(&mut views);
        let order: Vec<&str> = views.iter().map(|view| view.name.as_str()).collect();
        assert_eq!(order, ["ended", "soon", "stopped", "later", "days", "none"]);
    }
}
