//! What a step sees: its cluster, the catalog snapshot the cluster was built from, the
//! layout the job works towards, and the nodes made so far, current when the task
//! starts (the parsed parts shared between a job's tasks through [`ViewCache`]).

mod cache;

use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::sync::Arc;

use domain::catalog::coopr::import_bundle;
use domain::catalog::Catalog;
use domain::layout::{Layout, NodeLayout};
use domain::macros::{MacroContext, MacroNode, DEFAULT_ADDRESS_TYPE};

use super::StepError;
use crate::provider::{NodeRecord, LOCAL_PROVIDER};
use crate::queue::{ClaimedTask, JobId, Queue};
use crate::store::clusters::nodes::Node;
use crate::store::clusters::StepCluster;
use crate::store::StoreError;
pub(crate) use cache::ViewCache;
use cache::{JobPlan, NodeRows};

/// The provider's id for a cluster node: stable across retries and processes.
pub fn node_id(cluster_id: &str, number: u32) -> String {
    format!("{cluster_id}-{number}")
}

/// What one step sees (not the API's `TaskView`, which is a task as a page lists it).
pub(crate) struct StepView {
    pub cluster: StepCluster,
    pub catalog: Arc<Catalog>,
    /// The job's target layout, or the layout it started from when the target no longer
    /// has the node (deletions).
    pub layout: Arc<Layout>,
    /// Whether `layout` is the job's target (or the layout it started from).
    layout_is_target: bool,
    pub nodes: NodeRows,
    pub node: u32,
    pub job_id: JobId,
    /// The job is a forced delete or a node replacement: a failed teardown step does
    /// not stop it.
    pub forced: bool,
    /// Who asked for the job (see [`Queue::job_requested_by`]).
    pub requested_by: Option<String>,
    /// The job moves services to other definitions (see [`JobPlan::changes_definitions`]).
    pub changes_definitions: bool,
}

impl StepView {
    pub async fn load(
        queue: &Queue,
        cache: &ViewCache,
        task: &ClaimedTask,
    ) -> Result<Self, StepError> {
        let store = queue.store();
        // The cluster (and its versions) before the node rows and the snapshot: rows
        // newer than the version are harmless, older are not.
        let cluster = store.step_cluster(&task.cluster_id).await?;
        let catalog = cache
            .catalog(&cluster.id, cluster.catalog_version, || async {
                let json = store.catalog_snapshot(&cluster.id).await?;
                import_bundle(&json).map_err(|error| {
                    StepError::Setup(format!(
                        "the catalog snapshot of cluster {} is unreadable: {error}",
                        cluster.name
                    ))
                })
            })
            .await?;
        let plan = cache
            .job_plan(task.job_id.as_str(), || job_plan(queue, &task.job_id))
            .await?;
        // A job that changes definitions runs its own; its stops, those the services
        // were started with.
        let own = if task.action == domain::plan::Action::Stop {
            plan.stop_catalog.as_ref()
        } else {
            plan.catalog.as_ref()
        };
        let catalog = own.map_or(catalog, Arc::clone);
        let has_node = |layout: &Option<Arc<Layout>>| {
            layout
                .as_ref()
                .is_some_and(|layout| layout.nodes.iter().any(|n| n.number == task.node))
        };
        let layout = match (has_node(&plan.to), has_node(&plan.from)) {
            (true, _) => plan.to.clone(),
            (false, true) => plan.from.clone(),
            _ => plan.to.clone().or_else(|| plan.from.clone()),
        }
        .ok_or_else(|| StepError::Setup(format!("job {} has no layout to work on", task.job_id)))?;
        let layout_is_target = plan.to.as_ref().is_some_and(|to| Arc::ptr_eq(to, &layout));
        let nodes = cache
            .nodes(&cluster.id, cluster.nodes_version, |kept| async {
                Ok::<_, StepError>(match kept {
                    Some((since, kept)) => {
                        let (changed, count) =
                            store.nodes_changed_since(&cluster.id, since).await?;
                        let mut rows = rows_since(&kept, changed);
                        // More rows than nodes: some were deleted since (rare; reading
                        // every number each time was O(nodes) a task).
                        if i64::try_from(rows.len()).unwrap_or(i64::MAX) != count {
                            let numbers = store.node_numbers(&cluster.id).await?;
                            keep_numbered(&mut rows, &numbers);
                        }
                        rows
                    }
                    None => store
                        .list_nodes(&cluster.id)
                        .await?
                        .into_iter()
                        .filter_map(by_number)
                        .collect(),
                })
            })
            .await?;
        Ok(Self {
            cluster,
            catalog,
            layout,
            layout_is_target,
            nodes,
            node: task.node,
            job_id: task.job_id.clone(),
            forced: plan.forced,
            requested_by: plan.requested_by.clone(),
            changes_definitions: plan.changes_definitions(),
        })
    }

