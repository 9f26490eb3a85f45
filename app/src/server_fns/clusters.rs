//! Clusters: list, the create form's choices, preview and create, the cluster page,
//! day-2 changes (planned, then submitted), lease, pin and delete.

pub mod change;
pub mod choices;
pub mod create;
pub mod extend_lease;
pub mod healing;
pub mod list;
pub mod pin;
pub mod plan_change;
pub mod preview;
pub mod show;

use api_types::{ClusterLink, ClusterView, JobView, NodeView, Operation, ServiceHealthView};
use domain::layout::Layout;
use domain::plan::TaskDag;
use serde::{Deserialize, Serialize};

/// Rows of the cluster page's node table per page.
pub const NODES_PER_PAGE: usize = 50;
/// Services down that the cluster page names one by one; more are counted.
pub const DOWN_NAMED: usize = 10;

/// Everything the cluster page shows: of a thousand-node cluster, one page of its
/// nodes and what is read from all of them (services, node numbers, what is down),
/// never every node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterPage {
    /// The cluster, without its layout (the node table shows the nodes).
    pub cluster: ClusterView,
    /// The cluster's config, pretty-printed JSON.
    pub config: String,
    /// One page of the node table, in node-number order.
    pub nodes: Vec<NodeView>,
    /// Which page `nodes` is, from 1 (a page past the last shows the last).
    pub node_page: usize,
    /// Every node of the cluster, over every page.
    pub node_count: usize,
    /// Every node's number, for picking nodes to remove.
    pub node_numbers: Vec<i64>,
    /// Every service on any node, sorted.
    pub services: Vec<String>,
    /// Services down, by node number: the first [`DOWN_NAMED`].
    pub down: Vec<(i64, ServiceHealthView)>,
    /// Services down on any node, over every node.
    pub down_count: usize,
    /// Newest first.
    pub jobs: Vec<JobView>,
    /// Services the template allows that the cluster does not have yet.
    pub addable_services: Vec<String>,
    pub links: Vec<ClusterLink>,
    /// Whether the viewer may open a terminal on the cluster's nodes (its owner or a
    /// tenant admin, with node shells on for the server and the tenant).
    #[serde(default)]
    pub terminal: bool,
    /// What healing last did or declined to do on the cluster.
    #[serde(default)]
    pub heal_note: Option<api_types::HealNote>,
    /// The cluster's newest approval request: what waits, or why it was denied.
    #[serde(default)]
    pub approval: Option<api_types::ApprovalView>,
    /// Whether the cluster is pinned to its catalog revision (rollouts skip it).
    #[serde(default)]
    pub pinned: bool,
    /// Whether Corral replaces the cluster's dead nodes, and whether its owner chose.
    #[serde(default)]
    pub healing: api_types::HealingView,
}

impl ClusterPage {
    /// How many pages the node table has (one when the cluster has no node).
    pub fn node_pages(&self) -> usize {
        self.node_count.div_ceil(NODES_PER_PAGE).max(1)
    }

    /// A job that is not finished, if any (changes wait for it).
    pub fn running_job(&self) -> Option<&JobView> {
        self.jobs.iter().find(|job| !job.state.is_finished())
    }
}

/// A dry run: the layout before and after, and the tasks that would run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanPreview {
    pub from: Option<Layout>,
    pub to: Layout,
    /// How many tasks would run.
    pub tasks: usize,
    /// The plan's steps in plan order, each with how many tasks it has.
    pub steps: Vec<(String, usize)>,
    /// Every task, for a plan small enough to draw (the server sends no more).
    pub dag: Option<TaskDag>,
    /// Whose credentials the new machines are made with, when the plan makes any on a
    /// provider that takes credentials.
    pub credentials: Option<String>,
    /// For an upgrade and its rollback: the definitions that change, what runs, and
    /// the batches.
    #[serde(default)]
    pub upgrade: Option<api_types::UpgradePlanView>,
    /// What to know before going ahead (data a node replacement loses).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// The cluster's estimated cost after the operation (docs/cost.md); absent where
    /// the server did not price it (the browser's own preview).
    #[serde(default)]
    pub cost: Option<api_types::CostEstimate>,
}

impl PlanPreview {
    /// The preview of `dag`, which keeps its tasks only when they are few enough to
    /// draw (see [`api_types::PLAN_GRAPH_MAX_TASKS`]).
    pub fn of_dag(from: Option<Layout>, to: Layout, dag: TaskDag) -> Self {
        let tasks = dag.len();
        Self {
            from,
            to,
            tasks,
            steps: dag.step_counts(),
            dag: (tasks <= api_types::PLAN_GRAPH_MAX_TASKS).then_some(dag),
            credentials: None,
            upgrade: None,
            warnings: Vec::new(),
            cost: None,
        }
    }
}

