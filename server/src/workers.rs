//! The worker side of the binary: the executor every worker pool runs tasks with, and
//! `corral worker`, a process that only runs tasks (for several machines sharing one
//! PostgreSQL; `corral serve` runs the same pool in-process).
//!
//! Nodes of the `local` provider live under `<data dir>/nodes`, plugin resources under
//! `<data dir>/resources`; the `ssh-pool` provider lends the hosts admins registered in
//! the store (`/admin/hosts`, `/api/v1/pool-hosts`) and writes their client keys under
//! `<data dir>/pool-keys`. The `docker` provider makes nodes as containers of the local
//! Docker engine, with each node's client key copied under `<data dir>/docker-keys`;
//! where no engine answers, it is recorded as unavailable with the engine's answer. The
//! `ec2` provider copies its clusters' private keys under `<data dir>/ec2-keys`. The `exec` provider
//! runs the operator's provider plugins from `--provider-plugins` (default
//! `<data dir>/provider-plugins`), with its client key copied under `<data dir>/exec-keys`.
//! Those three keep their client keys in the database (sealed with the server's secret
//! key), so a process on another machine reaches the nodes another process made; the
//! directories hold each process's copies, which connections load.

use std::sync::Arc;

use anyhow::Context;
use engine::execute::{Executor, ExecutorSettings, Providers};
use engine::provider::{
    DockerProvider, Ec2Provider, ExecProvider, LocalProvider, NodeIsolation, SshPoolProvider,
    DOCKER_PROVIDER, EC2_PROVIDER, EXEC_PROVIDER, LOCAL_PROVIDER, SSH_POOL_PROVIDER,
};
use engine::queue::{Queue, WorkerScope};
use engine::resources::ResourceFiles;
use engine::ssh::{PoolConfig, SessionPool};
use engine::store::Store;
use engine::worker::{WorkerPool, WorkerSettings};

use crate::config::Config;
use crate::serve::StopSignal;

/// The executor for `config`'s data directory, on the process's `queue` (and its
/// store). Without sshd the `local` provider is recorded as unavailable (with how to
/// install it) instead of stopping the server.
pub async fn executor(queue: Queue, config: &Config) -> anyhow::Result<Executor> {
    let store = queue.store().clone();
    let nodes = config.data_dir.join("nodes");
    let mut providers = match LocalProvider::new(&nodes) {
        Ok(local) => {
            if local.isolation() == NodeIsolation::ServerUser {
                // Said at every start: whoever edits a service step gets this account.
                tracing::warn!("{}", local.isolation().explanation());
                eprintln!("warning: {}", local.isolation().explanation());
            }
            Providers::new().with(Arc::new(local))
        }
        Err(error) => {
            tracing::warn!(%error, "local nodes cannot be created on this machine");
            Providers::new().without(LOCAL_PROVIDER, error.to_string())
        }
    };
    providers = match SshPoolProvider::new(store.clone(), config.data_dir.join("pool-keys")) {
        Ok(pool) => providers.with(Arc::new(pool)),
        Err(error) => {
            tracing::warn!(%error, "ssh-pool nodes cannot be lent from this process");
            providers.without(SSH_POOL_PROVIDER, error.to_string())
        }
    };
    providers =
        match DockerProvider::connect(store.clone(), &config.data_dir.join("docker-keys")).await {
            Ok(docker) => providers.with(Arc::new(docker.with_limits(config.docker_limits))),
            Err(error) => {
                tracing::info!(%error, "docker nodes cannot be made from this process");
                providers.without(DOCKER_PROVIDER, error.to_string())
            }
        };
    providers = match Ec2Provider::new(store.clone(), &config.data_dir.join("ec2-keys")) {
        Ok(ec2) => providers.with(Arc::new(
            ec2.with_allowed_endpoints(config.ec2_endpoints.clone()),
        )),
        Err(error) => {
            tracing::warn!(%error, "ec2 nodes cannot be made from this process");
            providers.without(EC2_PROVIDER, error.to_string())
        }
    };
    providers = match ExecProvider::new(
        store.clone(),
        &config.provider_plugins,
        &config.data_dir.join("exec-keys"),
    ) {
        Ok(exec) => providers.with(Arc::new(exec)),
        Err(error) => {
            tracing::warn!(%error, "provider plugins cannot be run from this process");
            providers.without(EXEC_PROVIDER, error.to_string())
        }
    };
    Ok(Executor::new(
        queue,
        providers,
        Arc::new(SessionPool::new(PoolConfig::default())),
        resource_files(config)?,
        ExecutorSettings::default(),
    ))
}

