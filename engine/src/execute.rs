//! Running one claimed task on its node: the node steps (create, confirm, bootstrap,
//! delete, and a lease's suspend and resume) through the cluster's provider, and
//! service actions through an automator.
//!
//! Everything a step needs is read from the store when it starts (the cluster, the
//! catalog snapshot it was built from, its nodes), so any worker process can run any
//! task. A node is recorded the moment its provider made it, before anything runs on
//! it, so a retried or re-claimed create finds it instead of making a second one.
//! Output goes to the caller's channel as it arrives; the worker turns it into events.

mod automator;
mod bootstrap;
mod health_gate;
mod node_spec;
mod service_step;
pub(crate) mod view;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use domain::plan::Action;
use tokio::sync::mpsc;

use crate::provider::{NodeProvider, NodeRecord, NodeSpec, ProviderError, Suspended};
use crate::queue::{ClaimedTask, Queue};
use crate::resources::ResourceFiles;
use crate::ssh::{OutputChunk, OutputStream, SessionPool, SshError, SshTarget};
use crate::store::clusters::nodes::NodeRow;
use crate::store::{now_ms, Store, StoreError};

pub(crate) use node_spec::{hardware_limits, node_spec, provider_settings};
pub(crate) use view::cluster_macro_context;
pub use view::node_id;
use view::StepView;

pub use api_types::NodeState;

/// Why a step did not succeed. The message is what the user sees on the failed task.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error(transparent)]
    Ssh(#[from] SshError),
    /// The stored cluster, catalog snapshot or layout does not allow the step.
    #[error("{0}")]
    Setup(String),
    /// The step cannot start yet (nodes it needs have no address); it is deferred,
    /// not failed.
    #[error("not ready: {0}")]
    NotReady(String),
    /// The step ran and ended badly.
    #[error("{what} on node {node} ({host}) {how}")]
    Failed {
        what: String,
        node: u32,
        host: String,
        how: String,
        exit_code: Option<i64>,
    },
}

/// How a step that ran to its end finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepOutcome {
    pub exit_code: Option<i64>,
    /// A forced delete's teardown step that failed and was passed over: the task
    /// ends `skipped`, not `succeeded`.
    pub passed_over: bool,
}

impl StepOutcome {
    /// The step ran to its end (or had nothing to do: `exit_code` is then `None`).
    pub fn ran(exit_code: Option<i64>) -> Self {
        Self {
            exit_code,
            passed_over: false,
        }
    }
}

/// Tunables for every step.
#[derive(Debug, Clone)]
pub struct ExecutorSettings {
    /// A service action running longer is killed and fails.
    pub step_timeout: Duration,
    /// How long a new node may take to accept SSH.
    pub confirm_timeout: Duration,
    /// How long a service step waits for the other nodes it refers to to have addresses
    /// before it is deferred (back to the queue, its slot freed).
    pub address_wait: Duration,
}

impl Default for ExecutorSettings {
    fn default() -> Self {
        Self {
            step_timeout: Duration::from_secs(600),
            confirm_timeout: Duration::from_secs(60),
            address_wait: Duration::from_secs(2),
        }
    }
}

/// Node providers by provider type (`local`, `ssh-pool`…), and why a known type is
/// unavailable on this server (no sshd, say), so steps that need it can say so.
#[derive(Clone, Default)]
pub struct Providers {
    by_type: HashMap<String, Arc<dyn NodeProvider>>,
    unavailable: HashMap<String, String>,
}

impl std::fmt::Debug for Providers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Providers")
            .field("available", &self.by_type.keys().collect::<Vec<_>>())
            .field("unavailable", &self.unavailable)
            .finish()
    }
}

impl Providers {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with(mut self, provider: Arc<dyn NodeProvider>) -> Self {
        self.by_type.insert(provider.name().to_owned(), provider);
        self
    }

    /// Records that `providertype` cannot run here, and why.
    pub fn without(mut self, providertype: &str, reason: impl Into<String>) -> Self {
        self.unavailable
            .insert(providertype.to_owned(), reason.into());
        self
    }

    pub fn get(&self, providertype: &str) -> Option<&Arc<dyn NodeProvider>> {
        self.by_type.get(providertype)
    }

    /// The provider, or an error saying why there is none.
    pub fn require(&self, providertype: &str) -> Result<&Arc<dyn NodeProvider>, StepError> {
        self.get(providertype).ok_or_else(|| {
            StepError::Setup(match self.unavailable.get(providertype) {
                Some(reason) => {
                    format!("provider type {providertype:?} is not available here: {reason}")
                }
                None => format!("provider type {providertype:?} is not available on this server"),
            })
        })
    }
}

