//! Clusters: create (or preview), list, show, plan and submit changes, extend the
//! lease, delete. Every user of a tenant sees and changes the tenant's clusters; the
//! tenant's quotas (live clusters, live nodes) are checked before a create or a grow.

use std::collections::{BTreeSet, HashMap};

use domain::cost::estimate;
use domain::names::{ClusterName, ServiceName, TemplateName};
use domain::plan::TaskDag;
use domain::solver::{NodesToRemove, SolveRequest};
use serde_json::{Map, Value};

use super::{
    AuditRecord, Caller, ClusterChangeRequest, ClusterCreateRequest, ClusterDetail, ClusterView,
    LeaseExtension, NodeView, PlanView, Problem, Service, ServiceError, SubmittedJob,
};
use crate::catalog::memo::CatalogMemo;
use crate::operations::{self, ClusterChange, ClusterState, CreateRequest, Preview};
use crate::queue::{JobId, SubmitOptions};
use crate::store::clusters::Cluster;
use crate::store::now_ms;
use api_types::{AuditAction, ClusterLink, PlanGraph, StepCount, PLAN_GRAPH_MAX_TASKS};

const MAX_LEASE_SECONDS: u64 = 10 * 365 * 24 * 3600;

pub(super) fn field_problem(path: &str, message: impl Into<String>) -> ServiceError {
    let message = message.into();
    ServiceError::Invalid {
        message: format!("{path}: {message}"),
        details: vec![Problem {
            path: path.to_owned(),
            message,
        }],
    }
}

fn parse_names<T>(
    path: &str,
    names: &Option<String>,
    parse: impl Fn(&str) -> Result<T, domain::names::NameError>,
) -> Result<Option<T>, ServiceError> {
    names
        .as_deref()
        .map(|name| parse(name).map_err(|error| field_problem(path, error.to_string())))
        .transpose()
}

fn parse_services(
    services: &Option<Vec<String>>,
) -> Result<Option<BTreeSet<ServiceName>>, ServiceError> {
    services
        .as_ref()
        .map(|names| {
            names
                .iter()
                .map(|name| {
                    ServiceName::parse(name)
                        .map_err(|error| field_problem("services", error.to_string()))
                })
                .collect()
        })
        .transpose()
}

/// The engine's create operation for a request of `owner_id` in `tenant_id`, each
/// field checked.
pub(super) fn create_operation(
    request: &ClusterCreateRequest,
    tenant_id: &str,
    owner_id: Option<String>,
) -> Result<CreateRequest, ServiceError> {
    let name = ClusterName::parse(&request.name)
        .map_err(|error| field_problem("name", error.to_string()))?;
    let template = TemplateName::parse(&request.template)
        .map_err(|error| field_problem("template", error.to_string()))?;
    if request.size == 0 {
        return Err(field_problem("size", "a cluster needs at least one node"));
    }
    Ok(CreateRequest {
        tenant_id: tenant_id.to_owned(),
        owner_id,
        name,
        template,
        solve: SolveRequest {
            size: request.size,
            services: request.services.clone(),
            provider: parse_names("provider", &request.provider, |raw| {
                domain::names::ProviderName::parse(raw)
            })?,
            hardwaretype: parse_names("hardwaretype", &request.hardwaretype, |raw| {
                domain::names::HardwareTypeName::parse(raw)
            })?,
            imagetype: parse_names("imagetype", &request.imagetype, |raw| {
                domain::names::ImageTypeName::parse(raw)
            })?,
        },
        config: with_parameters(
            request.config.clone().unwrap_or_default(),
            request.parameters.as_ref(),
        ),
    })
}

/// The request's config with the parameter values given beside it put under its
/// `parameters` key (over any given there), where the create operation checks them.
fn with_parameters(
    mut config: Map<String, Value>,
    parameters: Option<&Map<String, Value>>,
) -> Map<String, Value> {
    let Some(given) = parameters.filter(|given| !given.is_empty()) else {
        return config;
    };
    let key = domain::catalog::parameters::CONFIG_KEY;
    let mut values = match config.remove(key) {
        Some(Value::Object(values)) => values,
        _ => Map::new(),
    };
    values.extend(given.clone());
    config.insert(key.to_owned(), Value::Object(values));
    config
}

/// The engine's change for a user's request, each field checked: the one way from the
/// API's request to the engine's change.
impl TryFrom<&ClusterChangeRequest> for ClusterChange {
    type Error = ServiceError;