/// Plugin resource bytes under `<data dir>/resources`, shared by the API and workers.
pub fn resource_files(config: &Config) -> anyhow::Result<ResourceFiles> {
    let resources = config.data_dir.join("resources");
    std::fs::create_dir_all(&resources)
        .with_context(|| format!("cannot create {}", resources.display()))?;
    Ok(ResourceFiles::in_directory(resources))
}

/// `corral worker`'s arguments: the server's, and the tenants it serves.
#[derive(Debug, clap::Args)]
pub struct WorkerArgs {
    /// Run only this tenant's tasks (repeat for several): the way to serve a tenant
    /// marked for dedicated workers, whose tasks shared workers never take
    /// [default: every tenant not so marked].
    #[arg(long = "tenant", value_name = "NAME")]
    pub tenants: Vec<String>,
    #[command(flatten)]
    pub server: crate::config::ServerArgs,
}

/// Starts the configured number of worker slots over `store`, with `executor`, for
/// the tenants `scope` names.
pub fn start_pool(executor: Executor, config: &Config, scope: WorkerScope) -> WorkerPool {
    let settings = WorkerSettings {
        scope,
        slots: config.worker_slots,
        lease: config.worker_lease,
        // Three beats per lease: one lost beat never costs the lease.
        heartbeat: config.worker_lease / 3,
        shutdown_grace: config.shutdown_grace,
        history: config.history_retention,
        audit: config.audit_retention,
        ..WorkerSettings::default()
    };
    WorkerPool::start(executor, settings)
}

/// `corral worker`: runs tasks until SIGINT/SIGTERM, then drains (see
/// [`WorkerPool::shutdown`]).
pub async fn run_worker(config: Config, tenants: &[String]) -> anyhow::Result<()> {
    let store = crate::serve::open_store(&config).await?;
    // The process's one queue: its workers claim, complete and announce through it.
    let queue = Queue::new(store.clone());
    let scope = tenant_scope(&store, tenants).await?;
    let metrics = crate::metrics::Metrics::install();
    let pool = start_pool(executor(queue, &config).await?, &config, scope);
    // Hook deliveries are sent by every process sharing the database (one each).
    let _deliveries = engine::hooks::deliver::start(store.clone());
    let stop = StopSignal::on_signals()?;
    let serving = if tenants.is_empty() {
        "every tenant not served by dedicated workers".to_owned()
    } else {
        format!("tenant(s) {} only", tenants.join(", "))
    };
    println!(
        "Corral worker running {} task slot(s) for {serving} on {}",
        config.worker_slots,
        config.database_url.redacted()
    );
    if let Some(address) = config.metrics_listen {
        let bound = crate::metrics::spawn_listener(address, metrics, store).await?;
        println!("Metrics at http://{bound}/metrics (no sign-in: keep this address private)");
    }
    stop.wait().await;
    crate::serve::report_drain(pool.shutdown().await);
    Ok(())
}

/// The scope of a worker started for `tenants` (names): a shared one when none is
/// named. An unknown name is an error, not a worker that waits for nothing.
async fn tenant_scope(store: &Store, tenants: &[String]) -> anyhow::Result<WorkerScope> {
    if tenants.is_empty() {
        return Ok(WorkerScope::Shared);
    }
    let mut ids = Vec::with_capacity(tenants.len());
    for name in tenants {
        let tenant = store
            .tenant_by_name(name)
            .await
            .with_context(|| format!("--tenant {name}: no such tenant"))?;
        ids.push(tenant.id);
    }
    Ok(WorkerScope::Tenants(ids))
}
