//! `fanout`: one step (`uname -a`) on N local nodes through the whole engine, on fresh
//! connections and again on the open ones, against OpenSSH's client under `xargs -P N`.
//!
//! The engine path is what a user's job takes: a start of the `probe` service is
//! submitted as a job of N tasks, the worker pool claims them from the durable queue
//! (SQLite, the embedded default), runs each over its node's SSH session, and records
//! the result; a round ends when the job is recorded as succeeded and every task's
//! recorded output is `uname`'s. The nodes come from a normal create job first (not
//! timed); the fresh round runs on a new worker pool whose session pool has never
//! connected, as after a restart, once that pool has re-adopted the nodes.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use domain::catalog::coopr::import_bundle;
use domain::names::{ClusterName, ServiceName, TemplateName};
use domain::solver::SolveRequest;
use engine::execute::{Executor, ExecutorSettings, Providers};
use engine::operations::{create_cluster, submit_change, ClusterChange, CreateRequest};
use engine::provider::{LocalProvider, NodeRecord};
use engine::queue::{ClaimLimits, JobId, JobState, Queue, SubmitOptions};
use engine::resources::ResourceFiles;
use engine::ssh::{PoolConfig, SessionPool};
use engine::store::tenants::DEFAULT_TENANT_ID;
use engine::store::{now_ms, Store};
use engine::testing::TestDatabase;
use engine::worker::{WorkerPool, WorkerSettings};

use crate::usage::{cpu_ms, peak_rss_mb};
use crate::BenchError;

/// The benchmark's catalog: local nodes without limits and one service whose start
/// is the measured step.
pub(crate) const CATALOG: &str = include_str!("fanout/catalog.json");
const SERVICE: &str = "probe";
/// Creating and deleting N nodes takes a while (each start runs ssh-keygen and sshd).
pub(crate) const PROVISIONING_LIMIT: Duration = Duration::from_secs(600);
const ROUND_LIMIT: Duration = Duration::from_secs(120);
/// How often a round looks at its job; small next to the rounds measured.
const JOB_POLL: Duration = Duration::from_millis(2);

/// `--nodes N` (default 200): the options of the benchmarks that fan out over nodes.
#[derive(Debug)]
pub struct Options {
    pub(crate) nodes: usize,
}

impl Options {
    pub fn parse(args: &[String]) -> Result<Self, BenchError> {
        Ok(Options {
            nodes: crate::parse_count(args, "--nodes", 200)?,
        })
    }
}

pub fn run(options: Options) -> Result<String, BenchError> {
    crate::run_in_scratch_dir("corral-fanout-", |base| async move {
        fanout(&base, options.nodes).await
    })
}

/// One engine over a database (the process's one queue on it) and a node directory;
/// each [`Engine::start`] is a new worker pool with its own (empty) SSH session pool,
/// as a restarted server has.
pub(crate) struct Engine {
    pub(crate) queue: Queue,
    pub(crate) providers: Providers,
    pub(crate) resources: ResourceFiles,
}

pub(crate) struct Running {
    pub(crate) executor: Executor,
    pub(crate) pool: WorkerPool,
}

impl Engine {
    /// An engine over `queue` holding the bench's catalog ([`CATALOG`]) in the default
    /// tenant, with local nodes and resources under `base`.
    pub(crate) async fn with_catalog(queue: Queue, base: &Path) -> Result<Self, BenchError> {
        let catalog = import_bundle(CATALOG)
            .map_err(|error| BenchError::Failed(format!("bench catalog: {error}")))?;
        engine::catalog::import(queue.store(), DEFAULT_TENANT_ID, &catalog, None, now_ms())
            .await
            .map_err(|error| BenchError::Failed(format!("bench catalog import: {error}")))?;
        Ok(Engine {
            queue,
            providers: Providers::new().with(Arc::new(LocalProvider::new(base.join("nodes"))?)),
            resources: ResourceFiles::in_directory(base.join("resources")),
        })
    }