    fn try_from(change: &ClusterChangeRequest) -> Result<Self, ServiceError> {
        Ok(match change {
            ClusterChangeRequest::AddServices { services } => {
                if services.is_empty() {
                    return Err(field_problem("services", "name at least one service"));
                }
                ClusterChange::AddServices {
                    services: services.clone(),
                }
            }
            ClusterChangeRequest::AddNodes { count } => {
                if *count == 0 {
                    return Err(field_problem("count", "add at least one node"));
                }
                ClusterChange::AddNodes { count: *count }
            }
            ClusterChangeRequest::RemoveNodes { count, nodes } => ClusterChange::RemoveNodes {
                which: nodes_to_remove(*count, nodes.as_deref())?,
            },
            ClusterChangeRequest::RemoveServices { services } => {
                if services.is_empty() {
                    return Err(field_problem(
                        "services",
                        "name at least one service to remove",
                    ));
                }
                ClusterChange::RemoveServices {
                    services: services.clone(),
                }
            }
            ClusterChangeRequest::Reconfigure { restart, config } => ClusterChange::Reconfigure {
                restart: *restart,
                config: config.clone(),
            },
            ClusterChangeRequest::Start { services } => ClusterChange::Start {
                services: parse_services(services)?,
            },
            ClusterChangeRequest::Stop { services } => ClusterChange::Stop {
                services: parse_services(services)?,
            },
            ClusterChangeRequest::Restart { services } => ClusterChange::Restart {
                services: parse_services(services)?,
            },
            ClusterChangeRequest::Rollback { job_id } => ClusterChange::Rollback {
                job_id: JobId::from(job_id.as_str()),
            },
            ClusterChangeRequest::Upgrade { max_unavailable } => {
                let max_unavailable = max_unavailable.unwrap_or(1);
                if max_unavailable == 0 {
                    return Err(field_problem(
                        "max_unavailable",
                        "upgrade at least one node at a time",
                    ));
                }
                ClusterChange::Upgrade { max_unavailable }
            }
            ClusterChangeRequest::ReplaceNodes { nodes, force } => {
                let named: BTreeSet<u32> = nodes.iter().copied().collect();
                if named.is_empty() {
                    return Err(field_problem("nodes", "name at least one node to replace"));
                }
                if named.len() != nodes.len() {
                    return Err(field_problem("nodes", "a node is named twice"));
                }
                ClusterChange::ReplaceNodes {
                    nodes: named,
                    accept_data_loss: *force,
                }
            }
            ClusterChangeRequest::SyncKeys {} => ClusterChange::SyncKeys,
        })
    }
}

/// A scale-in as asked: how many nodes, which ones, or both when they agree.
fn nodes_to_remove(
    count: Option<u32>,
    nodes: Option<&[u32]>,
) -> Result<NodesToRemove, ServiceError> {
    match (count, nodes) {
        (Some(0), _) => Err(field_problem("count", "remove at least one node")),
        (_, Some([])) => Err(field_problem("nodes", "name at least one node")),
        (None, None) => Err(field_problem(
            "count",
            "say how many nodes to remove (count) or which ones (nodes)",
        )),
        (Some(count), None) => Ok(NodesToRemove::Count(count)),
        (count, Some(numbers)) => {
            let named: BTreeSet<u32> = numbers.iter().copied().collect();
            if named.len() != numbers.len() {
                return Err(field_problem("nodes", "a node is named twice"));
            }
            match count {
                Some(count) if count as usize != named.len() => Err(field_problem(
                    "count",
                    format!(
                        "count is {count} but {} node(s) are named; give one or make them agree",
                        named.len()
                    ),
                )),
                _ => Ok(NodesToRemove::Named(named)),
            }
        }
    }
}

/// The dry run's answer: every task and dependency of a small plan, only the step
/// counts of a large one (its dependencies grow with the square of its nodes).
fn plan_view(preview: &Preview) -> PlanView {
    let graph = (preview.dag.len() <= PLAN_GRAPH_MAX_TASKS).then(|| PlanGraph {
        steps: step_labels(&preview.dag),
        dag: super::views::plan_dag(&preview.dag),
    });
    PlanView {
        from: super::views::layout_view(&preview.from),
        to: super::views::layout_view(&preview.to),
        tasks: preview.dag.len(),
        step_counts: preview
            .dag
            .step_counts()
            .into_iter()
            .map(|(step, tasks)| StepCount { step, tasks })
            .collect(),
        graph,
        credentials: None,
        upgrade: None,
        warnings: Vec::new(),
        cost: None,
        keys: None,
    }
}

/// How many nodes the cluster's committed layout has (an unreadable one counts as
/// none: the change's own planning says what is wrong with it).
fn committed_size(cluster: &Cluster) -> u64 {
    serde_json::from_str::<domain::layout::Layout>(&cluster.layout_json)
        .map_or(0, |layout| layout.size() as u64)
}

/// The nodes a change adds, before it is solved: only adding nodes grows a cluster
/// (added services go onto the nodes it has).
fn requested_growth(change: &ClusterChange) -> u64 {
    match change {
        ClusterChange::AddNodes { count } => u64::from(*count),
        _ => 0,
    }
}

