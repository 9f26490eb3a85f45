//! A lab for end-to-end engine tests: a fresh database with the lifecycle test catalog
//! and its plugin resource, a `local` provider under a temporary directory, an `ssh-pool`
//! provider over the lab's store, and a worker pool running tasks. Dropping the lab kills
//! every node process it made (pool machines are local nodes too). A demo lab can also
//! have a `docker` provider (`Lab::start_demo_with_docker`) and an `exec` provider
//! running the test plugins of `engine/tests/plugins` (`Lab::start_demo_with_exec`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use domain::catalog::coopr::import_bundle;
use domain::names::{ClusterName, TemplateName};
use domain::solver::SolveRequest;
use engine::execute::{Executor, ExecutorSettings, Providers};
use engine::operations::{create_cluster, submit_change, ClusterChange, CreateRequest};
use engine::provider::{
    DockerProvider, ExecProvider, LocalProvider, NodeImage, NodeProvider, NodeRecord, NodeSpec,
    SshPoolProvider,
};
use engine::queue::{self, JobId, JobState, Queue, SubmitOptions};
use engine::resources::{ResourceFiles, ResourceKind, Upload};
use engine::ssh::{PoolConfig, SessionPool};
use engine::store::clusters::Cluster;
use engine::store::tenants::DEFAULT_TENANT_ID;
use engine::store::{now_ms, Backend, Store};
use engine::testing::TestDatabase;
use engine::worker::{WorkerPool, WorkerSettings};

/// How long a docker lab waits for Corral's node image to be built (the first build on
/// a machine downloads and unpacks a few hundred MB of Debian packages).
const IMAGE_LIMIT: Duration = Duration::from_secs(900);

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/lifecycle");

pub struct Lab {
    /// The lab's one queue (the process's, as a server has one), and its store.
    pub queue: Queue,
    pub store: Store,
    pub nodes_dir: PathBuf,
    pub executor: Executor,
    pub pool: Option<WorkerPool>,
    pub settings: WorkerSettings,
    /// Where the lab's `ssh-pool` provider writes client keys.
    pub pool_keys_dir: PathBuf,
    executor_settings: ExecutorSettings,
    /// The `docker` provider, in labs that have one.
    pub docker: Option<Arc<DockerProvider>>,
    /// The `exec` provider, in labs that have one.
    pub exec: Option<Arc<ExecProvider>>,
    _nodes: tempfile::TempDir,
    _pool_keys: tempfile::TempDir,
    _resources: tempfile::TempDir,
    _db: TestDatabase,
}

/// Sends the engine's warnings and errors to the test's captured output, so a failed
/// test shows what went wrong inside the workers as well as its own assertion (the
/// first lab of the binary installs it; the others find it there).
fn show_warnings() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_test_writer()
        .try_init();
}

/// Worker settings with short leases so crash and fault tests finish quickly.
pub fn quick_settings() -> WorkerSettings {
    WorkerSettings {
        slots: 8,
        lease: Duration::from_secs(4),
        heartbeat: Duration::from_millis(500),
        idle_poll: Duration::from_millis(50),
        janitor_every: Duration::from_millis(500),
        monitor_every: Duration::from_millis(500),
        shutdown_grace: Duration::from_secs(5),
        ..WorkerSettings::default()
    }
}

impl Lab {
    pub async fn start(backend: Backend) -> Self {
        Self::start_with(backend, quick_settings(), ExecutorSettings::default()).await
    }

    pub async fn start_with(
        backend: Backend,
        settings: WorkerSettings,
        executor_settings: ExecutorSettings,
    ) -> Self {
        Self::start_fixture(backend, Fixture::Lifecycle, settings, executor_settings).await
    }

    /// A lab whose tenant has the demo catalog (`demo/`) as a first start loads it.
    pub async fn start_demo(backend: Backend) -> Self {
        Self::start_fixture(
            backend,
            Fixture::Demo,
            quick_settings(),
            ExecutorSettings::default(),
        )
        .await
    }

