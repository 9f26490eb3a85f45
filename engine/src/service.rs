//! The service layer: the one door every entry point (the JSON API, server functions,
//! the CLI through the API) goes through.
//!
//! Each call takes the [`Caller`] (an authenticated [`Principal`] and where the request
//! came from) and checks role and tenant before it touches anything. A caller asking
//! for another tenant's object gets [`ServiceError::NotFound`], exactly as if it did not
//! exist, so ids leak nothing; a tenant user asking for an admin operation gets
//! [`ServiceError::Forbidden`]. Quotas and template size limits are enforced here, and
//! every change is written to the audit log.
//!
//! One module per resource; they share the error type, paging and the audit helper
//! defined here.

mod approvals;
mod audit;
mod auth;
mod catalog;
mod cluster_list;
mod clusters;
mod cost;
mod hooks;
mod job_credentials;
mod jobs;
mod lease;
mod node_shell;
mod node_terminal;
mod overview;
mod pool_hosts;
mod providers;
mod resources;
mod rollouts;
mod tenants;
mod tokens;
mod upgrades;
mod user_keys;
mod users;
mod views;

use std::sync::Arc;

use api_types::AuditAction;
use tokio::sync::Notify;

use crate::accounts::AccountError;
use crate::catalog::memo::CatalogMemo;
use crate::catalog::CatalogError;
use crate::operations::OperationError;
use crate::principal::Principal;
use crate::queue::{Queue, QueueError};
use crate::resources::{ResourceError, ResourceFiles};
use crate::store::audit::AuditEntry;
use crate::store::{Store, StoreError};

pub use api_types::{
    ActivityView, CheckoutView, ClusterChangeRequest, ClusterCreateRequest, CreatedToken,
    DedicatedWorkersUpdate, ErrorCode, FailedTaskView, ImportReport, LeaseExtension,
    LocalNodesUpdate, Page, PasswordChange, PoolHostRequest, PoolHostUpdate, PoolHostView, Problem,
    ProviderCredentialsView, ProviderTestReport, ProviderTestRequest, ProviderTypesUpdate,
    QuotaUpdate, RolloutRequest, RolloutStarted, RolloutView, TenantRequest, TokenRequest,
    UserMove, UserRequest, UserUpdate,
};
pub use approvals::expire_due as expire_due_approvals;
pub use audit::AuditQuery;
pub use auth::{Access, SessionUser, ThrottleSettings};
pub use catalog::parse_kind;
pub use cluster_list::ClusterListRequest;
pub use clusters::ClusterOutline;
pub use jobs::MAX_EVENTS;
pub use lease::LeaseLimits;
pub use node_shell::{NodeShellTarget, SessionBytes};
pub use node_terminal::{
    NodeTerminal, Recorder, TerminalEnd, TerminalSummary, DEFAULT_TERMINAL_IDLE,
    MAX_RECORDING_BYTES,
};
pub use providers::{CredentialsOwner, ProviderTestWaits};
pub use tenants::TenantUsage;
pub use views::*;

/// Why a service call did not happen. Each variant maps to one HTTP status at the
/// edge; the message is safe to show (it never holds a secret or another tenant's
/// data), while [`ServiceError::Internal`] keeps its cause for the log only.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("authentication required")]
    Unauthenticated,
    #[error("{0}")]
    Forbidden(String),
    #[error("{0} not found")]
    NotFound(String),
    /// Bad input: the message says what is wrong, `details` lists every problem.
    #[error("{message}")]
    Invalid {
        message: String,
        details: Vec<Problem>,
    },
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    QuotaExceeded(String),
    /// A gate hook refused the operation (its reason is the message).
    #[error("{0}")]
    GateRefused(String),
    /// The database's disk is full: the write did not happen (see
    /// [`StoreError::StorageFull`]). Said as it is, since an operator must act.
    #[error("the server's disk is full, so nothing was saved: try again once an operator has freed space ({0})")]
    StorageFull(String),
    /// Login throttled: try again after `wait_secs`.
    #[error("too many failed logins; try again in {wait_secs} s")]
    TooManyAttempts { wait_secs: u64 },
    /// Something broke inside; `cause` goes to the log, never to the client.
    #[error("internal error")]
    Internal { cause: String },
    /// The database is not answering (see [`crate::store::reachability`]): nothing
    /// was done, and the same call may succeed shortly.
    #[error("{}", api_types::DATABASE_UNAVAILABLE)]
    Unavailable,
}