/// What a held operation's preview showed, kept with its request.
fn held_preview(
    preview: &Preview,
    template: &str,
    provider: &str,
) -> super::approvals::HeldPreview {
    let size = preview.to.size() as u64;
    super::approvals::HeldPreview {
        template: template.to_owned(),
        provider: provider.to_owned(),
        size,
        growth: size.saturating_sub(preview.from.size() as u64),
        tasks: preview.dag.len(),
        steps: preview
            .dag
            .step_counts()
            .into_iter()
            .map(|(step, tasks)| StepCount { step, tasks })
            .collect(),
    }
}

/// The hold of an operation that `rule` (or the budget, which gives the `note`) holds:
/// the caller's request as asked, re-read and re-planned at approval, and what its
/// preview showed.
fn hold_of<'a>(
    caller: &'a Caller,
    rule: &'a operations::approval::Rule,
    note: Option<String>,
    request: &impl serde::Serialize,
    preview: &super::approvals::HeldPreview,
) -> Result<operations::approval::Hold<'a>, ServiceError> {
    Ok(operations::approval::Hold {
        rule,
        requested_by: &caller.principal.user_id,
        request_json: serde_json::to_string(request).map_err(ServiceError::internal)?,
        preview_json: serde_json::to_string(preview).map_err(ServiceError::internal)?,
        note,
    })
}

fn step_labels(dag: &TaskDag) -> Vec<String> {
    dag.tasks()
        .iter()
        .map(|task| match &task.service {
            Some(service) => format!("{}-{}-{service}", task.node, task.action),
            None => format!("{}-{}", task.node, task.action),
        })
        .collect()
}

/// What a job's page shows of its cluster ([`Service::cluster_outline`]).
#[derive(Debug, Clone)]
pub struct ClusterOutline {
    pub name: String,
    pub nodes: Vec<NodeView>,
    pub links: Vec<ClusterLink>,
}

/// The view of a stored cluster, with what only the service knows: the owner's name
/// and how far the lease may be extended.
pub(super) fn cluster_view(
    memo: &CatalogMemo,
    cluster: Cluster,
    usernames: &HashMap<String, String>,
    now_ms: i64,
) -> Result<ClusterView, ServiceError> {
    // A snapshot that no longer resolves its template offers no extension.
    let limits = super::lease::limits_of(memo, &cluster).ok();
    let mut view = ClusterView::try_from(cluster)?;
    view.owner = view
        .owner_id
        .as_ref()
        .and_then(|id| usernames.get(id).cloned());
    if let Some(limits) = limits {
        view.lease_next_end_ms = limits.next_end(view.lease_expires_ms, now_ms);
        view.lease_latest_end_ms = limits.latest_end_ms;
    }
    Ok(view)
}

/// Each service of the node with what its last check found; services without a check
/// are `unknown`, saying so.
fn node_health(
    node: &NodeView,
    checks: &[crate::store::health::HealthRow],
) -> Vec<api_types::ServiceHealthView> {
    node.services
        .iter()
        .map(|service| {
            let row = checks
                .iter()
                .find(|row| row.node_number == node.number && row.service == *service);
            match row {
                Some(row) => api_types::ServiceHealthView {
                    service: service.clone(),
                    health: row.health,
                    checked_at_ms: row.checked_at_ms,
                    detail: row.detail.clone().or_else(|| {
                        row.checked_at_ms
                            .is_none()
                            .then(|| "not checked yet".to_owned())
                    }),
                },
                None => api_types::ServiceHealthView {
                    service: service.clone(),
                    health: api_types::ServiceHealth::Unknown,
                    checked_at_ms: None,
                    detail: Some("the service declares no health check".to_owned()),
                },
            }
        })
        .collect()
}

fn live(cluster: &Cluster) -> bool {
    cluster.state != ClusterState::Deleted
}

impl Service {
    /// The cluster `id` if the caller may see it (deleted clusters too: their page and
    /// jobs stay readable), else the caller's tenant's live cluster named `id` (scripts
    /// and `corral apply` know clusters by name); otherwise `NotFound`, the same answer
    /// as for an id that does not exist.
    pub(super) async fn visible_cluster(
        &self,
        caller: &Caller,
        id: &str,
    ) -> Result<Cluster, ServiceError> {
        use crate::store::StoreError;
        let what = || format!("cluster {id:?}");
        let found = match self.store.cluster(id).await {
            Err(StoreError::NotFound(_)) => {
                self.store.cluster_by_name(caller.tenant_id(), id).await
            }
            other => other,
        };
        let cluster = found.map_err(|error| match error {
            StoreError::NotFound(_) => ServiceError::NotFound(what()),
            other => other.into(),
        })?;
        caller.require_visible(&cluster.tenant_id, what)?;
        Ok(cluster)
    }