    /// A demo lab whose executor also has the `docker` provider, on the machine's Docker
    /// engine, keeping its client key under `keys`.
    pub async fn start_demo_with_docker(backend: Backend, keys: &std::path::Path) -> Self {
        let mut lab = Self::start_demo(backend).await;
        let docker = Arc::new(
            DockerProvider::connect(lab.store.clone(), keys)
                .await
                .unwrap(),
        );
        // The node image is built on its first use, from Debian's packages: minutes on a
        // fresh machine busy with other tests. Built here, it is not part of what a
        // test's job limit times.
        let started = Instant::now();
        let image = tokio::time::timeout(IMAGE_LIMIT, NodeImage::ensure(docker.docker()))
            .await
            .expect("the node image is built within its limit")
            .unwrap();
        eprintln!("node image {image} ready after {:?}", started.elapsed());
        lab.docker = Some(docker);
        lab.restart_workers().await;
        lab
    }

    /// A demo lab whose executor also has the `exec` provider, running plugins from
    /// `engine/tests/plugins` and keeping its client key under `keys`.
    pub async fn start_demo_with_exec(backend: Backend, keys: &std::path::Path) -> Self {
        let mut lab = Self::start_demo(backend).await;
        let plugins = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/plugins");
        lab.exec = Some(Arc::new(
            ExecProvider::new(lab.store.clone(), std::path::Path::new(plugins), keys).unwrap(),
        ));
        lab.restart_workers().await;
        lab
    }

    async fn start_fixture(
        backend: Backend,
        fixture: Fixture,
        settings: WorkerSettings,
        executor_settings: ExecutorSettings,
    ) -> Self {
        show_warnings();
        if fixture == Fixture::Lifecycle {
            let catalog = std::fs::read_to_string(format!("{FIXTURES}/catalog.json")).unwrap();
            let script = std::fs::read(format!("{FIXTURES}/web.sh")).unwrap();
            let staged = [(ResourceKind::Scripts, "web.sh", script)];
            return Self::start_catalog_with(
                backend,
                &catalog,
                &staged,
                settings,
                executor_settings,
            )
            .await;
        }
        let (db, store, resources, resources_dir) = open_store(backend).await;
        let loaded = engine::demo::load_if_empty(&store, &resources, DEFAULT_TENANT_ID, now_ms())
            .await
            .unwrap();
        assert!(matches!(loaded, engine::demo::Loaded::Loaded { .. }));
        Self::with_catalog(
            store,
            db,
            resources,
            resources_dir,
            settings,
            executor_settings,
        )
    }

    /// A lab whose default tenant has the catalog `bundle` (Coopr's JSON) and the staged
    /// plugin resources `staged`.
    pub async fn start_catalog(
        backend: Backend,
        bundle: &str,
        staged: &[(ResourceKind, &str, Vec<u8>)],
    ) -> Self {
        Self::start_catalog_with(
            backend,
            bundle,
            staged,
            quick_settings(),
            ExecutorSettings::default(),
        )
        .await
    }

    async fn start_catalog_with(
        backend: Backend,
        bundle: &str,
        staged: &[(ResourceKind, &str, Vec<u8>)],
        settings: WorkerSettings,
        executor_settings: ExecutorSettings,
    ) -> Self {
        let (db, store, resources, resources_dir) = open_store(backend).await;
        import_with_resources(&store, &resources, bundle, staged).await;
        Self::with_catalog(
            store,
            db,
            resources,
            resources_dir,
            settings,
            executor_settings,
        )
    }

    fn with_catalog(
        store: Store,
        db: TestDatabase,
        resources: ResourceFiles,
        resources_dir: tempfile::TempDir,
        settings: WorkerSettings,
        executor_settings: ExecutorSettings,
    ) -> Self {
        let nodes = tempfile::Builder::new()
            .prefix("corral-lab-")
            .tempdir()
            .unwrap();
        let nodes_dir = nodes.path().canonicalize().unwrap();
        let pool_keys = tempfile::tempdir().unwrap();
        let pool_keys_dir = pool_keys.path().join("keys");
        let queue = Queue::new(store.clone());
        let executor = executor(
            &queue,
            &nodes_dir,
            &pool_keys_dir,
            resources,
            executor_settings.clone(),
            None,
        );
        let pool = WorkerPool::start(executor.clone(), settings.clone());
        Self {
            queue,
            store,
            nodes_dir,
            executor,
            pool: Some(pool),
            settings,
            pool_keys_dir,
            executor_settings,
            docker: None,
            exec: None,
            _nodes: nodes,
            _pool_keys: pool_keys,
            _resources: resources_dir,
            _db: db,
        }
    }