/// Runs tasks; cheap to clone and share between workers.
#[derive(Clone)]
pub struct Executor {
    inner: Arc<Inner>,
}

struct Inner {
    /// The process's queue, and through it the store.
    queue: Queue,
    providers: Providers,
    ssh: Arc<SessionPool>,
    resources: ResourceFiles,
    settings: ExecutorSettings,
    views: view::ViewCache,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("providers", &self.inner.providers)
            .field("settings", &self.inner.settings)
            .finish_non_exhaustive()
    }
}

impl Executor {
    pub fn new(
        queue: Queue,
        providers: Providers,
        ssh: Arc<SessionPool>,
        resources: ResourceFiles,
        settings: ExecutorSettings,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                queue,
                providers,
                ssh,
                resources,
                settings,
                views: view::ViewCache::default(),
            }),
        }
    }

    pub fn store(&self) -> &Store {
        self.inner.queue.store()
    }

    /// The process's queue the workers claim from and report to.
    pub fn queue(&self) -> &Queue {
        &self.inner.queue
    }

    pub fn ssh(&self) -> &Arc<SessionPool> {
        &self.inner.ssh
    }

    /// The resource files steps read, for the rollout driver's service calls.
    pub fn resources(&self) -> &ResourceFiles {
        &self.inner.resources
    }

    pub fn providers(&self) -> &Providers {
        &self.inner.providers
    }

    /// How this process reaches `record`'s node: as its provider here says, or as the
    /// record says when that provider does not run here.
    pub(crate) async fn ssh_target(&self, record: &NodeRecord) -> Result<SshTarget, StepError> {
        match self.inner.providers.get(&record.provider) {
            Some(provider) => Ok(provider.ssh_target(record).await?),
            None => Ok(record.ssh_target()),
        }
    }

    /// Runs `task` to its end. Dropping the future stops the step (a running remote
    /// command is killed with its process group).
    pub async fn run(
        &self,
        task: &ClaimedTask,
        output: &mpsc::Sender<OutputChunk>,
    ) -> Result<StepOutcome, StepError> {
        let view = StepView::load(&self.inner.queue, &self.inner.views, task).await?;
        match task.action {
            Action::Create => self.create(&view, output).await,
            Action::Confirm => self.confirm(&view).await,
            Action::Bootstrap => bootstrap::run(self, &view, output).await,
            Action::Delete => self.delete(&view, output).await,
            Action::Suspend => self.suspend(&view, output).await,
            Action::Resume => self.resume(&view, output).await,
            Action::Stop | Action::Remove if view.forced => {
                forced_teardown(service_step::run(self, &view, task, output).await, output).await
            }
            Action::Install
            | Action::Configure
            | Action::Initialize
            | Action::Start
            | Action::Stop
            | Action::Remove => service_step::run(self, &view, task, output).await,
        }
    }

    fn provider(&self, view: &StepView) -> Result<&Arc<dyn NodeProvider>, StepError> {
        self.inner.providers.require(view.providertype())
    }

    /// The tenant's SSH user CA for a node whose sshd Corral prepares itself (`local`,
    /// `docker`): made on the tenant's first such node. Other providers' machines get
    /// none (an admin's pool host has users of its own).
    async fn trusted_user_ca(&self, view: &StepView) -> Result<Option<String>, StepError> {
        if ![
            crate::provider::LOCAL_PROVIDER,
            crate::provider::DOCKER_PROVIDER,
        ]
        .contains(&view.providertype())
        {
            return Ok(None);
        }
        match crate::ssh::UserCa::of_tenant(self.store(), &view.cluster.tenant_id).await {
            Ok(ca) => Ok(Some(ca.public_openssh().to_owned())),
            // A store opened without the server's secret key (an engine embedded in a
            // tool) seals nothing: its nodes trust no CA and keep working otherwise.
            Err(crate::ssh::UserCaError::Store(StoreError::NoSecretKey)) => Ok(None),
            Err(error) => Err(StepError::Setup(error.to_string())),
        }
    }

    async fn create(
        &self,
        view: &StepView,
        output: &mpsc::Sender<OutputChunk>,
    ) -> Result<StepOutcome, StepError> {
        let layout_node = view.layout_node()?;
        let trusted_user_ca = self.trusted_user_ca(view).await?;
        let spec = node_spec(
            &view.catalog,
            &view.cluster.provider,
            NodeSpec {
                tenant_id: Some(view.cluster.tenant_id.clone()),
                cluster_id: Some(view.cluster.id.clone()),
                // Whose own credentials the provider may use, where it allows them: the
                // job's requester's, not the cluster owner's (a user's credentials pay
                // only for what that user asked for).
                requested_by: view.requested_by.clone(),
                trusted_user_ca,
                ..NodeSpec::new(view.node_id())
            },
            &layout_node.hardwaretype,
            &layout_node.imagetype,
        );
        let provider = self.provider(view)?;
        // An earlier attempt made and recorded the node, then its process died before
        // the task was marked done: take that node over rather than make it again
        // (a provider cannot always return a node it made without the record, e.g. a
        // container whose host key was generated at create).
        if let Some(made) = view.node_record_if_made()? {
            match provider.adopt(&made).await {
                Ok(record) => {
                    self.save_node(view, &record, NodeState::Created).await?;
                    note(output, "the node made by an earlier attempt was adopted\n").await;
                    return Ok(StepOutcome::ran(None));
                }
                Err(error) => {
                    let text = format!(
                        "the node made by an earlier attempt could not be adopted ({error}); \
                         making it again\n"
                    );
                    note(output, &text).await;
                }
            }
        }
        // Said before the wait, not after it: the user sees why the node is slow. A
        // provider that cannot tell fails in `create` below, with the real error.
        if let Some(text) = provider.slow_start(&spec).await.ok().flatten() {
            note(output, &text).await;
        }
        let record = provider.create(&spec).await?;
        self.save_node(view, &record, NodeState::Created).await?;
        if let Some(text) = provider.creation_note(&record) {
            note(output, &text).await;
        }
        Ok(StepOutcome::ran(None))
    }

    async fn confirm(&self, view: &StepView) -> Result<StepOutcome, StepError> {
        let record = match self.bring_back(view).await? {
            Some(current) => current,
            None => view.node_record()?,
        };
        self.provider(view)?
            .confirm(
                &record,
                &self.inner.ssh,
                self.inner.settings.confirm_timeout,
            )
            .await?;
        self.save_node(view, &record, NodeState::Confirmed).await?;
        Ok(StepOutcome::ran(None))
    }

    /// Stops the node's machine for a lease's grace (its services are stopped by the
    /// tasks before this one). The node then reads `stopped`, which keeps it from being
    /// adopted (started) by a worker that starts meanwhile.
    async fn suspend(
        &self,
        view: &StepView,
        output: &mpsc::Sender<OutputChunk>,
    ) -> Result<StepOutcome, StepError> {
        let record = view.node_record()?;
        // The machine goes down under a pooled session: the next task opens a new one.
        self.inner.ssh.close(&record.id).await;
        match self.provider(view)?.suspend(&record).await? {
            Suspended::Stopped => {
                self.save_node(view, &record, NodeState::Stopped).await?;
                note(output, "the node's machine is stopped\n").await;
            }
            Suspended::KeptRunning => {
                let text = format!(
                    "the {} provider cannot stop machines: this one keeps running, its \
                     services stopped\n",
                    view.providertype()
                );
                note(output, &text).await;
            }
        }
        Ok(StepOutcome::ran(None))
    }

    /// Starts a suspended node's machine again, stores what changed (a container's
    /// published port, an instance's public address), and waits until SSH answers
    /// with the pinned host key, so the services can be started after it.
    async fn resume(
        &self,
        view: &StepView,
        output: &mpsc::Sender<OutputChunk>,
    ) -> Result<StepOutcome, StepError> {
        let record = view.node_record()?;
        let provider = self.provider(view)?;
        let fresh = provider.resume(&record).await?;
        if fresh.port != record.port || fresh.host != record.host {
            let text = format!(
                "the machine is back at {}:{} (it was at {}:{})\n",
                fresh.host, fresh.port, record.host, record.port
            );
            note(output, &text).await;
        }
        // Recorded before the wait: a retry must reach it where it now is.
        self.save_node(view, &fresh, NodeState::Confirmed).await?;
        self.inner.ssh.close(&fresh.id).await;
        if provider.connects(&fresh) {
            provider
                .confirm(&fresh, &self.inner.ssh, self.inner.settings.confirm_timeout)
                .await?;
        }
        self.save_node(view, &fresh, NodeState::Ready).await?;
        Ok(StepOutcome::ran(None))
    }

    async fn delete(
        &self,
        view: &StepView,
        output: &mpsc::Sender<OutputChunk>,
    ) -> Result<StepOutcome, StepError> {
        match view.node_record_if_made()? {
            Some(record) => {
                self.inner.ssh.close(&record.id).await;
                self.provider(view)?.delete(&record).await?;
            }
            None => {
                // A pool host lent just before a crash kept the record from being saved
                // is returned all the same: the lending is keyed by the node's id.
                self.store().return_pool_host(&view.node_id()).await?;
                note(output, "the node was never created: nothing to delete\n").await
            }
        }
        self.store()
            .delete_node(&view.cluster.id, i64::from(view.node))
            .await?;
        Ok(StepOutcome::ran(None))
    }

    async fn save_node(
        &self,
        view: &StepView,
        record: &NodeRecord,
        state: NodeState,
    ) -> Result<(), StepError> {
        let layout_node = view.layout_node()?;
        let provider_json = serde_json::to_string(record)
            .map_err(|error| StepError::Setup(format!("node record: {error}")))?;
        let services_json = serde_json::to_string(&layout_node.services)
            .map_err(|error| StepError::Setup(format!("node services: {error}")))?;
        self.store()
            .save_node(
                &NodeRow {
                    cluster_id: view.cluster.id.clone(),
                    number: i64::from(view.node),
                    hostname: Some(record.address().to_owned()),
                    hardwaretype: layout_node.hardwaretype.to_string(),
                    imagetype: layout_node.imagetype.to_string(),
                    services_json,
                    provider_json: Some(provider_json),
                    state,
                },
                now_ms(),
            )
            .await?;
        Ok(())
    }
}