    pub fn node_id(&self) -> String {
        node_id(&self.cluster.id, self.node)
    }

    pub fn layout_node(&self) -> Result<&NodeLayout, StepError> {
        self.layout
            .nodes
            .iter()
            .find(|node| node.number == self.node)
            .ok_or_else(|| {
                StepError::Setup(format!(
                    "node {} is not in the layout of cluster {}",
                    self.node, self.cluster.name
                ))
            })
    }

    /// The provider type of the cluster's provider (`local` when the snapshot has none).
    pub fn providertype(&self) -> &str {
        self.catalog
            .provider(&self.cluster.provider)
            .map_or(LOCAL_PROVIDER, |provider| provider.providertype.as_str())
    }

    /// The node's provider record; an error if the node was never made.
    pub fn node_record(&self) -> Result<NodeRecord, StepError> {
        self.node_record_if_made()?.ok_or_else(|| {
            StepError::Setup(format!(
                "node {} of cluster {} has not been created",
                self.node, self.cluster.name
            ))
        })
    }

    pub fn node_record_if_made(&self) -> Result<Option<NodeRecord>, StepError> {
        let Some(json) = self
            .nodes
            .get(&self.node)
            .and_then(|node| node.provider_json.as_deref())
        else {
            return Ok(None);
        };
        serde_json::from_str(json).map(Some).map_err(|error| {
            StepError::Setup(format!(
                "the stored record of node {} is unreadable: {error}",
                self.node
            ))
        })
    }

    /// Nodes of the layout that have no address yet (not created).
    pub fn nodes_without_address(&self) -> Vec<u32> {
        self.layout
            .nodes
            .iter()
            .filter(|node| {
                self.nodes
                    .get(&node.number)
                    .and_then(|row| row.hostname.as_ref())
                    .is_none()
            })
            .map(|node| node.number)
            .collect()
    }

    /// The cluster as macros see it from this node. The node list is built once for
    /// all the tasks that see the same layout and node rows.
    pub async fn macro_context(&self, cache: &ViewCache) -> MacroContext {
        let side = if self.layout_is_target { "to" } else { "from" };
        let nodes = cache
            .macro_nodes(
                &format!("{}/{side}", self.job_id),
                self.cluster.nodes_version,
                || async {
                    Ok::<_, Infallible>(macro_nodes(&self.layout, |number| {
                        self.nodes.get(&number).and_then(|row| row.hostname.clone())
                    }))
                },
            )
            .await;
        MacroContext {
            owner: self.cluster.owner_id.clone().unwrap_or_default(),
            nodes: match nodes {
                Ok(nodes) => Arc::clone(&nodes),
                Err(never) => match never {},
            },
            this_node: Some(self.node),
            parameters: parameter_values(&self.cluster.config_json),
        }
    }

    pub fn host(&self) -> String {
        self.nodes
            .get(&self.node)
            .and_then(|row| row.hostname.clone())
            .unwrap_or_else(|| "no address".to_owned())
    }
}

/// A node row under its layout number (a row with an impossible number is no node of
/// the layout).
fn by_number(node: Node) -> Option<(u32, Arc<Node>)> {
    u32::try_from(node.number)
        .ok()
        .map(|number| (number, Arc::new(node)))
}

/// The rows `kept` at some version, updated by the rows `changed` since (nodes deleted
/// since are still there: see [`keep_numbered`]). Unchanged rows are shared.
fn rows_since(kept: &BTreeMap<u32, Arc<Node>>, changed: Vec<Node>) -> BTreeMap<u32, Arc<Node>> {
    let mut rows = kept.clone();
    rows.extend(changed.into_iter().filter_map(by_number));
    rows
}

/// Drops the rows of nodes not numbered in `numbers` (the ones that exist now).
fn keep_numbered(rows: &mut BTreeMap<u32, Arc<Node>>, numbers: &[i64]) {
    let exists: BTreeSet<i64> = numbers.iter().copied().collect();
    rows.retain(|number, _| exists.contains(&i64::from(*number)));
}