    /// A visible cluster that still exists: what changes act on. A deleted one is a
    /// conflict, not a 404: it is there to read, not to change.
    pub(super) async fn live_cluster(
        &self,
        caller: &Caller,
        id: &str,
    ) -> Result<Cluster, ServiceError> {
        let cluster = self.visible_cluster(caller, id).await?;
        if !live(&cluster) {
            return Err(ServiceError::Conflict(format!(
                "cluster {} is deleted: its page and jobs stay readable, but it cannot \
                 change (create a new cluster instead)",
                cluster.name
            )));
        }
        Ok(cluster)
    }

    /// What creating would do, without doing it (the dry run).
    pub async fn preview_cluster(
        &self,
        caller: &Caller,
        request: &ClusterCreateRequest,
    ) -> Result<PlanView, ServiceError> {
        let operation = self.caller_create_operation(caller, request).await?;
        let plan = operations::preview_create(&self.store, &operation, now_ms()).await?;
        let mut view = plan_view(&plan.preview);
        view.cost = Some(super::cost::estimate_view(
            &estimate(&plan.snapshot, &plan.provider, &plan.preview.to),
            None,
        ));
        view.credentials = self
            .plan_credentials(caller, &plan.snapshot, &plan.provider, &plan.preview.dag)
            .await?;
        Ok(view)
    }

    pub async fn create_cluster(
        &self,
        caller: &Caller,
        request: &ClusterCreateRequest,
    ) -> Result<SubmittedJob, ServiceError> {
        let operation = self.caller_create_operation(caller, request).await?;
        self.check_create_credentials(caller, &operation).await?;
        let over_budget = self.check_create_budget(caller, &operation).await?;
        if let Some(held) = self
            .hold_create(caller, request, &operation, over_budget)
            .await?
        {
            return Ok(held);
        }
        let (cluster, job_id) =
            operations::create_cluster(&self.queue, &operation, SubmitOptions::default(), now_ms())
                .await
                .map_err(name_taken(&request.name))?;
        self.wake_workers();
        let mut record = AuditRecord::new(
            &cluster.tenant_id,
            AuditAction::ClusterCreate,
            "cluster",
            &cluster.name,
        );
        record.after = serde_json::to_string(&serde_json::json!({
            "template": request.template, "size": request.size, "services": request.services,
        }))
        .ok();
        self.audit(caller, record).await;
        Ok(SubmittedJob {
            cluster: ClusterView::try_from(cluster)?,
            job_id: job_id.into_string(),
            approval: None,
        })
    }

    /// The create operation of the caller's request, within the tenant's quotas; a
    /// template the caller may not see is refused exactly as one that does not exist.
    async fn caller_create_operation(
        &self,
        caller: &Caller,
        request: &ClusterCreateRequest,
    ) -> Result<CreateRequest, ServiceError> {
        let operation = create_operation(
            request,
            caller.tenant_id(),
            Some(caller.principal.user_id.clone()),
        )?;
        if let Err(ServiceError::NotFound(_)) = self
            .check_template_visible(caller, operation.template.as_str())
            .await
        {
            return Err(
                operations::OperationError::UnknownTemplate(request.template.clone()).into(),
            );
        }
        let size = u64::from(request.size);
        self.check_size(caller.tenant_id(), "size", 1, size, size)
            .await?;
        Ok(operation)
    }

    /// Holds the create when a rule of the tenant says it needs approval: the cluster
    /// is stored `awaiting-approval` with its request, and nothing else is made.
    async fn hold_create(
        &self,
        caller: &Caller,
        request: &ClusterCreateRequest,
        operation: &CreateRequest,
        over_budget: Option<super::cost::OverBudgetOutcome>,
    ) -> Result<Option<SubmittedJob>, ServiceError> {
        if over_budget.is_none() && !self.has_approval_rules(caller.tenant_id()).await? {
            return Ok(None);
        }
        let now = now_ms();
        let plan = operations::preview_create(&self.store, operation, now).await?;
        let size = plan.preview.to.size() as u64;
        let ask = operations::approval::Ask {
            operation: api_types::ApprovalOperation::Create,
            template: operation.template.as_str(),
            provider: &plan.provider,
            size,
            growth: size,
            cost_per_month: estimate(&plan.snapshot, &plan.provider, &plan.preview.to).per_month(),
            by_admin: false,
        };
        let Some((rule, note)) = self
            .holding_rule_or_budget(caller, caller.tenant_id(), ask, over_budget)
            .await?
        else {
            return Ok(None);
        };
        let preview = held_preview(&plan.preview, operation.template.as_str(), &plan.provider);
        let hold = hold_of(caller, &rule, note, request, &preview)?;
        let (cluster, request_id) =
            operations::approval::hold_create(&self.store, operation, &plan, &hold, now)
                .await
                .map_err(name_taken(&request.name))?;
        self.submitted_held(caller, cluster, &request_id)
            .await
            .map(Some)
    }