impl Executor {
    /// Brings a docker node whose container stopped under the job back before a step
    /// reaches it over SSH: a Docker engine that restarted (or crashed) leaves the
    /// containers it ran stopped, and a started one gets a new published port (and may
    /// get another address). The new record is stored first, so this step, its
    /// retries and the other nodes' macros read where the node now is, and the step
    /// starts once the node accepts SSH again; `Some` is that record, `None` when the
    /// node is where it was recorded.
    ///
    /// Only docker nodes: a container stopped by its engine is the same machine,
    /// started again as a restarted server would adopt it. A lost local node (its
    /// sshd killed) or instance is a fault that the step's retries and then the job
    /// report instead (see docs/automators.md, "When a step's outcome is unknown").
    pub(crate) async fn bring_back(
        &self,
        view: &StepView,
    ) -> Result<Option<NodeRecord>, StepError> {
        if view.providertype() != crate::provider::DOCKER_PROVIDER {
            return Ok(None);
        }
        let row_state = view.nodes.get(&view.node).map(|row| row.state);
        // A lease's suspend stopped it on purpose: only its resume starts it.
        if row_state == Some(NodeState::Stopped) {
            return Ok(None);
        }
        let Some(record) = view.node_record_if_made()? else {
            return Ok(None);
        };
        let Some(provider) = self.inner.providers.get(&record.provider) else {
            return Ok(None);
        };
        let current = provider.adopt(&record).await?;
        if current.host == record.host
            && current.port == record.port
            && current.address == record.address
        {
            return Ok(None);
        }
        tracing::info!(
            node = %record.id,
            port = current.port,
            "the node's container was started again; its new port is stored"
        );
        let state = row_state.unwrap_or(NodeState::Created);
        self.save_node(view, &current, state).await?;
        // The pooled session went to the old port; and the container's sshd takes a
        // moment to listen (docker-proxy resets connections until it does).
        self.inner.ssh.close(&record.id).await;
        provider
            .confirm(
                &current,
                &self.inner.ssh,
                self.inner.settings.confirm_timeout,
            )
            .await?;
        Ok(Some(current))
    }
}