    /// Submits a create of the `lifecycle` template.
    pub async fn create(&self, name: &str, size: u32) -> (Cluster, JobId) {
        self.create_from("lifecycle", name, size).await
    }

    /// Submits a create of `template` with its default services.
    pub async fn create_from(&self, template: &str, name: &str, size: u32) -> (Cluster, JobId) {
        self.create_in(DEFAULT_TENANT_ID, template, name, size)
            .await
    }

    /// Submits a create of `template` on the catalog's provider `provider`.
    pub async fn create_on(
        &self,
        provider: &str,
        template: &str,
        name: &str,
        size: u32,
    ) -> (Cluster, JobId) {
        self.create_owned_on(provider, template, name, size, None)
            .await
    }

    /// Submits a create of `template` on the catalog provider `provider`, for a cluster
    /// owned by the user `owner`.
    pub async fn create_owned_on(
        &self,
        provider: &str,
        template: &str,
        name: &str,
        size: u32,
        owner: Option<String>,
    ) -> (Cluster, JobId) {
        self.create_in_on(DEFAULT_TENANT_ID, provider, template, name, size, owner)
            .await
    }

    /// Submits a create of `template` in the tenant `tenant_id` on its catalog's
    /// provider `provider`.
    pub async fn create_in_on(
        &self,
        tenant_id: &str,
        provider: &str,
        template: &str,
        name: &str,
        size: u32,
        owner: Option<String>,
    ) -> (Cluster, JobId) {
        let mut solve = SolveRequest::of_size(size);
        solve.provider = Some(domain::names::ProviderName::parse(provider).unwrap());
        self.submit_create(tenant_id, template, name, solve, owner)
            .await
    }

    /// Submits a create of `template` in the tenant `tenant_id`.
    pub async fn create_in(
        &self,
        tenant_id: &str,
        template: &str,
        name: &str,
        size: u32,
    ) -> (Cluster, JobId) {
        self.submit_create(tenant_id, template, name, SolveRequest::of_size(size), None)
            .await
    }

    async fn submit_create(
        &self,
        tenant_id: &str,
        template: &str,
        name: &str,
        solve: SolveRequest,
        owner_id: Option<String>,
    ) -> (Cluster, JobId) {
        let request = CreateRequest {
            tenant_id: tenant_id.to_owned(),
            owner_id,
            name: ClusterName::parse(name).unwrap(),
            template: TemplateName::parse(template).unwrap(),
            solve,
            config: serde_json::Map::new(),
        };
        let created = create_cluster(&self.queue, &request, SubmitOptions::default(), now_ms())
            .await
            .unwrap();
        self.wake();
        created
    }

    pub async fn change(&self, cluster_id: &str, change: ClusterChange) -> JobId {
        let job = submit_change(
            &self.queue,
            cluster_id,
            &change,
            None,
            SubmitOptions::default(),
            now_ms(),
        )
        .await
        .unwrap();
        self.wake();
        job
    }

    pub fn wake(&self) {
        if let Some(pool) = &self.pool {
            pool.waker().notify_waiters();
        }
    }