    /// Holds a grow (adding nodes) when a rule of the tenant says it needs approval.
    async fn hold_grow(
        &self,
        caller: &Caller,
        cluster: &Cluster,
        request: &ClusterChangeRequest,
        change: &ClusterChange,
    ) -> Result<Option<SubmittedJob>, ServiceError> {
        if requested_growth(change) == 0 {
            return Ok(None);
        }
        let has_budget = self
            .store
            .tenant_budget(&cluster.tenant_id)
            .await?
            .is_some();
        if !has_budget && !self.has_approval_rules(&cluster.tenant_id).await? {
            return Ok(None);
        }
        let plan = operations::preview_change(&self.queue, cluster, change).await?;
        let size = plan.preview.to.size() as u64;
        let growth = size.saturating_sub(plan.preview.from.size() as u64);
        let after = estimate(&plan.snapshot, &cluster.provider, &plan.preview.to);
        let before = estimate(&plan.snapshot, &cluster.provider, &plan.preview.from);
        let over_budget = self
            .check_tenant_budget(
                caller,
                &cluster.tenant_id,
                after.per_hour.saturating_sub(before.per_hour),
            )
            .await?;
        let ask = operations::approval::Ask {
            operation: api_types::ApprovalOperation::Grow,
            template: &cluster.template_name,
            provider: &cluster.provider,
            size,
            growth,
            cost_per_month: after.per_month(),
            by_admin: false,
        };
        let Some((rule, note)) = self
            .holding_rule_or_budget(caller, &cluster.tenant_id, ask, over_budget)
            .await?
        else {
            return Ok(None);
        };
        let preview = held_preview(&plan.preview, &cluster.template_name, &cluster.provider);
        let hold = hold_of(caller, &rule, note, request, &preview)?;
        let request_id =
            operations::approval::hold_grow(&self.queue, cluster, size, &hold, now_ms()).await?;
        // Re-read: the hold moved it to awaiting-approval.
        let cluster = self.store.cluster(&cluster.id).await?;
        self.submitted_held(caller, cluster, &request_id)
            .await
            .map(Some)
    }

    /// What a held create or grow answers: the cluster, and the approval request it
    /// waits on (audited as held), with no job yet.
    async fn submitted_held(
        &self,
        caller: &Caller,
        cluster: Cluster,
        request_id: &str,
    ) -> Result<SubmittedJob, ServiceError> {
        let view = super::approvals::approval_view(self.store.approval_request(request_id).await?);
        self.audit_held(caller, &view).await;
        Ok(SubmittedJob {
            cluster: ClusterView::try_from(cluster)?,
            job_id: String::new(),
            approval: Some(view),
        })
    }

    /// Checks a create against the tenant's budget (when it has one): refused, held
    /// (the outcome), or nothing to say.
    async fn check_create_budget(
        &self,
        caller: &Caller,
        operation: &CreateRequest,
    ) -> Result<Option<super::cost::OverBudgetOutcome>, ServiceError> {
        if self
            .store
            .tenant_budget(caller.tenant_id())
            .await?
            .is_none()
        {
            return Ok(None);
        }
        let plan = operations::preview_create(&self.store, operation, now_ms()).await?;
        let added = estimate(&plan.snapshot, &plan.provider, &plan.preview.to).per_hour;
        self.check_tenant_budget(caller, caller.tenant_id(), added)
            .await
    }

    /// The rule that holds `ask`, else the budget's hold (an approval rule comes
    /// first: it names who decides), with the note the request shows instead of the
    /// rule's description.
    async fn holding_rule_or_budget(
        &self,
        caller: &Caller,
        tenant_id: &str,
        ask: operations::approval::Ask<'_>,
        over_budget: Option<super::cost::OverBudgetOutcome>,
    ) -> Result<Option<(operations::approval::Rule, Option<String>)>, ServiceError> {
        if let Some(rule) = self.holding_rule(caller, tenant_id, ask).await? {
            return Ok(Some((rule, None)));
        }
        Ok(over_budget
            .map(|super::cost::OverBudgetOutcome::Hold { rule, note }| (rule, Some(note))))
    }