/// What a day-2 operation would do. (An enum, not `Option`: a nested `Option`
/// does not survive JSON, and the page must read back exactly what the server saw.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ChangePreview {
    /// The layout change and the tasks.
    Plan(Box<PlanPreview>),
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
    /// The template's parameter declarations as its JSON holds them (null: none);
    /// the form reads them with [`domain::catalog::parameters::decode`].
    #[serde(default)]
    pub parameters: serde_json::Value,
}

impl TemplateChoice {
    /// The template's parameters (none if its declarations do not read, which the
    /// catalog's checks do not let happen).
    pub fn parameters(&self) -> domain::catalog::parameters::Parameters {
        if self.parameters.is_null() {
            return Default::default();
        }
        domain::catalog::parameters::decode(self.parameters.clone()).unwrap_or_default()
    }
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

/// A day-2 operation as the cluster page's forms name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeForm {
    /// One of [`CHANGE_TABS`] or a rollback (`create` is refused).
    pub op: Operation,
    #[serde(default)]
    pub services: Vec<String>,
    #[serde(default)]
    pub count: Option<String>,
    /// Remove nodes: the node numbers picked (none: Corral picks `count` nodes).
    #[serde(default)]
    pub nodes: Vec<String>,
    #[serde(default)]
    pub job_id: Option<String>,
    /// Reconfigure: JSON object merged over the cluster's config.
    #[serde(default)]
    pub config: Option<String>,
    /// Delete: pass over stop and remove steps that fail; replace nodes: replace
    /// nodes whose stateful services' data is lost (a checkbox: present when ticked,
    /// whatever its value).
    #[serde(default)]
    pub force: Option<String>,
}

/// A create request as the create form names it; empty choices mean the
/// template's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateForm {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub template: String,
    #[serde(default)]
    pub size: String,
    #[serde(default)]
    pub services: Vec<String>,
    #[serde(default)]
    pub provider: Option<String>,
    #[serde(default)]
    pub hardwaretype: Option<String>,
    #[serde(default)]
    pub imagetype: Option<String>,
    /// Template parameter values as typed, by parameter name (the server reads each
    /// as its parameter's type).
    #[serde(default)]
    pub parameters: std::collections::BTreeMap<String, String>,
}

/// The day-2 operations the cluster page has a tab for, in the tabs' order (a rollback
/// is offered beside its failed job instead).
pub const CHANGE_TABS: &[Operation] = &[
    Operation::AddServices,
    Operation::RemoveServices,
    Operation::AddNodes,
    Operation::RemoveNodes,
    Operation::Restart,
    Operation::Stop,
    Operation::Start,
    Operation::Reconfigure,
    Operation::Upgrade,
    Operation::ReplaceNodes,
    Operation::SyncKeys,
    Operation::Delete,
];

/// What the cluster page's tab (or button) for `operation` says.
pub fn tab_title(operation: Operation) -> &'static str {
    match operation {
        Operation::AddServices => "Add services",
        Operation::RemoveServices => "Remove services",
        Operation::AddNodes => "Add nodes",
        Operation::RemoveNodes => "Remove nodes",
        Operation::Restart => "Restart services",
        Operation::Stop => "Stop services",
        Operation::Start => "Start services",
        Operation::Reconfigure => "Reconfigure",
        Operation::Upgrade => "Upgrade",
        Operation::ReplaceNodes => "Replace nodes",
        Operation::SyncKeys => "Sync SSH keys",
        Operation::Delete => "Delete cluster",
        Operation::Rollback => "Roll back",
        Operation::Create => "Create cluster",
    }
}

#[cfg(feature = "ssr")]
pub(crate) mod convert {
    //! From form fields to the engine's requests, with per-field errors.

    use api_types::Operation;
    use engine::service::{ClusterChangeRequest, ClusterCreateRequest};

    use super::{ChangeForm, CreateForm};
    use crate::error::UiError;

    fn chosen(services: &[String]) -> Option<Vec<String>> {
        let services: Vec<String> = services
            .iter()
            .map(|name| name.trim().to_owned())
            .filter(|name| !name.is_empty())
            .collect();
        (!services.is_empty()).then_some(services)
    }

    /// A choice left empty means the template's default.
    fn picked(value: &Option<String>) -> Option<String> {
        value
            .as_deref()
            .map(str::trim)
            .filter(|value| !value.is_empty())
            .map(str::to_owned)
    }

    pub fn create_request(form: &CreateForm) -> Result<ClusterCreateRequest, UiError> {
        if form.template.trim().is_empty() {
            return Err(UiError::field("template", "pick a template"));
        }
        let size = form
            .size
            .trim()
            .parse::<u32>()
            .map_err(|_| UiError::field("size", "enter a whole number of nodes"))?;
        Ok(ClusterCreateRequest {
            name: form.name.trim().to_owned(),
            template: form.template.trim().to_owned(),
            size,
            services: chosen(&form.services),
            provider: picked(&form.provider),
            hardwaretype: picked(&form.hardwaretype),
            imagetype: picked(&form.imagetype),
            config: None,
            parameters: (!form.parameters.is_empty()).then(|| {
                let text = |value: &String| serde_json::Value::String(value.clone());
                form.parameters
                    .iter()
                    .map(|(name, value)| (name.clone(), text(value)))
                    .collect()
            }),
        })
    }