    pub(crate) fn start(&self, settings: WorkerSettings) -> Running {
        let executor = Executor::new(
            self.queue.clone(),
            self.providers.clone(),
            Arc::new(SessionPool::new(PoolConfig::default())),
            self.resources.clone(),
            ExecutorSettings::default(),
        );
        let pool = WorkerPool::start(executor.clone(), settings);
        Running { executor, pool }
    }
}

async fn fanout(base: &Path, nodes: usize) -> Result<String, BenchError> {
    let db = TestDatabase::sqlite();
    let store = Store::open(&db.url).await?;
    let queue = Queue::new(store.clone());
    let engine = Engine::with_catalog(queue.clone(), base).await?;
    let room = u32::try_from(nodes).unwrap_or(u32::MAX);
    // The measured pool is sized for the fan-out: every node's step may run at once.
    let fan_out = WorkerSettings {
        slots: nodes,
        limits: ClaimLimits {
            max_running: Some(room),
            max_running_per_tenant: Some(room),
            ..ClaimLimits::default()
        },
        ..WorkerSettings::default()
    };

    // Nodes are made as a server with the default pool makes them.
    let started = Instant::now();
    let provisioning = engine.start(WorkerSettings::default());
    let cluster_id = create(&provisioning, "fanout", nodes).await?;
    let Running { executor, pool } = provisioning;
    pool.shutdown().await;
    close_sessions(&executor, &store, &cluster_id).await?;
    drop(executor);
    let provision_s = started.elapsed().as_secs_f64();

    eprintln!(
        "fanout: {nodes} nodes up in {provision_s:.1} s (peak RSS so far {:.1} MB); measuring",
        peak_rss_mb()
    );
    let running = engine.start(fan_out);
    // A new pool first re-adopts the nodes it finds (as a restarted server does) and
    // claims nothing until that is done; the round measures steps, not the restart.
    running.pool.ready().await;
    let cpu_before = cpu_ms();
    let fresh = step_everywhere(&running, &cluster_id, nodes).await?;
    let client_cpu_ms_per_node = (cpu_ms() - cpu_before) / nodes as f64;
    let handshakes = running.executor.ssh().handshakes();
    if handshakes != nodes as u64 {
        return Err(BenchError::Failed(format!(
            "expected {nodes} handshakes on fresh connections, saw {handshakes}"
        )));
    }
    let reused = step_everywhere(&running, &cluster_id, nodes).await?;
    if running.executor.ssh().handshakes() != handshakes {
        return Err(BenchError::Failed(
            "the second round opened new connections".to_owned(),
        ));
    }
    eprintln!("fanout: engine rounds done; OpenSSH next");
    let records = node_records(&store, &cluster_id).await?;
    // Waiting for xargs blocks: off the runtime, whose workers still serve the worker
    // pool (heartbeats and claims each borrow a pooled database connection, and a task
    // parked on a blocked worker would hold its connection until every other waiter
    // timed out).
    let openssh_base = base.to_owned();
    let openssh = tokio::task::spawn_blocking(move || openssh_fanout(&openssh_base, &records))
        .await
        .map_err(|error| BenchError::Failed(format!("openssh fan-out: {error}")))??;
    let peak_rss_mb = peak_rss_mb();

    let started = Instant::now();
    let job = submit_change(
        &queue,
        &cluster_id,
        &ClusterChange::Delete { force: false },
        None,
        SubmitOptions::default(),
        now_ms(),
    )
    .await
    .map_err(|error| BenchError::Failed(format!("delete: {error}")))?;
    running.pool.waker().notify_waiters();
    wait_for(&queue, &job, PROVISIONING_LIMIT).await?;
    running.pool.shutdown().await;
    store.close().await;
    drop(db);
    // Not part of the tracked line, whose keys are fixed; useful when tuning the provider.
    eprintln!(
        "fanout provision_s={provision_s:.3} deprovision_s={:.3}",
        started.elapsed().as_secs_f64()
    );
    let fresh_s = fresh.as_secs_f64();
    let openssh_s = openssh.as_secs_f64();
    Ok(format!(
        "fanout nodes={nodes} corral_fresh_s={fresh_s:.3} corral_reused_s={:.3} openssh_s={openssh_s:.3} \
         ratio={:.2} client_cpu_ms_per_node={client_cpu_ms_per_node:.2} peak_rss_mb={peak_rss_mb:.1}",
        reused.as_secs_f64(),
        fresh_s / openssh_s,
    ))
}