    pub async fn cluster(&self, caller: &Caller, id: &str) -> Result<ClusterDetail, ServiceError> {
        let cluster = self.visible_cluster(caller, id).await?;
        let nodes = self.store.list_nodes(&cluster.id).await?;
        let links = self.links_of(&cluster, &nodes);
        let checks = self.store.cluster_health(&cluster.id).await?;
        let nodes = nodes
            .into_iter()
            .map(|node| {
                let mut view = NodeView::try_from(node)?;
                view.health = node_health(&view, &checks);
                Ok(view)
            })
            .collect::<Result<_, ServiceError>>()?;
        let jobs = super::jobs::cluster_job_views(self.queue.cluster_jobs(&cluster.id).await?);
        let usernames = self
            .owner_names(&cluster.tenant_id, std::slice::from_ref(&cluster))
            .await?;
        let current = self
            .catalogs
            .current(&self.store, &cluster.tenant_id)
            .await?;
        let behind = super::upgrades::behind(&self.catalogs, &cluster, &current);
        let approvals = self
            .store
            .cluster_approval_requests(&cluster.id)
            .await?
            .into_iter()
            .map(super::approvals::approval_view)
            .collect();
        let heal_note = self
            .store
            .heal_note(&cluster.id)
            .await?
            .map(|(text, at_ms)| api_types::HealNote { text, at_ms });
        let healing = self.healing_view(&cluster).await?;
        let pinned = self.store.cluster_pinned(&cluster.id).await?;
        let cluster_id = cluster.id.clone();
        let mut view = cluster_view(&self.catalogs, cluster, &usernames, now_ms())?;
        super::upgrades::note_catalog_behind(&mut view, behind, &current);
        view.cost = self.cost_of_cluster(&cluster_id, now_ms()).await?;
        Ok(ClusterDetail {
            cluster: view,
            nodes,
            jobs,
            links,
            approvals,
            heal_note,
            healing,
            pinned,
        })
    }

    /// What a job's page shows of its cluster: its name, nodes and links, without the
    /// rest of [`Service::cluster`] (jobs, health, approvals, healing, cost, catalog).
    pub async fn cluster_outline(
        &self,
        caller: &Caller,
        id: &str,
    ) -> Result<ClusterOutline, ServiceError> {
        let cluster = self.visible_cluster(caller, id).await?;
        let nodes = self.store.list_nodes(&cluster.id).await?;
        let links = self.links_of(&cluster, &nodes);
        Ok(ClusterOutline {
            name: cluster.name,
            nodes: nodes
                .into_iter()
                .map(NodeView::try_from)
                .collect::<Result<_, _>>()?,
            links,
        })
    }

    /// The cluster's links, from its snapshot as kept by the memo.
    fn links_of(
        &self,
        cluster: &Cluster,
        nodes: &[crate::store::clusters::nodes::Node],
    ) -> Vec<ClusterLink> {
        // Links never fail a request: an unreadable snapshot has none.
        match self.catalogs.snapshot(&cluster.catalog_json) {
            Ok(snapshot) => crate::links::links_from(cluster, &snapshot.catalog, nodes),
            Err(_) => Vec::new(),
        }
    }

    /// What `change` would do to the cluster (layouts and tasks), without doing it.
    pub async fn plan_change(
        &self,
        caller: &Caller,
        id: &str,
        change: &ClusterChangeRequest,
    ) -> Result<PlanView, ServiceError> {
        let (cluster, change) = self.checked_change(caller, id, change).await?;
        let plan = operations::preview_change(&self.queue, &cluster, &change).await?;
        let mut view = plan_view(&plan.preview);
        view.upgrade = plan
            .upgrade
            .as_ref()
            .map(super::upgrades::upgrade_plan_view);
        view.warnings = plan.warnings;
        view.cost = Some(super::cost::estimate_view(
            &estimate(&plan.snapshot, &cluster.provider, &plan.preview.to),
            Some(&estimate(
                &plan.snapshot,
                &cluster.provider,
                &plan.preview.from,
            )),
        ));
        view.credentials = self
            .plan_credentials(caller, &plan.snapshot, &cluster.provider, &plan.preview.dag)
            .await?;
        if matches!(change, ClusterChange::SyncKeys) {
            view.keys = Some(self.cluster_key_views(&cluster.id).await?);
        }
        Ok(view)
    }

    /// The live cluster `id` and the change `request` asks of it, once the change was
    /// found to fit it (a rollback's target, the tenant's quotas).
    async fn checked_change(
        &self,
        caller: &Caller,
        id: &str,
        request: &ClusterChangeRequest,
    ) -> Result<(Cluster, ClusterChange), ServiceError> {
        let cluster = self.live_cluster(caller, id).await?;
        let change = ClusterChange::try_from(request)?;
        self.check_rollback_target(&cluster, &change).await?;
        self.check_change_size(&cluster, &change).await?;
        Ok((cluster, change))
    }

    pub async fn change_cluster(
        &self,
        caller: &Caller,
        id: &str,
        request: &ClusterChangeRequest,
    ) -> Result<SubmittedJob, ServiceError> {
        let (cluster, change) = self.checked_change(caller, id, request).await?;
        self.check_change_credentials(caller, &cluster, &change)
            .await?;
        if let Some(held) = self.hold_grow(caller, &cluster, request, &change).await? {
            return Ok(held);
        }
        self.submit(caller, cluster, &change).await
    }

