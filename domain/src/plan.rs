//! The planner: turns a change of cluster layout (or a service operation) into a DAG
//! of node and service tasks.
//!
//! Ordering follows Coopr's rules (docs/coopr-format.md §5): per node, create → confirm →
//! bootstrap, then each service's install → configure → initialize → start (or stop →
//! remove when it goes away, then delete). Install dependencies order installs (and
//! removals, reversed); runtime dependencies order initialize/start (and stops,
//! reversed). Unlike Coopr there is no stage barrier: a task may run once its own
//! predecessors are done. Tasks of one node are chained so a node never runs two at
//! once; the chain follows Coopr's staged order, which is also computed (each task
//! carries its Coopr stage) so the two schedules can be compared.

mod build;
mod graph;
#[cfg(test)]
mod proptests;
mod replace;
mod rolling;
mod schedule;
#[cfg(test)]
mod tests;
mod work;

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::layout::Layout;
use crate::names::ServiceName;

pub use graph::{DependencyLists, ServiceAction, ServiceGraph, ServiceNode};
pub use schedule::{unit_cost, ActionCosts, ScheduleComparison};

/// What a task does: a node task (no service) or a service step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Create,
    Confirm,
    Bootstrap,
    Install,
    Configure,
    Initialize,
    Start,
    Stop,
    Remove,
    Delete,
    /// Stops the node's machine, keeping it (a lease's grace: see [`TaskDag::node_steps`]).
    Suspend,
    /// Starts a suspended node's machine again and waits until it answers.
    Resume,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Confirm => "confirm",
            Action::Bootstrap => "bootstrap",
            Action::Install => "install",
            Action::Configure => "configure",
            Action::Initialize => "initialize",
            Action::Start => "start",
            Action::Stop => "stop",
            Action::Remove => "remove",
            Action::Delete => "delete",
            Action::Suspend => "suspend",
            Action::Resume => "resume",
        }
    }

    /// The service step this is, or `None` for a node task.
    pub fn service_action(self) -> Option<ServiceAction> {
        match self {
            Action::Install => Some(ServiceAction::Install),
            Action::Configure => Some(ServiceAction::Configure),
            Action::Initialize => Some(ServiceAction::Initialize),
            Action::Start => Some(ServiceAction::Start),
            Action::Stop => Some(ServiceAction::Stop),
            Action::Remove => Some(ServiceAction::Remove),
            Action::Create
            | Action::Confirm
            | Action::Bootstrap
            | Action::Delete
            | Action::Suspend
            | Action::Resume => None,
        }
    }
}

impl From<ServiceAction> for Action {
    fn from(action: ServiceAction) -> Self {
        match action {
            ServiceAction::Install => Action::Install,
            ServiceAction::Configure => Action::Configure,
            ServiceAction::Initialize => Action::Initialize,
            ServiceAction::Start => Action::Start,
            ServiceAction::Stop => Action::Stop,
            ServiceAction::Remove => Action::Remove,
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A task's id: its position in [`TaskDag::tasks`]. Ids are deterministic for a
/// given input and topologically sorted (every predecessor has a smaller id).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(transparent)]
pub struct TaskId(pub u32);

impl TaskId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// One unit of work on one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    pub id: TaskId,
    pub node: u32,
    /// `None` for node tasks (create, confirm, bootstrap, delete).
    pub service: Option<ServiceName>,
    pub action: Action,
    /// Tasks that must be done first: the previous task on the same node, the
    /// task's own chain, and service dependencies. A dependency already implied by
    /// another listed one (through the node's chain or a chain of "every B before
    /// every A" rules) is left out, so ordering is by reachability, not by direct
    /// listing.
    pub after: Vec<TaskId>,
    /// The stage Coopr's barrier scheduler would run this task in (0-based).
    pub stage: u32,
}

impl Task {
    /// A readable, unique name such as `1000-install-hdfs` or `1001-create`.
    pub fn label(&self) -> String {
        match &self.service {
            Some(service) => format!("{}-{}-{}", self.node, self.action, service),
            None => format!("{}-{}", self.node, self.action),
        }
    }
}

/// A plan: tasks in topological order, each with its predecessors.
///
/// Invariant (checked on deserialisation): `tasks[i].id == i` and every `after` id
/// is smaller than its task's id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "UncheckedTaskDag")]
pub struct TaskDag {
    tasks: Vec<Task>,
}

#[derive(Deserialize)]
struct UncheckedTaskDag {
    tasks: Vec<Task>,
}

/// Why a deserialised [`TaskDag`] is not well formed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskDagError {
    #[error("task at position {position} has id {id}; ids must equal positions")]
    IdNotPosition { position: usize, id: TaskId },
    #[error("task {task} runs after {after}, which is not an earlier task")]
    ForwardReference { task: TaskId, after: TaskId },
    #[error("task {task} is in stage {stage}, beyond the number of tasks")]
    StageOutOfRange { task: TaskId, stage: u32 },
}

impl TryFrom<UncheckedTaskDag> for TaskDag {
    type Error = TaskDagError;