/// A teardown step of a forced delete: a failure of the step itself (it ran and
/// failed, or could not reach its node) is reported and passed over, so the node's
/// delete still runs. A store error is not the step's: the task is tried again.
async fn forced_teardown(
    result: Result<StepOutcome, StepError>,
    output: &mpsc::Sender<OutputChunk>,
) -> Result<StepOutcome, StepError> {
    let exit_code = match &result {
        Err(StepError::Failed { exit_code, .. }) => *exit_code,
        Err(StepError::Ssh(_) | StepError::Provider(_) | StepError::Setup(_)) => None,
        Ok(_) | Err(StepError::Store(_) | StepError::NotReady(_)) => return result,
    };
    if let Err(error) = &result {
        note(
            output,
            &format!("{error}; passed over: this delete is forced\n"),
        )
        .await;
    }
    Ok(StepOutcome {
        exit_code,
        passed_over: true,
    })
}

/// A line of Corral's own in the task's output, as a notice: shown apart from the
/// node's output on the job page, and printed by `corral apply` and `job watch`.
async fn note(output: &mpsc::Sender<OutputChunk>, text: &str) {
    let _ = output
        .send(OutputChunk {
            stream: OutputStream::Notice,
            bytes: format!("corral: {text}").into_bytes(),
        })
        .await;
}
