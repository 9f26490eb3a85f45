//! Cluster operations as the engine performs them, without access checks: solve the
//! layout, plan the tasks, and store the cluster and its job in one transaction.
//!
//! [`crate::service`] calls these after checking who asks; the janitor calls them for
//! expired leases. Every operation can be previewed ([`preview_create`],
//! [`preview_change`]) with exactly the computation its submit does, so a preview shows
//! what will run. A cluster runs one job at a time. Those that read or submit jobs take
//! the process's [`Queue`](crate::queue::Queue) (whose store they use too); the others
//! take the store.

pub mod approval;
mod change;
mod create;
pub mod lease;
mod node_limits;
mod parameters;
mod quota;
mod replace;
mod upgrade;

use domain::catalog::coopr::import_bundle;
use domain::catalog::{Catalog, ClusterTemplate};
use domain::layout::Layout;
use domain::names::TemplateName;
use domain::plan::{PlanError, TaskDag};
use domain::solver::Unsatisfiable;

use crate::catalog::CatalogError;
use crate::queue::QueueError;
use crate::store::clusters::Cluster;
use crate::store::{Store, StoreError};

pub use change::{preview_change, submit_change, submit_held_change, ClusterChange};
pub use create::{create_cluster, create_held, preview_create, CreatePlan, CreateRequest};
pub use quota::{check_quota, SizeLimits, DEFAULT_MAX_CLUSTER_NODES, DEFAULT_TENANT_MAX_NODES};
pub use upgrade::UpgradePreview;

pub use api_types::ClusterState;

#[derive(Debug, thiserror::Error)]
pub enum OperationError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Queue(#[from] QueueError),
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error("no cluster template named {0:?}")]
    UnknownTemplate(String),
    #[error("template {template}: {message}")]
    BadTemplate { template: String, message: String },
    #[error("{0}")]
    Unsatisfiable(Unsatisfiable),
    #[error("cannot plan: {0}")]
    Plan(#[from] PlanError),
    #[error("invalid request: {0}")]
    Invalid(String),
    #[error("{0}")]
    QuotaExceeded(String),
    #[error("{0}")]
    ProviderNotAllowed(String),
    /// Template parameter values refused, each naming its parameter.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    BadParameters(Vec<domain::catalog::parameters::FieldError>),
    /// A gate hook refused the operation, or could not be asked and refuses then.
    #[error("{0}")]
    GateRefused(String),
    /// Actions the cluster would run with automators Corral does not have.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    UnsupportedAutomators(Vec<domain::catalog::automator::UnsupportedAction>),
    /// Services that stay on the cluster need a service the change would remove.
    #[error("{0}")]
    StillRequired(String),
    /// A replacement would lose data a stateful service keeps on its node, and the
    /// caller did not accept that.
    #[error("{0}")]
    DataWouldBeLost(String),
    /// An approval request was decided (or expired) before this decision.
    #[error("approval request {0} is already decided")]
    AlreadyDecided(String),
    #[error("cluster {name} is {state}: {hint}")]
    Busy {
        name: String,
        state: ClusterState,
        hint: String,
    },
}

/// What an operation would do: the layout before and after, and the tasks.
#[derive(Debug, Clone)]
pub struct Preview {
    pub from: Layout,
    pub to: Layout,
    pub dag: TaskDag,
}

/// Refuses a cluster on `provider` (a provider of `catalog`) when its type is not one the
/// tenant may use: superadmins enable provider types per tenant, and `local` (node steps
/// on this server's own host) only for tenants they trust with that.
pub(crate) async fn check_provider_allowed(
    store: &Store,
    tenant_id: &str,
    catalog: &domain::catalog::Catalog,
    provider: &str,
) -> Result<(), OperationError> {
    let providertype = catalog
        .provider(provider)
        .map_or(crate::provider::LOCAL_PROVIDER, |provider| {
            provider.providertype.as_str()
        });
    let tenant = store.tenant(tenant_id).await?;
    if tenant.may_use(providertype) {
        return Ok(());
    }
    Err(OperationError::ProviderNotAllowed(
        if providertype == crate::provider::LOCAL_PROVIDER {
            format!(
                "provider {provider:?} is of type local, which runs node steps on the Corral \
                 server's own host; tenant {} may not use it (a superadmin can allow it on the \
                 tenant's admin page, or choose another provider)",
                tenant.name
            )
        } else {
            format!(
                "provider {provider:?} is of type {providertype}, which tenant {} may not use \
                 (a superadmin enables provider types on the tenant's admin page)",
                tenant.name
            )
        },
    ))
}

/// Refuses a layout whose services would run an action with an automator Corral does
/// not have (Coopr's `chef-solo`), before anything is made. Ansible is open to every
/// tenant: its controller side runs confined (see `execute::automator::ansible`).
pub(crate) fn check_automators(
    catalog: &domain::catalog::Catalog,
    layout: &Layout,
) -> Result<(), OperationError> {
    use domain::catalog::automator::unsupported_actions;
    let unsupported = unsupported_actions(catalog, layout.services().iter().copied());
    if !unsupported.is_empty() {
        return Err(OperationError::UnsupportedAutomators(unsupported));
    }
    Ok(())
}

/// The cluster's catalog snapshot, and its template resolved there: what changes to a
/// built cluster are planned from (not the tenant's current catalog, which may have
/// moved on since).
fn snapshot_template(cluster: &Cluster) -> Result<(Catalog, ClusterTemplate), OperationError> {
    let snapshot = import_bundle(&cluster.catalog_json).map_err(|error| {
        OperationError::Invalid(format!(
            "the catalog snapshot of cluster {} is unreadable: {error}",
            cluster.name
        ))
    })?;
    let name = TemplateName::parse(cluster.template_name.clone())
        .map_err(|error| OperationError::Invalid(error.to_string()))?;
    let template =
        snapshot
            .resolved_template(&name)
            .map_err(|error| OperationError::BadTemplate {
                template: cluster.template_name.clone(),
                message: error.message(),
            })?;
    Ok((snapshot, template))
}

fn layout_json(layout: &Layout) -> String {
    serde_json::to_string(layout).unwrap_or_else(|_| "{}".to_owned())
}