/// The problems of a validation report (errors or warnings).
pub fn report_problems<'a>(
    problems: impl Iterator<Item = &'a domain::catalog::validate::Finding>,
) -> Vec<Problem> {
    problems
        .map(|problem| Problem {
            path: problem.path.clone(),
            message: problem.message.clone(),
        })
        .collect()
}

/// The problems that kept JSON from decoding as a catalog.
pub fn import_problems(error: &domain::catalog::coopr::ImportError) -> Vec<Problem> {
    error
        .problems
        .iter()
        .map(|problem| Problem {
            path: problem.path.clone(),
            message: problem.problem.to_string(),
        })
        .collect()
}

impl ServiceError {
    pub fn invalid(message: impl Into<String>) -> Self {
        ServiceError::Invalid {
            message: message.into(),
            details: Vec::new(),
        }
    }

    /// Bad input of a `subject` (`pool host`, `hook`): every problem, in the message too.
    fn invalid_fields(subject: &str, problems: Vec<Problem>) -> Self {
        let fields: Vec<String> = problems
            .iter()
            .map(|problem| format!("{}: {}", problem.path, problem.message))
            .collect();
        ServiceError::Invalid {
            message: format!("invalid {subject}: {}", fields.join("; ")),
            details: problems,
        }
    }

    pub fn internal(cause: impl std::fmt::Display) -> Self {
        ServiceError::Internal {
            cause: cause.to_string(),
        }
    }

    /// A stable machine-readable code for clients (`error` in API responses).
    /// The stable code (and through it the HTTP status) of the refusal.
    pub fn code(&self) -> ErrorCode {
        match self {
            ServiceError::Unauthenticated => ErrorCode::Unauthenticated,
            ServiceError::Forbidden(_) => ErrorCode::Forbidden,
            ServiceError::NotFound(_) => ErrorCode::NotFound,
            ServiceError::Invalid { .. } => ErrorCode::Invalid,
            ServiceError::Conflict(_) => ErrorCode::Conflict,
            ServiceError::QuotaExceeded(_) => ErrorCode::QuotaExceeded,
            ServiceError::GateRefused(_) => ErrorCode::GateRefused,
            ServiceError::TooManyAttempts { .. } => ErrorCode::TooManyAttempts,
            ServiceError::StorageFull(_) => ErrorCode::StorageFull,
            ServiceError::Internal { .. } => ErrorCode::Internal,
            ServiceError::Unavailable => ErrorCode::Unavailable,
        }
    }
}

impl From<StoreError> for ServiceError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound(what) => ServiceError::NotFound(what),
            StoreError::Conflict(what) => ServiceError::Conflict(format!("{what} already exists")),
            StoreError::StorageFull { cause } => {
                tracing::error!(%cause, "a write failed: the database's disk is full");
                ServiceError::StorageFull(cause)
            }
            other if other.is_unreachable() => {
                // Said once per outage by the process's loops; per request only here.
                tracing::debug!(error = %other, "the database is not answering");
                ServiceError::Unavailable
            }
            other => ServiceError::internal(other),
        }
    }
}

impl From<QueueError> for ServiceError {
    fn from(error: QueueError) -> Self {
        match error {
            QueueError::Store(store) => store.into(),
            QueueError::NotFound(what) => ServiceError::NotFound(what),
            QueueError::InvalidState { .. } => ServiceError::Conflict(error.to_string()),
            other => ServiceError::internal(other),
        }
    }
}