    /// Waits for the job to end and returns its state; prints the failed tasks' output.
    pub async fn wait(&self, job_id: &JobId, limit: Duration) -> JobState {
        let started = Instant::now();
        loop {
            let job = self.queue.job(job_id).await.unwrap();
            if !job.state.is_active() && job.state != JobState::Cancelling {
                if job.state != JobState::Succeeded {
                    self.print_failures(job_id, job.error.as_deref()).await;
                }
                return job.state;
            }
            if started.elapsed() >= limit {
                for task in self.queue.job_tasks(job_id).await.unwrap() {
                    eprintln!(
                        "task {} node {} {:?} {:?}: {} (attempts {})",
                        task.number.0,
                        task.node,
                        task.action,
                        task.service,
                        task.state,
                        task.attempts
                    );
                }
                for event in self.queue.events_after(job_id, 0, 10_000).await.unwrap() {
                    eprintln!(
                        "event {} {:?} {}: {}",
                        event.id, event.task_id, event.kind, event.data
                    );
                }
            }
            assert!(
                started.elapsed() < limit,
                "job {job_id} still {} after {limit:?} ({}/{} tasks done)",
                job.state,
                job.tasks_succeeded,
                job.tasks_total
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub async fn print_failures(&self, job_id: &JobId, error: Option<&str>) {
        eprintln!("job {job_id} error: {error:?}");
        for task in self.queue.job_tasks(job_id).await.unwrap() {
            if task.state == queue::TaskState::Failed {
                for attempt in self.queue.task_attempts(&task.id).await.unwrap() {
                    eprintln!(
                        "task {} attempt {}: {:?}\nstdout: {}\nstderr: {}",
                        task.number.0,
                        attempt.attempt,
                        attempt.error,
                        attempt.stdout,
                        attempt.stderr
                    );
                }
            }
        }
    }

    /// Runs `command` on node `number` of `cluster_id` over the lab's SSH pool; returns
    /// its exit code and stdout.
    pub async fn run_on_node(&self, cluster_id: &str, number: i64, command: &str) -> (u32, String) {
        let row = self
            .store
            .list_nodes(cluster_id)
            .await
            .unwrap()
            .into_iter()
            .find(|node| node.number == number)
            .unwrap();
        let record: NodeRecord =
            serde_json::from_str(row.provider_json.as_deref().unwrap()).unwrap();
        let (sender, mut receiver) = tokio::sync::mpsc::channel(64);
        let options = engine::ssh::RunOptions {
            timeout: Duration::from_secs(30),
            output: Some(sender),
        };
        let outcome = self
            .executor
            .ssh()
            .run(&record.ssh_target(), command, options)
            .await
            .unwrap();
        let mut stdout = Vec::new();
        while let Some(chunk) = receiver.recv().await {
            if chunk.stream == engine::ssh::OutputStream::Stdout {
                stdout.extend(chunk.bytes);
            }
        }
        (outcome.exit.0, String::from_utf8(stdout).unwrap())
    }

    /// The lab's database, for a second connection pool (another worker process).
    pub fn store_url(&self) -> engine::store::DatabaseUrl {
        self._db.url.clone()
    }

    /// A running sshd an admin could register as a pool host: a local node under the
    /// lab's directory (so the lab's `Drop` ends it), reached with its own host key.
    pub async fn pool_machine(&self, id: &str) -> NodeRecord {
        local_provider(&self.nodes_dir)
            .create(&NodeSpec::new(id))
            .await
            .unwrap()
    }

    /// Processes of this lab's nodes still alive.
    pub fn live_processes(&self) -> Vec<i32> {
        LocalProvider::processes_under(&self.nodes_dir)
    }

    /// The lab's plugin resource files (where uploads go).
    pub fn resource_files(&self) -> ResourceFiles {
        ResourceFiles::in_directory(self._resources.path())
    }

    pub async fn stop_workers(&mut self) {
        if let Some(pool) = self.pool.take() {
            pool.shutdown().await;
        }
    }

    /// Stops the workers and starts them again as a restarted process would: a new
    /// executor with no open connections, whose pool first re-adopts the nodes.
    pub async fn restart_workers(&mut self) {
        self.stop_workers().await;
        self.executor = executor_with(
            &self.queue,
            &self.nodes_dir,
            &self.pool_keys_dir,
            self.resource_files(),
            self.executor_settings.clone(),
            self.docker.clone(),
            self.exec.clone(),
        );
        self.pool = Some(WorkerPool::start(
            self.executor.clone(),
            self.settings.clone(),
        ));
    }
}

/// The lab's executor: a `local` provider under `nodes_dir`, an `ssh-pool` provider
/// keeping keys in `pool_keys_dir`, `docker` where given, and a session pool of its own.
/// A fresh database of `backend`, its store, and a resource cache in a new directory.
async fn open_store(backend: Backend) -> (TestDatabase, Store, ResourceFiles, tempfile::TempDir) {
    let db = TestDatabase::new(backend).await;
    let store = Store::open(&db.url)
        .await
        .unwrap()
        .with_secret_key(engine::testing::test_secret_key());
    let resources_dir = tempfile::tempdir().unwrap();
    let resources = ResourceFiles::in_directory(resources_dir.path());
    (db, store, resources, resources_dir)
}

/// Uploads and stages `staged`, then imports `bundle` into the default tenant.
async fn import_with_resources(
    store: &Store,
    resources: &ResourceFiles,
    bundle: &str,
    staged: &[(ResourceKind, &str, Vec<u8>)],
) {
    for (kind, name, bytes) in staged {
        let upload = Upload {
            tenant_id: DEFAULT_TENANT_ID,
            kind: *kind,
            name,
            author_id: None,
        };
        let version = resources
            .upload(store, &upload, bytes, now_ms())
            .await
            .unwrap();
        resources
            .stage(store, DEFAULT_TENANT_ID, *kind, name, version.version)
            .await
            .unwrap();
    }
    let catalog = import_bundle(bundle).unwrap();
    let report = engine::catalog::import(store, DEFAULT_TENANT_ID, &catalog, None, now_ms())
        .await
        .unwrap();
    assert!(!report.has_errors(), "{report}");
}

pub fn executor(
    queue: &Queue,
    nodes_dir: &std::path::Path,
    pool_keys_dir: &std::path::Path,
    resources: ResourceFiles,
    settings: ExecutorSettings,
    docker: Option<Arc<DockerProvider>>,
) -> Executor {
    executor_with(
        queue,
        nodes_dir,
        pool_keys_dir,
        resources,
        settings,
        docker,
        None,
    )
}

/// [`executor`], also with `exec` where given.
pub fn executor_with(
    queue: &Queue,
    nodes_dir: &std::path::Path,
    pool_keys_dir: &std::path::Path,
    resources: ResourceFiles,
    settings: ExecutorSettings,
    docker: Option<Arc<DockerProvider>>,
    exec: Option<Arc<ExecProvider>>,
) -> Executor {
    let local = Arc::new(local_provider(nodes_dir));
    let ssh_pool = Arc::new(SshPoolProvider::new(queue.store().clone(), pool_keys_dir).unwrap());
    let mut providers = Providers::new().with(local).with(ssh_pool);
    if let Some(docker) = docker {
        providers = providers.with(docker);
    }
    if let Some(exec) = exec {
        providers = providers.with(exec);
    }
    Executor::new(
        queue.clone(),
        providers,
        Arc::new(SessionPool::new(PoolConfig::default())),
        resources,
        settings,
    )
}

/// The lab's `local` provider. Node homes go beside the nodes dir, outside it as beside a
/// server's data dir, so that the lab's `Drop` removes them (not under the machine's
/// default home root).
pub fn local_provider(nodes_dir: &std::path::Path) -> LocalProvider {
    LocalProvider::new(nodes_dir)
        .unwrap()
        .with_home_root(homes_dir(nodes_dir))
        .unwrap()
}

fn homes_dir(nodes_dir: &std::path::Path) -> PathBuf {
    nodes_dir.with_extension("homes")
}

/// Which catalog a lab's tenant starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fixture {
    /// `testdata/lifecycle`: the engine tests' own catalog.
    Lifecycle,
    /// `demo/`: what a first start loads.
    Demo,
}

impl Drop for Lab {
    fn drop(&mut self) {
        LocalProvider::kill_everything_under(&self.nodes_dir);
        let _ = std::fs::remove_dir_all(homes_dir(&self.nodes_dir));
    }
}