/// Creates the cluster of `nodes` nodes of `template` through a normal create job.
pub(crate) async fn create(
    running: &Running,
    template: &str,
    nodes: usize,
) -> Result<String, BenchError> {
    let size =
        u32::try_from(nodes).map_err(|_| BenchError::Usage("--nodes is too large".to_owned()))?;
    let request = CreateRequest {
        tenant_id: DEFAULT_TENANT_ID.to_owned(),
        owner_id: None,
        name: ClusterName::parse(template)
            .map_err(|error| BenchError::Failed(error.to_string()))?,
        template: TemplateName::parse(template)
            .map_err(|error| BenchError::Failed(error.to_string()))?,
        solve: SolveRequest::of_size(size),
        config: serde_json::Map::new(),
    };
    let queue = running.executor.queue();
    let (cluster, job) = create_cluster(queue, &request, SubmitOptions::default(), now_ms())
        .await
        .map_err(|error| BenchError::Failed(format!("create: {error}")))?;
    running.pool.waker().notify_waiters();
    wait_for(queue, &job, PROVISIONING_LIMIT).await?;
    Ok(cluster.id)
}

/// Closes the provisioning pool's sessions so the next pool starts with none open.
async fn close_sessions(
    executor: &Executor,
    store: &Store,
    cluster_id: &str,
) -> Result<(), BenchError> {
    for record in node_records(store, cluster_id).await? {
        executor.ssh().close(&record.id).await;
    }
    Ok(())
}

/// Submits a start job of `service` on every node of the cluster that has it; the
/// job's id.
pub(crate) async fn start_service(
    queue: &Queue,
    cluster_id: &str,
    service: &str,
) -> Result<JobId, BenchError> {
    let name =
        ServiceName::parse(service).map_err(|error| BenchError::Failed(error.to_string()))?;
    let change = ClusterChange::Start {
        services: Some(BTreeSet::from([name])),
    };
    submit_change(
        queue,
        cluster_id,
        &change,
        None,
        SubmitOptions::default(),
        now_ms(),
    )
    .await
    .map_err(|error| BenchError::Failed(format!("start: {error}")))
}

/// One timed round: submit → claim → SSH → recorded result, for every node; checks
/// every task ran once and recorded `uname`'s output.
async fn step_everywhere(
    running: &Running,
    cluster_id: &str,
    nodes: usize,
) -> Result<Duration, BenchError> {
    let queue = running.executor.queue();
    let started = Instant::now();
    let submitted_ms = now_ms();
    let job = start_service(queue, cluster_id, SERVICE).await?;
    running.pool.waker().notify_waiters();
    wait_for(queue, &job, ROUND_LIMIT).await?;
    let elapsed = started.elapsed();

    let tasks = queue.job_tasks(&job).await?;
    if tasks.len() != nodes {
        return Err(BenchError::Failed(format!(
            "the start job has {} tasks for {nodes} nodes",
            tasks.len()
        )));
    }
    let mut claimed_ms = Vec::with_capacity(nodes);
    let mut finished_ms = Vec::with_capacity(nodes);
    for task in &tasks {
        let attempts = queue.task_attempts(&task.id).await?;
        match attempts.as_slice() {
            [attempt] if attempt.stdout.starts_with("Linux") => {
                claimed_ms.push(attempt.started_at_ms - submitted_ms);
                finished_ms.push(attempt.finished_at_ms - submitted_ms);
            }
            _ => {
                return Err(BenchError::Failed(format!(
                    "task {} on node {}: expected one attempt printing uname's line, found {:?}",
                    task.number.0,
                    task.node,
                    attempts
                        .iter()
                        .map(|attempt| (&attempt.stdout, &attempt.error))
                        .collect::<Vec<_>>()
                )))
            }
        }
    }
    claimed_ms.sort_unstable();
    finished_ms.sort_unstable();
    // Where a round's time goes, for tuning; not part of the tracked line.
    eprintln!(
        "fanout round: ms after submit: claims {} / {} / {}, results {} / {} / {} \
         (first / median / last), job seen done {}",
        claimed_ms[0],
        claimed_ms[nodes / 2],
        claimed_ms[nodes - 1],
        finished_ms[0],
        finished_ms[nodes / 2],
        finished_ms[nodes - 1],
        elapsed.as_millis()
    );
    Ok(elapsed)
}