    /// The form's node count (1 when left out).
    fn count(form: &ChangeForm) -> Result<u32, UiError> {
        form.count
            .as_deref()
            .unwrap_or("1")
            .trim()
            .parse()
            .map_err(|_| UiError::field("count", "enter a whole number of nodes"))
    }

    /// The change a form asks for; `None` for a delete (not a change).
    pub fn change_request(form: &ChangeForm) -> Result<Option<ClusterChangeRequest>, UiError> {
        let services = chosen(&form.services);
        Ok(Some(match form.op {
            Operation::AddServices => ClusterChangeRequest::AddServices {
                services: services
                    .ok_or_else(|| UiError::field("services", "pick at least one service"))?,
            },
            Operation::RemoveServices => ClusterChangeRequest::RemoveServices {
                services: services
                    .ok_or_else(|| UiError::field("services", "pick at least one service"))?,
            },
            Operation::AddNodes => ClusterChangeRequest::AddNodes {
                count: count(form)?,
            },
            Operation::RemoveNodes => {
                let picked: Vec<u32> = chosen(&form.nodes)
                    .unwrap_or_default()
                    .iter()
                    .map(|number| number.parse())
                    .collect::<Result<_, _>>()
                    .map_err(|_| UiError::field("nodes", "pick nodes by their number"))?;
                if picked.is_empty() {
                    ClusterChangeRequest::RemoveNodes {
                        count: Some(count(form)?),
                        nodes: None,
                    }
                } else {
                    // Picked nodes say how many; the count field is then ignored.
                    ClusterChangeRequest::RemoveNodes {
                        count: None,
                        nodes: Some(picked),
                    }
                }
            }
            Operation::Upgrade => ClusterChangeRequest::Upgrade {
                max_unavailable: Some(count(form)?),
            },
            Operation::ReplaceNodes => {
                let nodes: Vec<u32> = chosen(&form.nodes)
                    .unwrap_or_default()
                    .iter()
                    .map(|number| number.parse())
                    .collect::<Result<_, _>>()
                    .map_err(|_| UiError::field("nodes", "pick nodes by their number"))?;
                if nodes.is_empty() {
                    return Err(UiError::field("nodes", "pick the nodes to replace"));
                }
                ClusterChangeRequest::ReplaceNodes {
                    nodes,
                    force: form.force.is_some(),
                }
            }
            Operation::Start => ClusterChangeRequest::Start { services },
            Operation::Stop => ClusterChangeRequest::Stop { services },
            Operation::Restart => ClusterChangeRequest::Restart { services },
            Operation::Reconfigure => {
                let raw = form.config.as_deref().unwrap_or("").trim();
                let config = if raw.is_empty() {
                    None
                } else {
                    match serde_json::from_str::<serde_json::Value>(raw) {
                        Ok(serde_json::Value::Object(map)) => Some(map),
                        Ok(_) => {
                            return Err(UiError::field(
                                "config",
                                "write a JSON object: {\"key\": value}",
                            ))
                        }
                        Err(error) => {
                            return Err(UiError::field("config", format!("not JSON: {error}")))
                        }
                    }
                };
                ClusterChangeRequest::Reconfigure {
                    restart: true,
                    config,
                }
            }
            Operation::Rollback => ClusterChangeRequest::Rollback {
                job_id: form
                    .job_id
                    .clone()
                    .ok_or_else(|| UiError::invalid("name the failed job to roll back"))?,
            },
            Operation::SyncKeys => ClusterChangeRequest::SyncKeys {},
            Operation::Delete => return Ok(None),
            Operation::Create => {
                return Err(UiError::invalid(
                    "a cluster is created from the create form",
                ))
            }
        }))
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;

    fn form(op: Operation) -> ChangeForm {
        ChangeForm {
            op,
            services: vec!["web".to_owned()],
            count: Some("1".to_owned()),
            nodes: vec!["1001".to_owned()],
            job_id: Some("j1".to_owned()),
            config: None,
            force: None,
        }
    }

    /// Each tab (and the rollback a failed job links to) submits a request of its own
    /// operation; a delete is no change request, and a create is refused.
    #[test]
    fn each_tab_asks_for_its_own_operation() {
        for &op in CHANGE_TABS.iter().chain(&[Operation::Rollback]) {
            match convert::change_request(&form(op)) {
                Ok(Some(request)) => assert_eq!(request.operation(), op),
                Ok(None) => assert_eq!(op, Operation::Delete),
                Err(error) => panic!("{op}: {error}"),
            }
        }
        assert!(convert::change_request(&form(Operation::Create)).is_err());
    }
}
