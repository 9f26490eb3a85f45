//! Creating a cluster: the template at a size becomes a solved layout, a create plan,
//! and, on submit, the cluster row and its job stored together.

use domain::catalog::coopr::export_bundle;
use domain::catalog::{Catalog, ClusterTemplate};
use domain::layout::Layout;
use domain::names::{ClusterName, TemplateName};
use domain::plan::{plan_create, ServiceGraph};
use domain::solver::{solve_request, SolveRequest};
use serde_json::{Map, Value};

use super::{layout_json, ClusterState, OperationError, Preview};
use crate::queue::{ClusterEffects, JobId, Queue, SubmitOptions};
use crate::store::approvals::refresh_held_cluster_in;
use crate::store::clusters::{
    cluster_in as store_cluster_in, insert_cluster, lock_cluster_state, Cluster, NewCluster,
};
use crate::store::{Store, StoreError};

const TEMPLATES: &str = "clustertemplates";

/// A user's request for a new cluster.
#[derive(Debug, Clone)]
pub struct CreateRequest {
    pub tenant_id: String,
    pub owner_id: Option<String>,
    pub name: ClusterName,
    pub template: TemplateName,
    /// Size, services, provider and machine types as the solver takes them.
    pub solve: SolveRequest,
    /// Merged over the template's default config, key by key. Its `parameters` key
    /// holds the template parameter values given, checked against the template.
    pub config: Map<String, Value>,
}

/// Everything a create would store, computed without storing anything.
#[derive(Debug, Clone)]
pub struct CreatePlan {
    pub preview: Preview,
    pub template: ClusterTemplate,
    pub template_version: i64,
    pub provider: String,
    pub snapshot: Catalog,
    pub config: Map<String, Value>,
    pub lease_expires_ms: Option<i64>,
}

/// Solves and plans `request` against the tenant's current catalog.
pub async fn preview_create(
    store: &Store,
    request: &CreateRequest,
    now_ms: i64,
) -> Result<CreatePlan, OperationError> {
    let catalog = crate::catalog::load(store, &request.tenant_id).await?;
    let template = catalog
        .resolved_template(&request.template)
        .map_err(
            |error| match catalog.clustertemplate(request.template.as_str()) {
                None => OperationError::UnknownTemplate(request.template.to_string()),
                Some(_) => OperationError::BadTemplate {
                    template: request.template.to_string(),
                    message: error.message(),
                },
            },
        )?;
    let template_version = match store
        .catalog_entity(&request.tenant_id, TEMPLATES, request.template.as_str())
        .await
    {
        Ok(revision) => revision.version,
        Err(StoreError::NotFound(_)) => 0,
        Err(error) => return Err(error.into()),
    };
    let layout = solve_request(&catalog, &template, &request.solve)
        .map_err(OperationError::Unsatisfiable)?;
    let provider = request
        .solve
        .provider
        .as_ref()
        .or(template.defaults.provider.as_ref())
        .map(|name| name.as_str().to_owned())
        .unwrap_or_default();
    super::check_provider_allowed(store, &request.tenant_id, &catalog, &provider).await?;
    let empty = Layout::empty(request.template.clone());
    super::node_limits::check_new_nodes(
        store.docker_limits(),
        &catalog,
        &provider,
        &empty,
        &layout,
    )?;
    super::check_automators(&catalog, &layout)?;
    let dag = plan_create(&layout, &ServiceGraph::from_catalog(&catalog))?;
    let mut config: Map<String, Value> = template.defaults.effective_config().into_iter().collect();
    for (key, value) in &request.config {
        config.insert(key.clone(), value.clone());
    }
    super::parameters::settle_create(&template, &request.config, &mut config)?;
    let lease = template
        .lease()
        .map(|lease| lease.initial_duration())
        .transpose()
        .map_err(|error| OperationError::BadTemplate {
            template: request.template.to_string(),
            message: error.to_string(),
        })?;
    let lease_expires_ms = lease
        .filter(|duration| !duration.is_unlimited())
        .map(|duration| now_ms.saturating_add(i64::try_from(duration.0).unwrap_or(i64::MAX)));
    let snapshot = crate::catalog::snapshot(&catalog, &template, &provider, &layout);
    Ok(CreatePlan {
        preview: Preview {
            from: Layout::empty(request.template.clone()),
            to: layout,
            dag,
        },
        template,
        template_version,
        provider,
        snapshot,
        config,
        lease_expires_ms,
    })
}

/// Creates the cluster and submits its create job in one transaction. Returns the
/// cluster and the job id.
pub async fn create_cluster(
    queue: &Queue,
    request: &CreateRequest,
    options: SubmitOptions,
    now_ms: i64,
) -> Result<(Cluster, JobId), OperationError> {
    let store = queue.store();
    let plan = preview_create(store, request, now_ms).await?;
    submit_create(queue, request, &plan, options, now_ms, None).await
}