impl From<CatalogError> for ServiceError {
    fn from(error: CatalogError) -> Self {
        match error {
            CatalogError::Store(store) => store.into(),
            CatalogError::Invalid(report) => {
                let details = report_problems(report.errors());
                ServiceError::Invalid {
                    message: format!("the catalog has {} error(s)", details.len()),
                    details,
                }
            }
            CatalogError::Import(error) => ServiceError::Invalid {
                message: format!("the catalog JSON has {} problem(s)", error.problems.len()),
                details: import_problems(&error),
            },
        }
    }
}

impl From<OperationError> for ServiceError {
    fn from(error: OperationError) -> Self {
        match error {
            OperationError::Store(store) => store.into(),
            OperationError::Queue(queue) => queue.into(),
            OperationError::Catalog(catalog) => catalog.into(),
            OperationError::Busy { .. }
            | OperationError::StillRequired(_)
            | OperationError::DataWouldBeLost(_)
            | OperationError::AlreadyDecided(_) => ServiceError::Conflict(error.to_string()),
            OperationError::QuotaExceeded(message) => ServiceError::QuotaExceeded(message),
            OperationError::ProviderNotAllowed(message) => ServiceError::Forbidden(message),
            OperationError::GateRefused(message) => ServiceError::GateRefused(message),
            OperationError::UnsupportedAutomators(ref actions) => ServiceError::Invalid {
                message: error.to_string(),
                details: actions
                    .iter()
                    .map(|unsupported| Problem {
                        path: format!(
                            "services.{}.provisioner.actions.{}.type",
                            unsupported.service, unsupported.action
                        ),
                        message: unsupported.to_string(),
                    })
                    .collect(),
            },
            OperationError::BadParameters(ref refused) => ServiceError::Invalid {
                message: error.to_string(),
                details: refused
                    .iter()
                    .map(|field| Problem {
                        path: format!("parameters.{}", field.parameter),
                        message: field.problem.clone(),
                    })
                    .collect(),
            },
            OperationError::Unsatisfiable(ref unsatisfiable) => ServiceError::Invalid {
                message: error.to_string(),
                details: unsatisfiable
                    .reasons
                    .iter()
                    .map(|reason| Problem {
                        path: "size".to_owned(),
                        message: reason.to_string(),
                    })
                    .collect(),
            },
            OperationError::UnknownTemplate(_)
            | OperationError::BadTemplate { .. }
            | OperationError::Plan(_)
            | OperationError::Invalid(_) => ServiceError::invalid(error.to_string()),
        }
    }
}

impl From<AccountError> for ServiceError {
    fn from(error: AccountError) -> Self {
        match error {
            AccountError::Store(store) => store.into(),
            AccountError::UnknownTenant(name) => ServiceError::NotFound(format!("tenant {name:?}")),
            other => ServiceError::invalid(other.to_string()),
        }
    }
}

impl From<ResourceError> for ServiceError {
    fn from(error: ResourceError) -> Self {
        match error {
            ResourceError::Store(store) => store.into(),
            ResourceError::NotFound {
                kind,
                name,
                version,
            } => ServiceError::NotFound(format!("{kind}/{name} version {version}")),
            ResourceError::BytesMissing { .. } => ServiceError::Conflict(error.to_string()),
            other => ServiceError::invalid(other.to_string()),
        }
    }
}

/// Who is calling and from where (for the audit log).
#[derive(Debug, Clone)]
pub struct Caller {
    pub principal: Principal,
    /// The client address, when the call came over the network.
    pub address: Option<String>,
}

impl Caller {
    pub fn new(principal: Principal, address: Option<String>) -> Self {
        Self { principal, address }
    }

    pub fn tenant_id(&self) -> &str {
        &self.principal.tenant_id
    }

    /// Refuses callers who are not admins of `tenant_id`.
    fn require_tenant_admin(&self, tenant_id: &str) -> Result<(), ServiceError> {
        if self.principal.can_administer_tenant(tenant_id) {
            Ok(())
        } else {
            Err(ServiceError::Forbidden(
                "this needs a tenant admin or superadmin".to_owned(),
            ))
        }
    }