    /// Deletes the cluster; `force` passes over teardown steps that fail (see
    /// [`ClusterChange::Delete`]).
    pub async fn delete_cluster(
        &self,
        caller: &Caller,
        id: &str,
        force: bool,
    ) -> Result<SubmittedJob, ServiceError> {
        let cluster = self.live_cluster(caller, id).await?;
        if cluster.state == ClusterState::Deleting {
            // Asked twice: the delete already under way is the answer.
            if let Some(job) = self
                .queue
                .cluster_jobs(&cluster.id)
                .await?
                .into_iter()
                .next()
            {
                return Ok(SubmittedJob {
                    cluster: ClusterView::try_from(cluster)?,
                    job_id: job.id.into_string(),
                    approval: None,
                });
            }
        }
        self.submit(caller, cluster, &ClusterChange::Delete { force })
            .await
    }

    /// Sets the lease to end `seconds` from now.
    /// Turns healing on or off for the cluster, or (`None`) back to its template's
    /// policy: the owner's or a tenant admin's choice, audited.
    pub async fn set_healing(
        &self,
        caller: &Caller,
        id: &str,
        choice: &api_types::HealingChoice,
    ) -> Result<api_types::HealingView, ServiceError> {
        let cluster = self.live_cluster(caller, id).await?;
        let before = self.store.cluster_healing(&cluster.id).await?;
        self.store
            .set_cluster_healing(&cluster.id, choice.enabled)
            .await?;
        let word = |choice: Option<bool>| match choice {
            Some(true) => "on".to_owned(),
            Some(false) => "off".to_owned(),
            None => "template".to_owned(),
        };
        let mut record = AuditRecord::new(
            &cluster.tenant_id,
            AuditAction::ClusterHealing,
            "cluster",
            &cluster.name,
        );
        record.before = Some(word(before));
        record.after = Some(word(choice.enabled));
        self.audit(caller, record).await;
        self.healing_view(&cluster).await
    }

    /// Whether the cluster heals: its template's policy, or its owner's choice.
    async fn healing_view(
        &self,
        cluster: &Cluster,
    ) -> Result<api_types::HealingView, ServiceError> {
        let owner_choice = self.store.cluster_healing(&cluster.id).await?;
        // An unreadable snapshot heals nothing (the monitor says why in its log).
        let template = crate::heal::policy(cluster).unwrap_or_default();
        Ok(api_types::HealingView {
            enabled: template.for_cluster(owner_choice).enabled,
            owner_choice,
        })
    }

    pub async fn extend_lease(
        &self,
        caller: &Caller,
        id: &str,
        extension: &LeaseExtension,
    ) -> Result<ClusterView, ServiceError> {
        let cluster = self.live_cluster(caller, id).await?;
        if extension.seconds == 0 || extension.seconds > MAX_LEASE_SECONDS {
            return Err(field_problem(
                "seconds",
                format!("must be between 1 and {MAX_LEASE_SECONDS}"),
            ));
        }
        let now = now_ms();
        let until = now.saturating_add((extension.seconds as i64).saturating_mul(1000));
        super::lease::limits_of(&self.catalogs, &cluster)?.check(&cluster, until, now)?;
        match cluster.lease_deletes_at_ms {
            Some(deletes_at) if now >= deletes_at => {
                return Err(ServiceError::Conflict(format!(
                    "the lease of cluster {} ended and its grace is over: it is being deleted",
                    cluster.name
                )));
            }
            // Stopped by its lease, within the grace: it starts again (refused while
            // the stop job still runs: extend again once it ended).
            Some(_) => {
                operations::lease::resume(
                    &self.queue,
                    &cluster.id,
                    until,
                    Some(caller.principal.user_id.as_str()),
                    now,
                )
                .await
                .map_err(|error| match error {
                    operations::OperationError::Busy { hint, .. } => {
                        ServiceError::Conflict(format!(
                            "cluster {} is being stopped because its lease ended ({hint}); \
                             extend the lease again once that job ended",
                            cluster.name
                        ))
                    }
                    other => other.into(),
                })?;
            }
            None => {
                if !self
                    .store
                    .set_cluster_lease(&cluster.id, Some(until))
                    .await?
                {
                    return Err(ServiceError::Conflict(format!(
                        "the lease of cluster {} just ended and its services are being \
                         stopped; extend it again once that job ended",
                        cluster.name
                    )));
                }
            }
        }
        let mut record = AuditRecord::new(
            &cluster.tenant_id,
            AuditAction::ClusterLease,
            "cluster",
            &cluster.name,
        );
        record.before = cluster.lease_expires_ms.map(|at| at.to_string());
        record.after = Some(until.to_string());
        self.audit(caller, record).await;
        Ok(ClusterView::try_from(
            self.store.cluster(&cluster.id).await?,
        )?)
    }