/// Submits the create job of a cluster held for approval (see [`super::approval`]),
/// re-planned against the catalog as it is now, in the transaction that marks its
/// request approved. Returns the job id.
pub async fn create_held(
    queue: &Queue,
    request: &CreateRequest,
    cluster_id: &str,
    approval: &super::approval::Approval<'_>,
    now_ms: i64,
) -> Result<JobId, OperationError> {
    let store = queue.store();
    let plan = preview_create(store, request, now_ms).await?;
    let (_, job_id) = submit_create(
        queue,
        request,
        &plan,
        SubmitOptions::default(),
        now_ms,
        Some((cluster_id, approval)),
    )
    .await?;
    Ok(job_id)
}

/// The cluster row a create stores (in `state`).
pub(super) fn new_cluster(
    request: &CreateRequest,
    plan: &CreatePlan,
    state: ClusterState,
) -> NewCluster {
    let template_json =
        serde_json::to_string(&domain::catalog::coopr::entity_to_value(&plan.template))
            .unwrap_or_else(|_| "{}".to_owned());
    NewCluster {
        tenant_id: request.tenant_id.clone(),
        name: request.name.to_string(),
        template_name: request.template.to_string(),
        template_version: plan.template_version,
        template_json,
        owner_id: request.owner_id.clone(),
        state,
        layout_json: layout_json(&plan.preview.from),
        config_json: Value::Object(plan.config.clone()).to_string(),
        catalog_json: export_bundle(&plan.snapshot).to_string(),
        provider: plan.provider.clone(),
        lease_expires_ms: plan.lease_expires_ms,
    }
}

/// Asks the gates, then stores the cluster (or, for a held one, its fresh plan over
/// its row, marking the request approved) and its create job in one transaction.
async fn submit_create(
    queue: &Queue,
    request: &CreateRequest,
    plan: &CreatePlan,
    options: SubmitOptions,
    now_ms: i64,
    held: Option<(&str, &super::approval::Approval<'_>)>,
) -> Result<(Cluster, JobId), OperationError> {
    let store = queue.store();
    // The tenant's gates, after the preview and before anything is written.
    crate::hooks::check_gates(
        store,
        &request.tenant_id,
        crate::hooks::GateCall::create(request, &plan.preview),
    )
    .await?;
    let new = new_cluster(request, plan, ClusterState::Creating);
    let options = SubmitOptions {
        effects: Some(ClusterEffects {
            running: ClusterState::Creating,
            succeeded: ClusterState::Active,
            failed: ClusterState::Failed,
            from_layout_json: Some(layout_json(&plan.preview.from)),
            to_layout_json: Some(layout_json(&plan.preview.to)),
            requested_by: request.owner_id.clone(),
            forced: false,
            catalog_json: None,
            stop_catalog_json: None,
        }),
        non_idempotent_steps: super::change::non_idempotent_steps(&plan.snapshot),
        ..options
    };
    let (_turn, mut tx) = store.begin_write().await?;
    // Checked against the tenant's quotas below: the cluster's nodes are all new.
    let nodes = plan.preview.to.size() as u64;
    let backend = store.backend();
    let cluster = match held {
        None => {
            super::quota::check_growth(&mut tx, backend, &request.tenant_id, 1, nodes).await?;
            insert_cluster(&mut tx, &new, now_ms).await?
        }
        Some((cluster_id, _)) => {
            let state = lock_cluster_state(&mut tx, backend, cluster_id).await?;
            if state != ClusterState::AwaitingApproval {
                return Err(OperationError::Busy {
                    name: request.name.to_string(),
                    state,
                    hint: "it no longer awaits approval".to_owned(),
                });
            }
            // The held cluster counts already; only its nodes are new.
            super::quota::check_growth(&mut tx, backend, &request.tenant_id, 0, nodes).await?;
            refresh_held_cluster_in(&mut tx, cluster_id, &new, now_ms).await?;
            store_cluster_in(&mut tx, cluster_id).await?
        }
    };
    let job_id = queue
        .submit_in(
            &mut tx,
            &cluster.tenant_id,
            &cluster.id,
            api_types::Operation::Create,
            &plan.preview.dag,
            &options,
            now_ms,
        )
        .await?;
    if let Some((_, approval)) = held {
        super::approval::approve_in(&mut tx, approval, job_id.as_str(), now_ms).await?;
    }
    tx.commit().await.map_err(StoreError::from)?;
    Ok((cluster, job_id))
}