/// What `job_id` was submitted with (it never changes afterwards).
async fn job_plan(queue: &Queue, job_id: &JobId) -> Result<JobPlan, StepError> {
    use crate::queue::QueueError;

    let step_error = |error| match error {
        // The database could not answer: a store error, retried like any other.
        QueueError::Store(error) => StepError::Store(error),
        QueueError::NotFound(what) => StepError::Store(StoreError::NotFound(what)),
        other => StepError::Setup(other.to_string()),
    };
    let layouts = queue.job_layouts(job_id).await.map_err(step_error)?;
    let requested_by = queue.job_requested_by(job_id).await.map_err(step_error)?;
    let catalogs = queue.job_catalogs(job_id).await.map_err(step_error)?;
    Ok(JobPlan {
        from: parse_layout(layouts.from_layout_json)?.map(Arc::new),
        to: parse_layout(layouts.to_layout_json)?.map(Arc::new),
        forced: layouts.forced,
        requested_by,
        catalog: parse_catalog(catalogs.catalog_json)?.map(Arc::new),
        stop_catalog: parse_catalog(catalogs.stop_catalog_json)?.map(Arc::new),
    })
}

fn parse_catalog(json: Option<String>) -> Result<Option<Catalog>, StepError> {
    json.map(|json| {
        import_bundle(&json).map_err(|error| {
            StepError::Setup(format!(
                "the job's catalog definitions are unreadable: {error}"
            ))
        })
    })
    .transpose()
}

fn parse_layout(json: Option<String>) -> Result<Option<Layout>, StepError> {
    json.map(|json| {
        serde_json::from_str(&json)
            .map_err(|error| StepError::Setup(format!("stored layout is unreadable: {error}")))
    })
    .transpose()
}

/// The cluster as macros see it from no node in particular (see [`macro_nodes`]).
pub(crate) fn cluster_macro_context(
    cluster: &crate::store::clusters::Cluster,
    layout: &Layout,
    host_of: impl Fn(u32) -> Option<String>,
) -> MacroContext {
    MacroContext {
        owner: cluster.owner_id.clone().unwrap_or_default(),
        nodes: macro_nodes(layout, host_of),
        this_node: None,
        parameters: parameter_values(&cluster.config_json),
    }
}

/// The template parameter values kept in a cluster's config (`%param.NAME%`). A config
/// that does not parse holds none here; the step reading it reports that itself.
fn parameter_values(config_json: &str) -> Arc<serde_json::Map<String, serde_json::Value>> {
    let config: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(config_json).unwrap_or_default();
    Arc::new(domain::catalog::parameters::values_in_config(&config))
}

/// Every node of `layout` with its address from `host_of` (none yet means no address,
/// so macros naming it fail).
fn macro_nodes(layout: &Layout, host_of: impl Fn(u32) -> Option<String>) -> Arc<[MacroNode]> {
    layout
        .nodes
        .iter()
        .map(|node| {
            let host = host_of(node.number).unwrap_or_default();
            let ips = [DEFAULT_ADDRESS_TYPE, "access_v4"]
                .into_iter()
                .filter(|_| !host.is_empty())
                .map(|kind| (kind.to_owned(), host.clone()))
                .collect();
            MacroNode {
                number: node.number,
                host,
                ips,
                services: node.services.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(number: i64, hostname: &str) -> Node {
        crate::testing::stored_node(number, Some(hostname))
    }

    #[test]
    fn rows_since_applies_changes_drops_deleted_nodes_and_shares_the_rest() {
        let kept: BTreeMap<u32, Arc<Node>> = [node(1, "a"), node(2, "b"), node(3, "c")]
            .into_iter()
            .filter_map(by_number)
            .collect();
        // Node 2 got a new address, node 3 was deleted, node 4 was created.
        let mut rows = rows_since(&kept, vec![node(2, "b2"), node(4, "d")]);
        assert_eq!(rows.len(), 4, "more rows than the 3 nodes: one was deleted");
        keep_numbered(&mut rows, &[1, 2, 4]);
        let hosts: Vec<(u32, &str)> = rows
            .iter()
            .map(|(number, row)| (*number, row.hostname.as_deref().unwrap()))
            .collect();
        assert_eq!(hosts, [(1, "a"), (2, "b2"), (4, "d")]);
        assert!(
            Arc::ptr_eq(&rows[&1], &kept[&1]),
            "an unchanged row is shared"
        );
    }
}