    /// Refuses, before anything is solved or planned, a cluster of `size` nodes past
    /// the server's cap, or `growth` more nodes (and `new_clusters` more clusters)
    /// than the tenant's quotas leave: planning is what costs, so the size asked for
    /// is checked first (the submit checks the planned size again, under a lock).
    async fn check_size(
        &self,
        tenant_id: &str,
        field: &str,
        new_clusters: u64,
        size: u64,
        growth: u64,
    ) -> Result<(), ServiceError> {
        if let Some(refusal) = self.limits.refuse_size(size) {
            return Err(field_problem(field, refusal));
        }
        operations::check_quota(&self.store, tenant_id, new_clusters, growth).await?;
        Ok(())
    }

    /// [`Service::check_size`] for a change that adds nodes.
    async fn check_change_size(
        &self,
        cluster: &Cluster,
        change: &ClusterChange,
    ) -> Result<(), ServiceError> {
        let growth = requested_growth(change);
        if growth == 0 {
            return Ok(());
        }
        let size = committed_size(cluster).saturating_add(growth);
        self.check_size(&cluster.tenant_id, "count", 0, size, growth)
            .await
    }

    /// A rollback names a job; it must be one of this cluster's (else it does not exist).
    async fn check_rollback_target(
        &self,
        cluster: &Cluster,
        change: &ClusterChange,
    ) -> Result<(), ServiceError> {
        if let ClusterChange::Rollback { job_id } = change {
            let owned = self
                .queue
                .cluster_jobs(&cluster.id)
                .await?
                .iter()
                .any(|job| &job.id == job_id);
            if !owned {
                return Err(ServiceError::NotFound(format!("job {job_id:?}")));
            }
        }
        Ok(())
    }

    async fn submit(
        &self,
        caller: &Caller,
        cluster: Cluster,
        change: &ClusterChange,
    ) -> Result<SubmittedJob, ServiceError> {
        let job_id = operations::submit_change(
            &self.queue,
            &cluster.id,
            change,
            Some(&caller.principal.user_id),
            SubmitOptions::default(),
            now_ms(),
        )
        .await?;
        self.wake_workers();
        let action = match change {
            ClusterChange::Delete { force: true } => AuditAction::ClusterForceDelete,
            _ => AuditAction::cluster(change.operation()),
        };
        self.audit(
            caller,
            AuditRecord::new(&cluster.tenant_id, action, "cluster", &cluster.name),
        )
        .await;
        let cluster = self.store.cluster(&cluster.id).await?;
        Ok(SubmittedJob {
            cluster: ClusterView::try_from(cluster)?,
            job_id: job_id.into_string(),
            approval: None,
        })
    }
}

/// An operation's error as the service says it, where a store conflict means a cluster
/// named `name` exists already.
fn name_taken(name: &str) -> impl FnOnce(operations::OperationError) -> ServiceError + '_ {
    move |error| match error {
        operations::OperationError::Store(crate::store::StoreError::Conflict(_)) => {
            ServiceError::Conflict(format!("a cluster named {name:?} already exists"))
        }
        other => other.into(),
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    fn refused_field(result: Result<NodesToRemove, ServiceError>) -> (String, String) {
        match result {
            Err(ServiceError::Invalid { details, .. }) => {
                (details[0].path.clone(), details[0].message.clone())
            }
            other => panic!("expected a field problem, got {other:?}"),
        }
    }

    #[test]
    fn a_scale_in_names_a_count_or_nodes_that_agree() {
        assert_eq!(
            nodes_to_remove(Some(2), None).unwrap(),
            NodesToRemove::Count(2)
        );
        assert_eq!(
            nodes_to_remove(Some(2), Some(&[1003, 1004])).unwrap(),
            NodesToRemove::Named(BTreeSet::from([1003, 1004]))
        );
        assert_eq!(refused_field(nodes_to_remove(None, None)).0, "count");
        assert_eq!(refused_field(nodes_to_remove(Some(0), None)).0, "count");
        assert_eq!(refused_field(nodes_to_remove(None, Some(&[]))).0, "nodes");
        let (path, message) = refused_field(nodes_to_remove(None, Some(&[1003, 1003])));
        assert_eq!(
            (path.as_str(), message.as_str()),
            ("nodes", "a node is named twice")
        );
        let (path, message) = refused_field(nodes_to_remove(Some(1), Some(&[1003, 1004])));
        assert_eq!(path, "count");
        assert!(message.contains("2 node(s) are named"), "{message}");
    }
}