    fn require_superadmin(&self) -> Result<(), ServiceError> {
        if self.principal.is_superadmin() {
            Ok(())
        } else {
            Err(ServiceError::Forbidden(
                "this needs a superadmin".to_owned(),
            ))
        }
    }

    /// `Ok` when the caller may see an object of `tenant_id`; otherwise the object
    /// does not exist as far as they can tell.
    fn require_visible(
        &self,
        tenant_id: &str,
        what: impl FnOnce() -> String,
    ) -> Result<(), ServiceError> {
        if self.principal.can_see_tenant(tenant_id) {
            Ok(())
        } else {
            Err(ServiceError::NotFound(what()))
        }
    }

    /// Refuses callers who are not admins of their tenant, and says whose objects a
    /// list shows them: their tenant's, or every tenant's (`None`) for a superadmin.
    fn administered_scope(&self) -> Result<Option<&str>, ServiceError> {
        self.require_tenant_admin(self.tenant_id())?;
        Ok((!self.principal.is_superadmin()).then(|| self.tenant_id()))
    }

    /// What `fetch` finds, an object of the tenant `tenant_of` names, if the caller
    /// administers that tenant. Plain users learn nothing, not even whether it exists
    /// (`fetch` is not even run); one of a tenant the caller cannot see is `NotFound`
    /// (`what`) exactly as a missing one.
    async fn administered<T>(
        &self,
        what: impl Fn() -> String,
        fetch: impl std::future::Future<Output = Result<T, StoreError>>,
        tenant_of: impl FnOnce(&T) -> &str,
    ) -> Result<T, ServiceError> {
        self.require_tenant_admin(self.tenant_id())?;
        let found = match fetch.await {
            Ok(found) => found,
            Err(StoreError::NotFound(_)) => return Err(ServiceError::NotFound(what())),
            Err(error) => return Err(error.into()),
        };
        let tenant_id = tenant_of(&found);
        self.require_visible(tenant_id, what)?;
        self.require_tenant_admin(tenant_id)?;
        Ok(found)
    }
}

/// A page of a list: `offset` and `limit` in, `total` out so clients can page on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageRequest {
    /// Items to skip (default 0).
    #[serde(default)]
    pub offset: u32,
    /// Items to return, 1-500 (default 50).
    #[serde(default = "default_limit")]
    pub limit: u32,
}

fn default_limit() -> u32 {
    50
}

impl Default for PageRequest {
    fn default() -> Self {
        Self {
            offset: 0,
            limit: default_limit(),
        }
    }
}

pub const MAX_PAGE: u32 = 500;

impl PageRequest {
    fn check(&self) -> Result<(), ServiceError> {
        if self.limit == 0 || self.limit > MAX_PAGE {
            return Err(ServiceError::Invalid {
                message: format!("limit must be between 1 and {MAX_PAGE}"),
                details: vec![Problem {
                    path: "limit".to_owned(),
                    message: format!("{} is out of range", self.limit),
                }],
            });
        }
        Ok(())
    }

    /// The rows this page asks the store for, once its limit is checked.
    fn window(&self) -> Result<crate::store::Window, ServiceError> {
        self.check()?;
        Ok(crate::store::Window {
            offset: self.offset,
            limit: self.limit,
        })
    }

    /// This page, holding `items` (read with this page's offset and limit) of `total`.
    fn of<T>(&self, items: Vec<T>, total: u64) -> Page<T> {
        Page {
            items,
            total,
            offset: self.offset,
            limit: self.limit,
        }
    }

    /// Cuts `items` (already in list order) down to this page: for lists that stay
    /// short (a tenant's users, tokens, catalog entities); long ones page in SQL.
    fn slice<T>(&self, items: Vec<T>) -> Result<Page<T>, ServiceError> {
        self.check()?;
        let total = items.len() as u64;
        let items = items
            .into_iter()
            .skip(self.offset as usize)
            .take(self.limit as usize)
            .collect();
        Ok(self.of(items, total))
    }
}