    fn try_from(raw: UncheckedTaskDag) -> Result<Self, Self::Error> {
        for (position, task) in raw.tasks.iter().enumerate() {
            if task.id.index() != position {
                return Err(TaskDagError::IdNotPosition {
                    position,
                    id: task.id,
                });
            }
            if task.stage as usize >= raw.tasks.len() {
                return Err(TaskDagError::StageOutOfRange {
                    task: task.id,
                    stage: task.stage,
                });
            }
            if let Some(&after) = task.after.iter().find(|after| after.index() >= position) {
                return Err(TaskDagError::ForwardReference {
                    task: task.id,
                    after,
                });
            }
        }
        Ok(Self { tasks: raw.tasks })
    }
}

impl TaskDag {
    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    pub fn get(&self, id: TaskId) -> Option<&Task> {
        self.tasks.get(id.index())
    }

    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// One task of `action` (a node task) on each of `nodes`, none waiting for another:
    /// the machine steps a lease adds around a stop or start of services (suspend
    /// after them, resume before them) and the delete of a cluster whose machines are
    /// suspended (nothing can run on them, and their services are stopped already).
    pub fn node_steps(nodes: impl IntoIterator<Item = u32>, action: Action) -> Self {
        let tasks = nodes
            .into_iter()
            .enumerate()
            .map(|(index, node)| Task {
                id: TaskId(u32::try_from(index).unwrap_or(u32::MAX)),
                node,
                service: None,
                action,
                after: Vec::new(),
                stage: 0,
            })
            .collect();
        Self { tasks }
    }

    /// Appends `next` to run after this plan: its tasks that wait for nothing wait for
    /// every task of this plan nothing waits for (so for all of it), and its stages
    /// follow this plan's.
    pub fn append(&mut self, next: TaskDag) {
        let offset = u32::try_from(self.tasks.len()).unwrap_or(u32::MAX);
        let mut waited_for = vec![false; self.tasks.len()];
        for task in &self.tasks {
            for after in &task.after {
                waited_for[after.index()] = true;
            }
        }
        let ends: Vec<TaskId> = self
            .tasks
            .iter()
            .filter(|task| !waited_for[task.id.index()])
            .map(|task| task.id)
            .collect();
        let stage_offset = self
            .tasks
            .iter()
            .map(|task| task.stage + 1)
            .max()
            .unwrap_or(0);
        for mut task in next.tasks {
            task.id = TaskId(task.id.0 + offset);
            if task.after.is_empty() {
                task.after.clone_from(&ends);
            } else {
                for after in &mut task.after {
                    after.0 += offset;
                }
            }
            task.stage += stage_offset;
            self.tasks.push(task);
        }
    }

    /// Total number of `after` entries.
    pub fn edge_count(&self) -> usize {
        self.tasks.iter().map(|task| task.after.len()).sum()
    }

    /// The plan's steps (an action, with its service when it has one: `install web`)
    /// in plan order, each with how many tasks it has: how a plan too big to list
    /// task by task is shown.
    pub fn step_counts(&self) -> Vec<(String, usize)> {
        let mut steps: Vec<(String, usize)> = Vec::new();
        let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        for task in &self.tasks {
            let label = match &task.service {
                Some(service) => format!("{} {service}", task.action),
                None => task.action.to_string(),
            };
            match index.get(&label) {
                Some(&at) => steps[at].1 += 1,
                None => {
                    index.insert(label.clone(), steps.len());
                    steps.push((label, 1));
                }
            }
        }
        steps
    }