/// Waits for `job` to end; anything but success fails the run with the job's error.
pub(crate) async fn wait_for(
    queue: &Queue,
    job_id: &JobId,
    limit: Duration,
) -> Result<(), BenchError> {
    let started = Instant::now();
    loop {
        let job = queue.job(job_id).await?;
        match job.state {
            JobState::Succeeded => return Ok(()),
            JobState::Failed | JobState::Cancelled => {
                return Err(BenchError::Failed(format!(
                    "job {job_id} {}: {}",
                    job.state,
                    job.error.as_deref().unwrap_or("no error recorded")
                )))
            }
            _ if started.elapsed() >= limit => {
                return Err(BenchError::Failed(format!(
                    "job {job_id} still {} after {limit:?} ({}/{} tasks done)",
                    job.state, job.tasks_succeeded, job.tasks_total
                )))
            }
            _ => tokio::time::sleep(JOB_POLL).await,
        }
    }
}

/// The provider's records of the cluster's nodes, as the engine stored them.
async fn node_records(store: &Store, cluster_id: &str) -> Result<Vec<NodeRecord>, BenchError> {
    store
        .list_nodes(cluster_id)
        .await?
        .into_iter()
        .map(|node| {
            let json = node.provider_json.ok_or_else(|| {
                BenchError::Failed(format!("node {} has no provider record", node.number))
            })?;
            serde_json::from_str(&json)
                .map_err(|error| BenchError::Failed(format!("node {}: {error}", node.number)))
        })
        .collect()
}

/// The same fan-out with OpenSSH's client: one `ssh` per node under `xargs -P N`, with the
/// host keys pinned in a known_hosts file as Corral pins them.
fn openssh_fanout(base: &Path, records: &[NodeRecord]) -> Result<Duration, BenchError> {
    let known_hosts = base.join("bench_known_hosts");
    let mut lines = String::new();
    let mut jobs = String::new();
    for record in records {
        lines.push_str(&format!(
            "[{}]:{} {}\n",
            record.host,
            record.port,
            record.host_key.to_openssh()
        ));
        jobs.push_str(&format!(
            "-i {} -p {} {}@{} uname -a\n",
            record.client_key_path.display(),
            record.port,
            record.user,
            record.host
        ));
    }
    std::fs::write(&known_hosts, lines)?;
    let parallel = records.len().to_string();
    let started = Instant::now();
    let mut xargs = Command::new("xargs")
        .args([
            "-P",
            &parallel,
            "-L",
            "1",
            "ssh",
            "-o",
            "KexAlgorithms=curve25519-sha256",
        ])
        .args(["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes"])
        .arg("-o")
        .arg(format!("UserKnownHostsFile={}", known_hosts.display()))
        .args(["-o", "LogLevel=ERROR"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    if let Some(mut stdin) = xargs.stdin.take() {
        stdin.write_all(jobs.as_bytes())?;
    }
    let output = xargs.wait_with_output()?;
    let elapsed = started.elapsed();
    let answered = output
        .stdout
        .split(|byte| *byte == b'\n')
        .filter(|line| line.starts_with(b"Linux"))
        .count();
    if !output.status.success() || answered != records.len() {
        return Err(BenchError::Failed(format!(
            "openssh fan-out: xargs ended {} with {answered} of {} nodes answering",
            output.status,
            records.len()
        )));
    }
    Ok(elapsed)
}