/// The service: cheap to clone, shared by every handler.
#[derive(Clone)]
pub struct Service {
    /// The process's queue (its one handle, shared with the workers and the job
    /// streams: see [`crate::queue`]).
    queue: Queue,
    /// The queue's store, kept beside it for the many calls that need only the store.
    store: Store,
    resources: ResourceFiles,
    throttle: ThrottleSettings,
    /// Wakes local workers when a job is submitted or a provider check is asked for,
    /// so they do not wait for a poll.
    waker: Option<Arc<Notify>>,
    /// How long a provider check waits for a worker pool to take it and to report.
    provider_test_waits: ProviderTestWaits,
    /// How big a cluster may get, and a new tenant's node quota.
    limits: crate::operations::SizeLimits,
    /// Whether this server relays SSH sessions to nodes at all (`--no-node-shell`).
    node_shell: bool,
    /// How long a browser terminal may go without a keystroke or output.
    terminal_idle: std::time::Duration,
    /// Catalogs parsed once for the views that read one per cluster.
    catalogs: Arc<CatalogMemo>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl Service {
    /// The service on the process's `queue` (and its store).
    pub fn new(queue: Queue, resources: ResourceFiles) -> Self {
        Self {
            store: queue.store().clone(),
            queue,
            resources,
            throttle: ThrottleSettings::default(),
            waker: None,
            provider_test_waits: ProviderTestWaits::default(),
            limits: crate::operations::SizeLimits::default(),
            node_shell: true,
            terminal_idle: node_terminal::DEFAULT_TERMINAL_IDLE,
            catalogs: Arc::default(),
        }
    }

    /// Holds clusters and new tenants to `limits` instead of the defaults.
    pub fn with_size_limits(mut self, limits: crate::operations::SizeLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Waits `waits` for provider checks (see [`Service::test_provider`]) instead of
    /// the defaults.
    pub fn with_provider_test_waits(mut self, waits: ProviderTestWaits) -> Self {
        self.provider_test_waits = waits;
        self
    }

    /// Wakes `waker` whenever a job is submitted.
    pub fn with_waker(mut self, waker: Arc<Notify>) -> Self {
        self.waker = Some(waker);
        self
    }

    pub fn with_throttle(mut self, settings: ThrottleSettings) -> Self {
        self.throttle = settings;
        self
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The process's queue, for those who follow its jobs (the event streams).
    pub fn queue(&self) -> &Queue {
        &self.queue
    }

    fn wake_workers(&self) {
        if let Some(waker) = &self.waker {
            waker.notify_waiters();
        }
    }

    /// Writes an audit entry. A failed write is logged and does not undo the action
    /// it records (which has already happened).
    async fn audit(&self, caller: &Caller, record: AuditRecord<'_>) {
        let entry = AuditEntry {
            id: uuid::Uuid::new_v4().to_string(),
            tenant_id: record.tenant_id.to_owned(),
            actor_id: Some(caller.principal.user_id.clone()),
            actor_name: caller.principal.username.clone(),
            action: record.action,
            target_kind: record.target_kind.to_owned(),
            target: record.target.to_owned(),
            address: caller.address.clone(),
            before_json: record.before,
            after_json: record.after,
            at_ms: crate::store::now_ms(),
        };
        if let Err(error) = self.store.append_audit(&entry).await {
            tracing::error!(%error, action = record.action.as_str(), "audit entry not written");
        }
    }
}

/// What [`Service::audit`] records.
struct AuditRecord<'a> {
    tenant_id: &'a str,
    action: AuditAction,
    target_kind: &'a str,
    target: &'a str,
    before: Option<String>,
    after: Option<String>,
}

impl<'a> AuditRecord<'a> {
    fn new(tenant_id: &'a str, action: AuditAction, target_kind: &'a str, target: &'a str) -> Self {
        Self {
            tenant_id,
            action,
            target_kind,
            target,
            before: None,
            after: None,
        }
    }
}