    /// The task for `node`, `service`, `action`, if planned.
    pub fn find(&self, node: u32, service: Option<&str>, action: Action) -> Option<&Task> {
        self.tasks.iter().find(|task| {
            task.node == node
                && task.action == action
                && task.service.as_ref().map(ServiceName::as_str) == service
        })
    }
}

/// What the cluster operation is. Layout-changing operations are checked against
/// the difference between the old and new layouts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanOperation {
    /// Build every node of `new` (`old` must be empty).
    Create,
    /// Stop and remove every service of `old`, then delete its nodes.
    Delete,
    /// Install and start the services `new` adds to existing nodes.
    AddServices,
    /// Stop and remove the services `new` drops from existing nodes.
    RemoveServices,
    /// Build the nodes `new` adds; existing nodes are left alone.
    AddNodes,
    /// Tear down the nodes `new` drops.
    RemoveNodes,
    /// Any mix of the four changes above.
    Update,
    /// Bootstrap and configure every node of `new`; with `restart`, each service is
    /// stopped before and started after its configure.
    Reconfigure { restart: bool },
    /// Start the given services (all if `None`) and what they need at run time.
    Start {
        services: Option<BTreeSet<ServiceName>>,
    },
    /// Stop the given services (all if `None`) and what needs them at run time.
    Stop {
        services: Option<BTreeSet<ServiceName>>,
    },
    /// Stop then start, like `Stop` selects.
    Restart {
        services: Option<BTreeSet<ServiceName>>,
    },
    /// Undo what the `completed` tasks of a `failed` job did: stop what it started,
    /// start what it stopped, remove what it installed, delete nodes it created.
    /// Deleted nodes and removed services cannot be brought back and are left. A
    /// node is deleted only if its create task is in `completed`: a caller whose
    /// provider may have made the machine before a create failed should count that
    /// create as completed (delete is safe to repeat).
    Rollback {
        failed: TaskDag,
        completed: BTreeSet<TaskId>,
    },
    /// Run changed services' steps on their nodes of `new` in batches, then configure
    /// their dependants (see [`crate::upgrade`]).
    Upgrade(Upgrade),
    /// Build the nodes `new` adds with their services, configure what stays for `new`,
    /// then tear down the nodes `new` drops: as many go as come, and the nodes both
    /// layouts have are unchanged.
    ReplaceNodes,
    /// Bootstrap every node of `new` again, which puts the current users' keys in
    /// place (and ships any plugin resource that changed); no service is touched.
    SyncKeys,
}

/// An upgrade's steps and how they roll across the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upgrade {
    pub steps: crate::upgrade::UpgradeSteps,
    /// Only these nodes (a rollback redoes the nodes a failed upgrade touched);
    /// `None` for every node. Dependants are configured on every node regardless.
    pub nodes: Option<BTreeSet<u32>>,
    /// Most nodes of one service upgraded at once (at least 1).
    pub max_unavailable: u32,
}

impl PlanOperation {
    pub fn name(&self) -> &'static str {
        match self {
            PlanOperation::Create => "create",
            PlanOperation::Delete => "delete",
            PlanOperation::AddServices => "add services",
            PlanOperation::RemoveServices => "remove services",
            PlanOperation::AddNodes => "add nodes",
            PlanOperation::RemoveNodes => "remove nodes",
            PlanOperation::Update => "update",
            PlanOperation::Reconfigure { .. } => "reconfigure",
            PlanOperation::Start { .. } => "start",
            PlanOperation::Stop { .. } => "stop",
            PlanOperation::Restart { .. } => "restart",
            PlanOperation::Rollback { .. } => "rollback",
            PlanOperation::Upgrade(_) => "upgrade",
            PlanOperation::ReplaceNodes => "replace nodes",
            PlanOperation::SyncKeys => "sync keys",
        }
    }
}

/// The node numbers of each batch an upgrade of `layout` runs, in order.
pub fn upgrade_batches(layout: &Layout, upgrade: &Upgrade) -> Vec<Vec<u32>> {
    rolling::batches(layout, upgrade)
        .into_iter()
        .map(|batch| batch.into_iter().map(|node| node.number).collect())
        .collect()
}

/// Why no plan can be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("dependency cycle among services {}", list(.services))]
    DependencyCycle { services: Vec<ServiceName> },
    #[error("service {0} is on the cluster but unknown to the catalog")]
    UnknownService(ServiceName),
    #[error("service {0} is not on the cluster")]
    NotOnCluster(ServiceName),
    #[error("{operation}: {detail}")]
    LayoutMismatch {
        operation: &'static str,
        detail: String,
    },
    #[error("task {0} is not part of the failed job's plan")]
    UnknownTask(TaskId),
}

fn list(services: &[ServiceName]) -> String {
    services
        .iter()
        .map(ServiceName::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Plans `operation` taking the cluster from `old` to `new`.
///
/// Operations that do not change the layout (reconfigure, start, stop, restart) act
/// on `new`; rollback looks at both layouts and the failed job's tasks.
/// The plan that builds `layout` from nothing: [`plan`] of a [`PlanOperation::Create`].
pub fn plan_create(layout: &Layout, services: &ServiceGraph) -> Result<TaskDag, PlanError> {
    let empty = Layout::empty(layout.template.clone());
    plan(&empty, layout, &PlanOperation::Create, services)
}

pub fn plan(
    old: &Layout,
    new: &Layout,
    operation: &PlanOperation,
    services: &ServiceGraph,
) -> Result<TaskDag, PlanError> {
    let cluster = work::cluster_services(old, new, operation);
    let deps = graph::ResolvedDeps::new(services, &cluster).map_err(PlanError::UnknownService)?;
    match operation {
        PlanOperation::Upgrade(upgrade) => return rolling::plan(new, upgrade, &deps),
        PlanOperation::ReplaceNodes => return replace::plan(old, new, &deps),
        _ => {}
    }
    let work = work::for_operation(old, new, operation, &deps, services)?;
    build::build(&work, &deps)
}
