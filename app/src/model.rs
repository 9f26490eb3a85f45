//! What server functions hand to pages: small serializable views, shaped for what
//! the pages show, that exist on both sides (the engine's own views are server-only).
//! Layouts and task DAGs are the `domain` crate's own types, which the browser has.

use domain::layout::Layout;
use domain::plan::TaskDag;
use serde::{Deserialize, Serialize};

/// The signed-in user, for the layout and for forms (the CSRF token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Me {
    pub user_id: String,
    pub username: String,
    pub tenant_id: String,
    /// `superadmin`, `tenant-admin` or `user`.
    pub role: String,
    /// Every form that changes something sends this back as the `csrf` field.
    pub csrf: String,
}

impl Me {
    pub fn is_admin(&self) -> bool {
        self.role == "superadmin" || self.role == "tenant-admin"
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterRow {
    pub id: String,
    pub name: String,
    pub state: String,
    pub template: String,
    pub size: usize,
    /// The owner's username (`None` for clusters made by the system).
    pub owner: Option<String>,
    pub lease_expires_ms: Option<i64>,
    /// Where one click of "extend" takes the lease (`None`: it cannot be extended).
    pub lease_next_end_ms: Option<i64>,
    /// The latest the template lets the lease end (`None`: no limit).
    pub lease_latest_end_ms: Option<i64>,
    pub created_at_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRow {
    pub number: i64,
    pub hostname: Option<String>,
    pub address: Option<String>,
    pub hardwaretype: String,
    pub imagetype: String,
    pub services: Vec<String>,
    pub state: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRow {
    pub id: String,
    pub operation: String,
    pub state: String,
    pub tasks_total: i64,
    pub tasks_succeeded: i64,
    pub created_at_ms: i64,
    pub started_at_ms: Option<i64>,
    pub finished_at_ms: Option<i64>,
    pub error: Option<String>,
    /// A forced delete: failed stop and remove steps are passed over.
    #[serde(default)]
    pub forced: bool,
}

impl JobRow {
    pub fn finished(&self) -> bool {
        matches!(self.state.as_str(), "succeeded" | "failed" | "cancelled")
    }
}

/// A link the template or a service exposes, with its macros expanded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceLink {
    pub label: String,
    pub url: String,
}

/// Everything the cluster page shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterPage {
    pub cluster: ClusterRow,
    pub layout: Option<Layout>,
    /// The cluster's config, pretty-printed JSON.
    pub config: String,
    pub nodes: Vec<NodeRow>,
    /// Newest first.
    pub jobs: Vec<JobRow>,
    /// Services the template allows that the cluster does not have yet.
    pub addable_services: Vec<String>,
    pub links: Vec<ServiceLink>,
}

impl ClusterPage {
    /// Every service on any node, sorted.
    pub fn services(&self) -> Vec<String> {
        let mut services: Vec<String> = self
            .nodes
            .iter()
            .flat_map(|node| node.services.iter().cloned())
            .collect();
        services.sort();
        services.dedup();
        services
    }

    /// A job that is not finished, if any (changes wait for it).
    pub fn running_job(&self) -> Option<&JobRow> {
        self.jobs.iter().find(|job| !job.finished())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRow {
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

impl TaskRow {
    /// `node 2 · install web`, as people read it.
    pub fn label(&self) -> String {
        match &self.service {
            Some(service) => format!("{} {service}", self.action),
            None => self.action.clone(),
        }
    }
}

/// One line of output, or a state change, in a job's event stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventRow {
    pub id: i64,
    pub task_id: Option<String>,
    pub at_ms: i64,
    /// `output` or `state`.
    pub kind: String,
    /// `stdout` or `stderr` for output.
    pub stream: Option<String>,
    pub data: String,
}

/// Everything the job page shows when it is first rendered; live updates follow
/// over the event stream from `events`' last id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobPage {
    pub cluster_id: String,
    pub cluster_name: String,
    pub job: JobRow,
    pub tasks: Vec<TaskRow>,
    pub dag: TaskDag,
    pub events: Vec<EventRow>,
    /// Whether `events` stops short of the stream's start (very long jobs).
    pub events_truncated: bool,
    /// The node hostnames by node number, where known.
    pub hostnames: Vec<(u32, String)>,
    /// Links the cluster exposes, shown once the job succeeded.
    pub links: Vec<ServiceLink>,
    /// A job that would undo this one's partial work (for failed create/changes).
    pub can_roll_back: bool,
}

/// A dry run: the layout before and after, and the tasks that would run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanPreview {
    pub from: Option<Layout>,
    pub to: Layout,
    pub dag: TaskDag,
}

/// What a day-2 operation would do. (An enum, not `Option`: a nested `Option`
/// does not survive JSON, and the page must read back exactly what the server saw.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ChangePreview {
    /// The layout change and the tasks.
    Plan(PlanPreview),
    /// A delete: every node goes.
    Delete,
}

/// A template as the create form offers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateChoice {
    pub name: String,
    pub description: String,
    /// Services a cluster gets when none are picked.
    pub default_services: Vec<String>,
    /// Services a user may add (the template's compatible services).
    pub optional_services: Vec<String>,
    pub min_size: Option<u32>,
    pub max_size: Option<u32>,
    /// Hardware types the template allows, and the one it picks by default.
    pub hardwaretypes: Vec<String>,
    pub default_hardwaretype: Option<String>,
    /// Image types the template allows, and the one it picks by default.
    pub imagetypes: Vec<String>,
    pub default_imagetype: Option<String>,
    pub default_provider: Option<String>,
}

/// Everything the create form offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateFormChoices {
    pub templates: Vec<TemplateChoice>,
    /// The tenant's providers.
    pub providers: Vec<String>,
    pub quota: QuotaUse,
}

/// The tenant's limits and what is in use, shown before a create.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuotaUse {
    pub clusters: u64,
    pub max_clusters: Option<i64>,
    pub nodes: u64,
    pub max_nodes: Option<i64>,
}

#[cfg(feature = "ssr")]
mod convert;

pub mod admin;
