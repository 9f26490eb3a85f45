//! The durable task queue on both backends: ordering, node exclusivity, leases,
//! retries, cancel/retry, event offsets and limits, one task or a batch at a time.

#![allow(clippy::unwrap_used)] // Tests fail loudly by design.

use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use api_types::{
    ClusterState, EventKind, JobId, Operation, OutputStream, TaskAction, TaskRecordId,
};
use domain::plan::{Action, TaskDag, TaskId};
use queue::{
    ClaimLimits, ClaimedTask, ClusterEffects, Completion, Heartbeat, JobState, NewEvent, Outcome,
    OutcomeKind, Queue, QueueError, SubmitOptions, TaskFilter, TaskState, WorkerScope, DEFER_MS,
};
use store::tenants::{NewTenant, TenantSwitch, DEFAULT_TENANT_ID};
use store::testing::TestDatabase;
use store::{Backend, Store};

const LEASE_MS: i64 = 10_000;

async fn open(backend: Backend) -> (TestDatabase, Queue) {
    let db = TestDatabase::new(backend).await;
    let store = Store::open(&db.url).await.unwrap();
    (db, Queue::new(store))
}

async fn cluster(queue: &Queue, tenant_id: &str, name: &str) -> String {
    queue
        .store()
        .create_cluster(&store::testing::bare_cluster(tenant_id, name), 0)
        .await
        .unwrap()
        .id
}

/// A DAG from `(node, action, after)` triples; ids are positions.
fn dag(tasks: &[(u32, Action, &[u32])]) -> TaskDag {
    let tasks: Vec<serde_json::Value> = tasks
        .iter()
        .enumerate()
        .map(|(id, (node, action, after))| {
            serde_json::json!({
                "id": id, "node": node, "service": null, "action": action,
                "after": after, "stage": 0,
            })
        })
        .collect();
    serde_json::from_value(serde_json::json!({ "tasks": tasks })).unwrap()
}

/// `nodes` nodes, each a chain of `per_node` tasks; every task on a later node also
/// waits for the same step on the first node (a service dependency across nodes).
fn layered_dag(nodes: u32, per_node: u32) -> TaskDag {
    let actions = [
        Action::Create,
        Action::Confirm,
        Action::Bootstrap,
        Action::Install,
        Action::Configure,
        Action::Initialize,
        Action::Start,
    ];
    let mut tasks: Vec<(u32, Action, Vec<u32>)> = Vec::new();
    for step in 0..per_node {
        for node in 0..nodes {
            let id = u32::try_from(tasks.len()).unwrap();
            let mut after = Vec::new();
            if step > 0 {
                after.push(id - nodes); // previous step on this node
            }
            if node > 0 {
                after.push(id - node); // same step on the first node
            }
            tasks.push((1000 + node, actions[step as usize % actions.len()], after));
        }
    }
    let borrowed: Vec<(u32, Action, &[u32])> = tasks
        .iter()
        .map(|(n, a, after)| (*n, *a, after.as_slice()))
        .collect();
    dag(&borrowed)
}

async fn submit(queue: &Queue, cluster_id: &str, dag: &TaskDag, options: &SubmitOptions) -> JobId {
    queue
        .submit_job(
            DEFAULT_TENANT_ID,
            cluster_id,
            Operation::Create,
            dag,
            options,
            0,
        )
        .await
        .unwrap()
}

async fn claim(queue: &Queue, worker: &str, now: i64) -> Option<ClaimedTask> {
    queue
        .claim(worker, LEASE_MS, ClaimLimits::default(), now)
        .await
        .unwrap()
}

async fn task_state(queue: &Queue, job_id: &JobId, number: u32) -> TaskState {
    queue.job_tasks(job_id).await.unwrap()[number as usize].state
}

async fn drain(queue: &Queue, worker: &str, now: i64) -> usize {
    let mut done = 0;
    while let Some(task) = claim(queue, worker, now).await {
        queue
            .complete(&task.lease(), &Outcome::succeeded(), now)
            .await
            .unwrap();
        done += 1;
    }
    done
}

async fn two_claimers_drain_in_dependency_order(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let cluster_id = cluster(&queue, DEFAULT_TENANT_ID, "c1").await;
    let plan = layered_dag(4, 6);
    let job_id = submit(&queue, &cluster_id, &plan, &SubmitOptions::default()).await;
    let clock = Arc::new(AtomicI64::new(1));
    let claimed = Arc::new(std::sync::Mutex::new(Vec::new()));

    let mut workers = Vec::new();
    for worker in ["w1", "w2"] {
        let (queue, plan, clock, claimed, job_id) = (
            queue.clone(),
            plan.clone(),
            clock.clone(),
            claimed.clone(),
            job_id.clone(),
        );
        workers.push(tokio::spawn(async move {
            loop {
                let now = clock.fetch_add(1, Ordering::SeqCst);
                let Some(task) = claim(&queue, worker, now).await else {
                    if queue.job(&job_id).await.unwrap().state == JobState::Succeeded {
                        break;
                    }
                    tokio::task::yield_now().await;
                    continue;
                };
                // Checked after the claim committed: prerequisites stay succeeded once
                // they are, so any other state means the claim came too early.
                let tasks = queue.job_tasks(&job_id).await.unwrap();
                for prereq in &plan.get(task.number).unwrap().after {
                    assert_eq!(
                        tasks[prereq.index()].state,
                        TaskState::Succeeded,
                        "task {} claimed before prerequisite {prereq}",
                        task.number
                    );
                }
                let running_here = tasks
                    .iter()
                    .filter(|t| t.node == task.node && t.state == TaskState::Running)
                    .count();
                assert_eq!(running_here, 1, "two tasks running on node {}", task.node);
                claimed.lock().unwrap().push((worker, task.number));
                tokio::task::yield_now().await;
                let now = clock.fetch_add(1, Ordering::SeqCst);
                queue
                    .complete(&task.lease(), &Outcome::succeeded(), now)
                    .await
                    .unwrap();
            }
        }));
    }
    for worker in workers {
        worker.await.unwrap();
    }
    let claimed = claimed.lock().unwrap().clone();
    let unique: BTreeSet<TaskId> = claimed.iter().map(|(_, id)| *id).collect();
    assert_eq!(claimed.len(), plan.len(), "every task claimed exactly once");
    assert_eq!(unique.len(), plan.len());
    let job = queue.job(&job_id).await.unwrap();
    assert_eq!(job.state, JobState::Succeeded);
    assert_eq!(job.tasks_succeeded, 24);
    assert!(queue
        .job_tasks(&job_id)
        .await
        .unwrap()
        .iter()
        .all(|t| t.state == TaskState::Succeeded && t.attempts == 1));
}

async fn expired_lease_requeues_and_old_worker_is_refused(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let cluster_id = cluster(&queue, DEFAULT_TENANT_ID, "c1").await;
    let options = SubmitOptions {
        max_attempts: 3,
        backoff_ms: 1_000,
        ..SubmitOptions::default()
    };
    let job_id = submit(
        &queue,
        &cluster_id,
        &dag(&[(1000, Action::Create, &[])]),
        &options,
    )
    .await;

    let first = claim(&queue, "w1", 0).await.unwrap();
    assert_eq!(first.attempt, 1);
    assert!(claim(&queue, "w2", 0).await.is_none(), "claimed twice");
    // Not expired yet: a heartbeat extends it, a sweep leaves it alone.
    assert!(matches!(
        queue
            .heartbeat(&first.lease(), LEASE_MS, 5_000)
            .await
            .unwrap(),
        Heartbeat::Continue {
            lease_expires_ms: 15_000
        }
    ));
    assert!(queue.requeue_expired(14_999).await.unwrap().is_empty());

    // The server "dies": no heartbeat; the sweep after expiry requeues the task.
    let expired = queue.requeue_expired(15_001).await.unwrap();
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].task_state, TaskState::Ready);
    assert_eq!(expired[0].worker_id, "w1");
    // Backoff: not claimable before 15_001 + 1_000.
    assert!(claim(&queue, "w2", 16_000).await.is_none());
    let second = claim(&queue, "w2", 16_001).await.unwrap();
    assert_eq!(second.attempt, 2);
    assert_eq!(second.task_id, first.task_id);

    // The first worker comes back: its heartbeat and completion are refused.
    assert!(matches!(
        queue.heartbeat(&first.lease(), LEASE_MS, 16_002).await,
        Err(QueueError::LeaseLost { .. })
    ));
    let refused = queue
        .complete(&first.lease(), &Outcome::succeeded(), 16_003)
        .await;
    assert!(
        matches!(refused, Err(QueueError::LeaseLost { attempt: 1, .. })),
        "{refused:?}"
    );
    assert_eq!(task_state(&queue, &job_id, 0).await, TaskState::Running);

    let output = Outcome {
        stdout: "x".repeat(queue::OUTPUT_CAP_BYTES + 10),
        ..Outcome::succeeded()
    };
    let done = queue
        .complete(&second.lease(), &output, 16_004)
        .await
        .unwrap();
    assert_eq!(done.job_state, JobState::Succeeded);
    let attempts = queue.task_attempts(&first.task_id).await.unwrap();
    assert_eq!(attempts.len(), 2);
    assert_eq!(
        (attempts[0].attempt, attempts[0].worker_id.as_str()),
        (1, "w1")
    );
    assert_eq!(attempts[0].outcome, "ready");
    assert!(attempts[0].error.as_deref().unwrap().contains("expired"));
    assert_eq!(
        (attempts[1].attempt, attempts[1].outcome.as_str()),
        (2, "succeeded")
    );
    assert_eq!(attempts[1].stdout.len(), queue::OUTPUT_CAP_BYTES);
    // Completing twice is refused too: the lease ended with the first completion.
    assert!(matches!(
        queue
            .complete(&second.lease(), &Outcome::succeeded(), 16_005)
            .await,
        Err(QueueError::LeaseLost { .. })
    ));
}

async fn failed_idempotent_task_is_retried_with_backoff(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let cluster_id = cluster(&queue, DEFAULT_TENANT_ID, "c1").await;
    let options = SubmitOptions {
        max_attempts: 2,
        backoff_ms: 100,
        ..SubmitOptions::default()
    };
    let job_id = submit(
        &queue,
        &cluster_id,
        &dag(&[(1000, Action::Install, &[])]),
        &options,
    )
    .await;
    let task = claim(&queue, "w1", 0).await.unwrap();
    let done = queue
        .complete(&task.lease(), &Outcome::failed("exit 1"), 10)
        .await
        .unwrap();
    assert_eq!(done.task_state, TaskState::Ready);
    assert_eq!(done.job_state, JobState::Running);
    assert!(claim(&queue, "w1", 109).await.is_none());
    let again = claim(&queue, "w1", 110).await.unwrap();
    assert_eq!(again.attempt, 2);
    // Attempts exhausted: the job fails and says which task and why.
    let done = queue
        .complete(&again.lease(), &Outcome::failed("exit 2"), 120)
        .await
        .unwrap();
    assert_eq!(done.task_state, TaskState::Failed);
    assert_eq!(done.job_state, JobState::Failed);
    let job = queue.job(&job_id).await.unwrap();
    let error = job.error.unwrap();
    assert!(
        error.contains("1000-install") && error.contains("exit 2"),
        "{error}"
    );

    // A worker that stops a step nobody cancelled fails the job rather than leave it hanging.
    let other = submit(
        &queue,
        &cluster_id,
        &dag(&[(1000, Action::Install, &[])]),
        &options,
    )
    .await;
    let task = claim(&queue, "w1", 200).await.unwrap();
    assert_eq!(task.job_id, other);
    let done = queue
        .complete(&task.lease(), &Outcome::stopped(), 201)
        .await
        .unwrap();
    assert_eq!(
        (done.task_state, done.job_state),
        (TaskState::Failed, JobState::Failed)
    );
}

async fn non_idempotent_task_is_not_retried(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let cluster_id = cluster(&queue, DEFAULT_TENANT_ID, "c1").await;
    let options = SubmitOptions {
        max_attempts: 5,
        backoff_ms: 0,
        non_idempotent: BTreeSet::from([Action::Create]),
        ..SubmitOptions::default()
    };
    let plan = dag(&[
        (1000, Action::Create, &[]),
        (1000, Action::Confirm, &[0]),
        (1001, Action::Create, &[]),
    ]);
    let job_id = submit(&queue, &cluster_id, &plan, &options).await;
    let first = claim(&queue, "w1", 0).await.unwrap();
    assert!(!first.idempotent);
    let done = queue
        .complete(&first.lease(), &Outcome::failed("quota"), 1)
        .await
        .unwrap();
    assert_eq!(done.task_state, TaskState::Failed);
    assert_eq!(done.job_state, JobState::Failed);
    // Nothing else of the failed job starts, not even the other ready node.
    assert!(claim(&queue, "w1", 2).await.is_none());
    assert_eq!(task_state(&queue, &job_id, 2).await, TaskState::Pending);

    // A lost lease on a non-idempotent task fails rather than re-running it.
    let other = submit(
        &queue,
        &cluster_id,
        &dag(&[(1000, Action::Create, &[])]),
        &options,
    )
    .await;
    let task = claim(&queue, "w1", 10).await.unwrap();
    assert_eq!(task.job_id, other);
    let expired = queue.requeue_expired(10 + LEASE_MS + 1).await.unwrap();
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].task_state, TaskState::Failed);
    assert_eq!(queue.job(&other).await.unwrap().state, JobState::Failed);
    assert!(claim(&queue, "w1", 1_000_000).await.is_none());
}

async fn retry_after_failure_completes_the_job(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let cluster_id = cluster(&queue, DEFAULT_TENANT_ID, "c1").await;
    let options = SubmitOptions {
        max_attempts: 1,
        ..SubmitOptions::default()
    };
    let plan = layered_dag(2, 3);
    let job_id = submit(&queue, &cluster_id, &plan, &options).await;
    // Tasks 0 and 1 (step 0 on both nodes) succeed, task 2 fails.
    for _ in 0..2 {
        let task = claim(&queue, "w1", 1).await.unwrap();
        queue
            .complete(&task.lease(), &Outcome::succeeded(), 1)
            .await
            .unwrap();
    }
    let task = claim(&queue, "w1", 2).await.unwrap();
    assert_eq!(task.number, TaskId(2));
    let done = queue
        .complete(&task.lease(), &Outcome::failed("boom"), 3)
        .await
        .unwrap();
    assert_eq!(done.job_state, JobState::Failed);
    assert!(claim(&queue, "w1", 4).await.is_none());

    // What a rollback plan needs.
    assert_eq!(queue.job_plan(&job_id).await.unwrap(), plan);
    assert_eq!(
        queue.completed_tasks(&job_id).await.unwrap(),
        BTreeSet::from([TaskId(0), TaskId(1)])
    );

    assert_eq!(
        queue.retry_job(&job_id, 5).await.unwrap(),
        JobState::Running
    );
    assert_eq!(
        queue.retry_job(&job_id, 5).await.unwrap(),
        JobState::Running
    );
    assert_eq!(
        drain(&queue, "w2", 6).await,
        4,
        "only the unfinished tasks run"
    );
    let job = queue.job(&job_id).await.unwrap();
    assert_eq!(job.state, JobState::Succeeded);
    assert_eq!(job.error, None);
    let tasks = queue.job_tasks(&job_id).await.unwrap();
    assert_eq!(tasks[0].attempts, 1, "succeeded task not re-run");
    assert_eq!(tasks[2].attempts, 2);
}

async fn cancel_twice_then_retry(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let cluster_id = cluster(&queue, DEFAULT_TENANT_ID, "c1").await;
    let plan = layered_dag(2, 2);
    let job_id = submit(&queue, &cluster_id, &plan, &SubmitOptions::default()).await;
    let running = claim(&queue, "w1", 1).await.unwrap();

    assert_eq!(
        queue.cancel_job(&job_id, 2).await.unwrap(),
        JobState::Cancelling
    );
    assert_eq!(
        queue.cancel_job(&job_id, 3).await.unwrap(),
        JobState::Cancelling
    );
    assert!(
        claim(&queue, "w2", 4).await.is_none(),
        "cancelled job handed out work"
    );
    assert!(matches!(
        queue.retry_job(&job_id, 4).await,
        Err(QueueError::InvalidState { .. })
    ));
    assert!(matches!(
        queue
            .heartbeat(&running.lease(), LEASE_MS, 5)
            .await
            .unwrap(),
        Heartbeat::Stop { .. }
    ));
    let done = queue
        .complete(&running.lease(), &Outcome::stopped(), 6)
        .await
        .unwrap();
    assert_eq!(done.task_state, TaskState::Cancelled);
    assert_eq!(done.job_state, JobState::Cancelled);
    assert_eq!(
        queue.cancel_job(&job_id, 7).await.unwrap(),
        JobState::Cancelled
    );

    // A cancelled job with nothing running is cancelled at once.
    let idle = submit(&queue, &cluster_id, &plan, &SubmitOptions::default()).await;
    assert_eq!(
        queue.cancel_job(&idle, 8).await.unwrap(),
        JobState::Cancelled
    );

    assert_eq!(
        queue.retry_job(&job_id, 9).await.unwrap(),
        JobState::Running
    );
    assert_eq!(drain(&queue, "w1", 10).await, 4);
    assert_eq!(queue.job(&job_id).await.unwrap().state, JobState::Succeeded);
}

async fn events_resume_from_an_offset(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let cluster_id = cluster(&queue, DEFAULT_TENANT_ID, "c1").await;
    let job_id = submit(
        &queue,
        &cluster_id,
        &layered_dag(1, 1),
        &SubmitOptions::default(),
    )
    .await;
    let other_job = submit(
        &queue,
        &cluster_id,
        &layered_dag(1, 1),
        &SubmitOptions::default(),
    )
    .await;
    const PER_WRITER: usize = 60;

    // Two writers append while a reader follows with offsets, as an SSE client would.
    let mut writers = Vec::new();
    for writer in 0..2 {
        let (queue, job_id, other_job) = (queue.clone(), job_id.clone(), other_job.clone());
        writers.push(tokio::spawn(async move {
            for n in 0..PER_WRITER {
                let event = |job: &JobId| NewEvent {
                    job_id: job.clone(),
                    task_id: None,
                    attempt: Some(1),
                    kind: EventKind::Output,
                    stream: Some(OutputStream::Stdout),
                    data: format!("{writer}:{n}"),
                };
                queue.append_event(&event(&job_id), 0).await.unwrap();
                queue.append_event(&event(&other_job), 0).await.unwrap();
            }
        }));
    }
    let mut seen = Vec::new();
    let mut offset = 0;
    while seen.len() < 2 * PER_WRITER {
        let batch = queue.events_after(&job_id, offset, 7).await.unwrap();
        if let Some(last) = batch.last() {
            offset = last.id;
        } else {
            tokio::task::yield_now().await;
        }
        seen.extend(batch);
    }
    for writer in writers {
        writer.await.unwrap();
    }
    assert!(queue
        .events_after(&job_id, offset, 100)
        .await
        .unwrap()
        .is_empty());
    let data: HashSet<&str> = seen.iter().map(|e| e.data.as_str()).collect();
    assert_eq!(data.len(), 2 * PER_WRITER, "duplicates or gaps");
    assert!(seen.iter().all(|e| e.job_id == job_id));
    assert!(seen.windows(2).all(|w| w[0].id < w[1].id));
    // Each writer's events arrive in the order it wrote them.
    for writer in 0..2 {
        let mine: Vec<usize> = seen
            .iter()
            .filter_map(|e| e.data.strip_prefix(&format!("{writer}:")))
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(mine, (0..PER_WRITER).collect::<Vec<_>>());
    }
    // Resuming from the middle returns exactly the rest.
    let middle = seen[40].id;
    let rest = queue.events_after(&job_id, middle, 1_000).await.unwrap();
    assert_eq!(rest, seen[41..].to_vec());
}

async fn tenant_and_global_limits_are_respected(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let acme = queue
        .store()
        .create_tenant(&NewTenant {
            name: "acme".into(),
            max_clusters: None,
            max_nodes: None,
            provider_types: NewTenant::all_provider_types(),
        })
        .await
        .unwrap();
    let busy = cluster(&queue, DEFAULT_TENANT_ID, "big").await;
    let small = cluster(&queue, &acme.id, "small").await;
    let four_nodes = dag(&[
        (1000, Action::Create, &[]),
        (1001, Action::Create, &[]),
        (1002, Action::Create, &[]),
        (1003, Action::Create, &[]),
    ]);
    let options = SubmitOptions::default();
    queue
        .submit_job(
            DEFAULT_TENANT_ID,
            &busy,
            Operation::Create,
            &four_nodes,
            &options,
            0,
        )
        .await
        .unwrap();
    queue
        .submit_job(
            &acme.id,
            &small,
            Operation::Create,
            &four_nodes,
            &options,
            1,
        )
        .await
        .unwrap();
    let limits = ClaimLimits {
        max_running: Some(5),
        max_running_per_tenant: Some(3),
        ..ClaimLimits::default()
    };
    let mut claimed = Vec::new();
    while let Some(task) = queue.claim("w", LEASE_MS, limits, 10).await.unwrap() {
        claimed.push(task);
    }
    let per_tenant = |tenant: &str| claimed.iter().filter(|t| t.tenant_id == tenant).count();
    assert_eq!(claimed.len(), 5, "global limit");
    assert_eq!(per_tenant(DEFAULT_TENANT_ID), 3, "tenant limit");
    assert_eq!(per_tenant(&acme.id), 2);

    // Finishing one of the default tenant's tasks frees a slot, but that tenant is
    // still at its limit only if it has more work: it has one task left.
    let default_task = claimed
        .iter()
        .find(|t| t.tenant_id == DEFAULT_TENANT_ID)
        .unwrap();
    queue
        .complete(&default_task.lease(), &Outcome::succeeded(), 11)
        .await
        .unwrap();
    let next = queue
        .claim("w", LEASE_MS, limits, 12)
        .await
        .unwrap()
        .unwrap();
    assert!(queue
        .claim("w", LEASE_MS, limits, 12)
        .await
        .unwrap()
        .is_none());
    let running_default = claimed
        .iter()
        .filter(|t| t.tenant_id == DEFAULT_TENANT_ID && t.task_id != default_task.task_id)
        .count()
        + usize::from(next.tenant_id == DEFAULT_TENANT_ID);
    assert!(running_default <= 3);
}

async fn large_dag_submits_in_one_transaction(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let cluster_id = cluster(&queue, DEFAULT_TENANT_ID, "huge").await;
    // 1,000 nodes x 30 steps with cross-node edges: 30,000 tasks, ~59,000 edges.
    let plan = layered_dag(1_000, 30);
    assert_eq!(plan.len(), 30_000);
    let started = std::time::Instant::now();
    let job_id = submit(&queue, &cluster_id, &plan, &SubmitOptions::default()).await;
    eprintln!(
        "queue submit backend={backend:?} tasks={} edges={} ms={}",
        plan.len(),
        plan.edge_count(),
        started.elapsed().as_millis()
    );
    let job = queue.job(&job_id).await.unwrap();
    assert_eq!(job.tasks_total, 30_000);
    // Only the first node's first task is ready; the rest wait on it.
    let first = claim(&queue, "w", 1).await.unwrap();
    assert_eq!(first.number, TaskId(0));
    assert!(claim(&queue, "w", 1).await.is_none());
    queue
        .complete(&first.lease(), &Outcome::succeeded(), 2)
        .await
        .unwrap();
    // Now step 0 of the 999 other nodes and step 1 of the first node are ready.
    let mut ready = 0;
    while claim(&queue, "w", 3).await.is_some() {
        ready += 1;
    }
    assert_eq!(ready, 1_000);
}

async fn claim_batch(queue: &Queue, worker: &str, max: usize, now: i64) -> Vec<ClaimedTask> {
    queue
        .claim_batch(worker, LEASE_MS, ClaimLimits::default(), max, now)
        .await
        .unwrap()
}

/// Completes every task as succeeded in one batch; all must be accepted.
async fn succeed_all(queue: &Queue, tasks: &[ClaimedTask], now: i64) -> Vec<Completion> {
    let finished: Vec<_> = tasks
        .iter()
        .map(|task| (task.lease(), Outcome::succeeded()))
        .collect();
    queue
        .complete_batch(&finished, now)
        .await
        .unwrap()
        .into_iter()
        .map(Result::unwrap)
        .collect()
}

/// No two claimed tasks share a node, and none is claimed before its prerequisites.
async fn assert_claim_rules(queue: &Queue, claimed: &[ClaimedTask]) {
    let nodes: HashSet<(&str, u32)> = claimed
        .iter()
        .map(|task| (task.cluster_id.as_str(), task.node))
        .collect();
    assert_eq!(
        nodes.len(),
        claimed.len(),
        "two tasks on one node: {claimed:?}"
    );
    for task in claimed {
        let plan = queue.job_plan(&task.job_id).await.unwrap();
        let tasks = queue.job_tasks(&task.job_id).await.unwrap();
        for prereq in &plan.get(task.number).unwrap().after {
            assert_eq!(
                tasks[prereq.index()].state,
                TaskState::Succeeded,
                "task {} claimed before prerequisite {prereq}",
                task.number
            );
        }
        let running_here = tasks
            .iter()
            .filter(|t| t.node == task.node && t.state == TaskState::Running)
            .count();
        assert_eq!(running_here, 1, "two tasks running on node {}", task.node);
    }
}

async fn a_claim_takes_the_room_it_is_given_when_its_turn_comes(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let cluster_id = cluster(&queue, DEFAULT_TENANT_ID, "c").await;
    let four_nodes = dag(&[
        (1000, Action::Create, &[]),
        (1001, Action::Create, &[]),
        (1002, Action::Create, &[]),
        (1003, Action::Create, &[]),
    ]);
    queue
        .submit_job(
            DEFAULT_TENANT_ID,
            &cluster_id,
            Operation::Create,
            &four_nodes,
            &SubmitOptions::default(),
            0,
        )
        .await
        .unwrap();
    let limits = ClaimLimits::default();
    let asked = std::sync::atomic::AtomicUsize::new(0);
    let room = |free: usize| {
        let asked = &asked;
        move || {
            asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            free
        }
    };
    // No room by then: nothing is taken and every task stays ready.
    let none = queue
        .claim_up_to("w", LEASE_MS, limits, room(0), 1)
        .await
        .unwrap();
    assert!(none.is_empty());
    let two = queue
        .claim_up_to("w", LEASE_MS, limits, room(2), 2)
        .await
        .unwrap();
    assert_eq!(two.len(), 2);
    assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 2);
    assert_eq!(claim_batch(&queue, "w", 10, 3).await.len(), 2);
}

async fn batch_claim_respects_nodes_limits_and_prerequisites(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let acme = queue
        .store()
        .create_tenant(&NewTenant {
            name: "acme".into(),
            max_clusters: None,
            max_nodes: None,
            provider_types: NewTenant::all_provider_types(),
        })
        .await
        .unwrap();
    let busy = cluster(&queue, DEFAULT_TENANT_ID, "big").await;
    let small = cluster(&queue, &acme.id, "small").await;
    // Three tasks on node 1000, one on 1001, one on 1002 waiting for task 0.
    let shared_node = dag(&[
        (1000, Action::Create, &[]),
        (1000, Action::Confirm, &[]),
        (1000, Action::Bootstrap, &[]),
        (1001, Action::Create, &[]),
        (1002, Action::Create, &[0]),
    ]);
    let four_nodes = dag(&[
        (1000, Action::Create, &[]),
        (1001, Action::Create, &[]),
        (1002, Action::Create, &[]),
        (1003, Action::Create, &[]),
    ]);
    let options = SubmitOptions::default();
    let busy_job = queue
        .submit_job(
            DEFAULT_TENANT_ID,
            &busy,
            Operation::Create,
            &shared_node,
            &options,
            0,
        )
        .await
        .unwrap();
    let small_job = queue
        .submit_job(
            &acme.id,
            &small,
            Operation::Create,
            &four_nodes,
            &options,
            1,
        )
        .await
        .unwrap();
    let limits = ClaimLimits {
        max_running: Some(5),
        max_running_per_tenant: Some(3),
        ..ClaimLimits::default()
    };

    let first = queue
        .claim_batch("w", LEASE_MS, limits, 100, 10)
        .await
        .unwrap();
    assert_claim_rules(&queue, &first).await;
    let per_tenant = |tasks: &[ClaimedTask], tenant: &str| {
        tasks.iter().filter(|t| t.tenant_id == tenant).count()
    };
    // The default tenant has only two free nodes with ready work; acme stops at its limit.
    assert_eq!(per_tenant(&first, DEFAULT_TENANT_ID), 2);
    assert_eq!(per_tenant(&first, &acme.id), 3, "tenant limit");
    assert_eq!(first.len(), 5, "global limit");
    assert!(first.iter().all(|t| t.attempt == 1 && t.worker_id == "w"));
    assert!(
        !first
            .iter()
            .any(|t| t.job_id == busy_job && t.number == TaskId(4)),
        "task 4 waits for task 0"
    );
    assert_eq!(queue.job(&busy_job).await.unwrap().state, JobState::Running);
    assert_eq!(
        queue.job(&small_job).await.unwrap().state,
        JobState::Running
    );
    assert!(queue
        .claim_batch("w", LEASE_MS, limits, 100, 10)
        .await
        .unwrap()
        .is_empty());

    // Task 0 succeeds: node 1000 is free again and task 4 is ready, but one slot is
    // left globally and acme is still at its limit.
    let task0 = first
        .iter()
        .find(|t| t.job_id == busy_job && t.number == TaskId(0))
        .unwrap();
    succeed_all(&queue, std::slice::from_ref(task0), 11).await;
    let second = queue
        .claim_batch("w", LEASE_MS, limits, 100, 12)
        .await
        .unwrap();
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].job_id, busy_job);
    assert_claim_rules(&queue, &second).await;

    // Without limits, one batch takes one task per free node and nothing more.
    let rest = claim_batch(&queue, "w2", 100, 13).await;
    assert_claim_rules(&queue, &rest).await;
    let running: Vec<ClaimedTask> = first
        .iter()
        .filter(|t| t.task_id != task0.task_id)
        .chain(&second)
        .chain(&rest)
        .cloned()
        .collect();
    let nodes: HashSet<(&str, u32)> = running
        .iter()
        .map(|t| (t.cluster_id.as_str(), t.node))
        .collect();
    assert_eq!(nodes.len(), running.len(), "two running tasks on one node");
    assert_eq!(running.len(), 7, "every free node of both clusters is busy");

    // A cancelled job's ready tasks are never handed out.
    succeed_all(&queue, &running, 14).await;
    let cancelled = submit(&queue, &busy, &four_nodes, &options).await;
    assert_eq!(
        queue.cancel_job(&cancelled, 15).await.unwrap(),
        JobState::Cancelled
    );
    let last = claim_batch(&queue, "w", 100, 16).await;
    assert!(last.iter().all(|t| t.job_id != cancelled), "{last:?}");

    // Backoff holds in a batch too: a retried task waits for its not-before time.
    let options = SubmitOptions {
        max_attempts: 2,
        backoff_ms: 1_000,
        ..SubmitOptions::default()
    };
    let retried = queue
        .submit_job(
            &acme.id,
            &small,
            Operation::Create,
            &dag(&[(2000, Action::Install, &[])]),
            &options,
            20,
        )
        .await
        .unwrap();
    let claimed = claim_batch(&queue, "w", 100, 20).await;
    let task = claimed.iter().find(|t| t.job_id == retried).unwrap();
    queue
        .complete(&task.lease(), &Outcome::failed("flaky"), 21)
        .await
        .unwrap();
    assert!(claim_batch(&queue, "w", 100, 1_020).await.is_empty());
    let again = claim_batch(&queue, "w", 100, 1_021).await;
    assert_eq!(again.len(), 1);
    assert_eq!(
        (again[0].task_id.as_str(), again[0].attempt),
        (task.task_id.as_str(), 2)
    );
}

async fn batch_completion_refuses_only_the_lost_lease(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let cluster_id = cluster(&queue, DEFAULT_TENANT_ID, "c1").await;
    // Task 4 waits on 0 and 1 (both in the batch); task 5 on 0 and 2 (2's lease is lost).
    let plan = dag(&[
        (1000, Action::Create, &[]),
        (1001, Action::Create, &[]),
        (1002, Action::Create, &[]),
        (1003, Action::Create, &[]),
        (1004, Action::Install, &[0, 1]),
        (1005, Action::Install, &[0, 2]),
    ]);
    let job_id = submit(&queue, &cluster_id, &plan, &SubmitOptions::default()).await;
    let claimed = claim_batch(&queue, "w1", 10, 0).await;
    assert_eq!(claimed.len(), 4);
    let by_number = |n: u32| claimed.iter().find(|t| t.number == TaskId(n)).unwrap();

    // Task 2's worker goes quiet: its lease expires and w2 takes the task over.
    for n in [0, 1, 3] {
        queue
            .heartbeat(&by_number(n).lease(), LEASE_MS, 5_000)
            .await
            .unwrap();
    }
    let expired = queue.requeue_expired(LEASE_MS + 1).await.unwrap();
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].task_id, by_number(2).task_id);
    let taken_over = claim_batch(&queue, "w2", 10, 2 * LEASE_MS).await;
    assert_eq!(taken_over.len(), 1);
    assert_eq!(taken_over[0].attempt, 2);

    let finished = vec![
        (by_number(0).lease(), Outcome::succeeded()),
        (by_number(2).lease(), Outcome::succeeded()),
        (by_number(1).lease(), Outcome::succeeded()),
        (by_number(3).lease(), Outcome::failed("exit 3")),
        (by_number(0).lease(), Outcome::succeeded()),
    ];
    let answers = queue
        .complete_batch(&finished, 2 * LEASE_MS + 1)
        .await
        .unwrap();
    assert_eq!(answers.len(), 5);
    let completed = |index: usize| match &answers[index] {
        Ok(completion) => *completion,
        Err(error) => panic!("entry {index} refused: {error}"),
    };
    assert_eq!(
        completed(0),
        Completion {
            task_state: TaskState::Succeeded,
            job_state: JobState::Running
        }
    );
    assert!(
        matches!(&answers[1], Err(QueueError::LeaseLost { attempt: 1, worker_id, .. }) if worker_id == "w1"),
        "{:?}",
        answers[1]
    );
    assert_eq!(completed(2).task_state, TaskState::Succeeded);
    // An idempotent failure with attempts left goes back to the queue.
    assert_eq!(completed(3).task_state, TaskState::Ready);
    assert!(
        matches!(answers[4], Err(QueueError::LeaseLost { .. })),
        "a task reported twice in one batch is recorded once"
    );

    let job = queue.job(&job_id).await.unwrap();
    assert_eq!(job.tasks_succeeded, 2);
    assert_eq!(job.state, JobState::Running);
    let tasks = queue.job_tasks(&job_id).await.unwrap();
    assert_eq!(tasks[0].state, TaskState::Succeeded);
    assert_eq!(tasks[1].state, TaskState::Succeeded);
    assert_eq!(
        (
            tasks[2].state,
            tasks[2].attempts,
            tasks[2].lease_owner.as_deref()
        ),
        (TaskState::Running, 2, Some("w2")),
        "the lost lease did not touch the task's new attempt"
    );
    assert_eq!(tasks[3].state, TaskState::Ready);
    assert_eq!(tasks[4].state, TaskState::Ready, "both prerequisites done");
    assert_eq!(tasks[5].state, TaskState::Pending, "task 2 is not done");
    let attempts = queue.task_attempts(&tasks[0].id).await.unwrap();
    assert_eq!(attempts.len(), 1);
    assert_eq!(
        (attempts[0].outcome.as_str(), attempts[0].worker_id.as_str()),
        ("succeeded", "w1")
    );
    assert_eq!(
        queue.task_attempts(&tasks[2].id).await.unwrap().len(),
        1,
        "only the expiry was recorded for task 2"
    );

    // w2 finishes task 2: task 5 becomes ready; the rest drains in batches.
    succeed_all(&queue, &taken_over, 2 * LEASE_MS + 2).await;
    assert_eq!(task_state(&queue, &job_id, 5).await, TaskState::Ready);
    let mut now = 3 * LEASE_MS;
    let mut last = None;
    loop {
        let batch = claim_batch(&queue, "w1", 10, now).await;
        if batch.is_empty() {
            break;
        }
        last = succeed_all(&queue, &batch, now + 1).await.pop();
        now += 10;
    }
    assert_eq!(last.unwrap().job_state, JobState::Succeeded);
    let job = queue.job(&job_id).await.unwrap();
    assert_eq!((job.state, job.tasks_succeeded), (JobState::Succeeded, 6));
}

async fn batch_completion_moves_jobs_and_their_clusters(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let effects = |succeeded: ClusterState| ClusterEffects {
        running: ClusterState::Creating,
        succeeded,
        failed: ClusterState::Failed,
        from_layout_json: None,
        to_layout_json: Some(r#"{"nodes":2}"#.into()),
        requested_by: None,
        forced: false,
        catalog_json: None,
        stop_catalog_json: None,
    };
    let with_effects = |succeeded: ClusterState| SubmitOptions {
        effects: Some(effects(succeeded)),
        ..SubmitOptions::default()
    };
    let two = dag(&[(1000, Action::Create, &[]), (1001, Action::Create, &[])]);
    let (a, b, c) = (
        cluster(&queue, DEFAULT_TENANT_ID, "a").await,
        cluster(&queue, DEFAULT_TENANT_ID, "b").await,
        cluster(&queue, DEFAULT_TENANT_ID, "c").await,
    );
    let finishing = submit(&queue, &a, &two, &with_effects(ClusterState::Active)).await;
    let cancelling = submit(&queue, &b, &two, &with_effects(ClusterState::Active)).await;
    let stopping = submit(&queue, &c, &two, &with_effects(ClusterState::Active)).await;
    assert_eq!(
        queue.store().cluster(&a).await.unwrap().state,
        ClusterState::Creating
    );
    let claimed = claim_batch(&queue, "w", 100, 1).await;
    assert_eq!(claimed.len(), 6);
    for job in [&cancelling, &stopping] {
        assert_eq!(
            queue.cancel_job(job, 2).await.unwrap(),
            JobState::Cancelling
        );
    }
    // One batch: job a's last two tasks, job b's two tasks finishing anyway, and job
    // c's tasks stopped by the cancel.
    let finished: Vec<_> = claimed
        .iter()
        .map(|task| {
            let outcome = if task.job_id == stopping {
                Outcome::stopped()
            } else {
                Outcome::succeeded()
            };
            (task.lease(), outcome)
        })
        .collect();
    let answers = queue.complete_batch(&finished, 3).await.unwrap();
    for (task, answer) in claimed.iter().zip(&answers) {
        let completion = answer.as_ref().unwrap();
        let expected = if task.job_id == finishing {
            (TaskState::Succeeded, JobState::Succeeded)
        } else if task.job_id == cancelling {
            (TaskState::Succeeded, JobState::Cancelled)
        } else {
            (TaskState::Cancelled, JobState::Cancelled)
        };
        assert_eq!((completion.task_state, completion.job_state), expected);
    }
    let job = queue.job(&finishing).await.unwrap();
    assert_eq!((job.state, job.tasks_succeeded), (JobState::Succeeded, 2));
    let finished_cluster = queue.store().cluster(&a).await.unwrap();
    assert_eq!(finished_cluster.state, ClusterState::Active);
    assert_eq!(finished_cluster.layout_json, r#"{"nodes":2}"#);
    for (job, cluster_id) in [(&cancelling, &b), (&stopping, &c)] {
        assert_eq!(queue.job(job).await.unwrap().state, JobState::Cancelled);
        assert_eq!(
            queue.store().cluster(cluster_id).await.unwrap().state,
            ClusterState::Failed
        );
    }
    // Unknown jobs are refused entry by entry.
    let mut stray = claimed[0].lease();
    stray.job_id = "no-such-job".into();
    let answers = queue
        .complete_batch(&[(stray, Outcome::succeeded())], 4)
        .await
        .unwrap();
    assert!(matches!(answers[0], Err(QueueError::NotFound(_))));
    assert!(queue.complete_batch(&[], 4).await.unwrap().is_empty());
}

async fn two_batch_claimers_drain_in_dependency_order(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let cluster_id = cluster(&queue, DEFAULT_TENANT_ID, "c1").await;
    let other_cluster = cluster(&queue, DEFAULT_TENANT_ID, "c2").await;
    let plan = layered_dag(6, 8);
    let jobs = [
        submit(&queue, &cluster_id, &plan, &SubmitOptions::default()).await,
        submit(&queue, &other_cluster, &plan, &SubmitOptions::default()).await,
    ];
    let clock = Arc::new(AtomicI64::new(1));
    let claimed = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut workers = Vec::new();
    for worker in ["w1", "w2"] {
        let (queue, clock, claimed, jobs) =
            (queue.clone(), clock.clone(), claimed.clone(), jobs.clone());
        workers.push(tokio::spawn(async move {
            loop {
                let now = clock.fetch_add(1, Ordering::SeqCst);
                let batch = claim_batch(&queue, worker, 5, now).await;
                if batch.is_empty() {
                    let mut done = true;
                    for job in &jobs {
                        done &= queue.job(job).await.unwrap().state == JobState::Succeeded;
                    }
                    if done {
                        break;
                    }
                    tokio::task::yield_now().await;
                    continue;
                }
                // Checked after the claim committed: prerequisites stay succeeded once
                // they are, so any other state means the claim came too early.
                assert_claim_rules(&queue, &batch).await;
                claimed
                    .lock()
                    .unwrap()
                    .extend(batch.iter().map(|t| (t.job_id.clone(), t.number)));
                tokio::task::yield_now().await;
                let now = clock.fetch_add(1, Ordering::SeqCst);
                succeed_all(&queue, &batch, now).await;
            }
        }));
    }
    for worker in workers {
        worker.await.unwrap();
    }
    let claimed = claimed.lock().unwrap().clone();
    let unique: BTreeSet<(JobId, TaskId)> = claimed.iter().cloned().collect();
    assert_eq!(
        claimed.len(),
        2 * plan.len(),
        "every task claimed exactly once"
    );
    assert_eq!(unique.len(), 2 * plan.len());
    for job in &jobs {
        let job = queue.job(job).await.unwrap();
        assert_eq!((job.state, job.tasks_succeeded), (JobState::Succeeded, 48));
    }
}

async fn batched_events_keep_their_order(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let cluster_id = cluster(&queue, DEFAULT_TENANT_ID, "c1").await;
    let plan = layered_dag(1, 1);
    let jobs = [
        submit(&queue, &cluster_id, &plan, &SubmitOptions::default()).await,
        submit(&queue, &cluster_id, &plan, &SubmitOptions::default()).await,
    ];
    const BATCHES: usize = 20;
    // Two writers append batches spanning both jobs (in opposite job order) at once.
    let mut writers = Vec::new();
    for writer in 0..2_usize {
        let (queue, jobs) = (queue.clone(), jobs.clone());
        writers.push(tokio::spawn(async move {
            for batch in 0..BATCHES {
                let events: Vec<NewEvent> = (0..4_usize)
                    .map(|n| NewEvent {
                        job_id: jobs[(n + writer) % 2].clone(),
                        task_id: None,
                        attempt: None,
                        kind: EventKind::State,
                        stream: None,
                        data: format!("{writer}:{}", batch * 4 + n),
                    })
                    .collect();
                queue.append_events(&events, 0).await.unwrap();
            }
        }));
    }
    for writer in writers {
        writer.await.unwrap();
    }
    queue.append_events(&[], 0).await.unwrap();
    for job in &jobs {
        let events = queue.events_after(job, 0, 1_000).await.unwrap();
        assert_eq!(events.len(), 2 * BATCHES * 2);
        assert!(events.windows(2).all(|w| w[0].id < w[1].id));
        for writer in 0..2 {
            let mine: Vec<usize> = events
                .iter()
                .filter_map(|e| e.data.strip_prefix(&format!("{writer}:")))
                .map(|n| n.parse().unwrap())
                .collect();
            assert_eq!(mine.len(), 2 * BATCHES);
            assert!(mine.windows(2).all(|w| w[0] < w[1]), "{mine:?}");
        }
    }
}

fn deferred() -> Outcome {
    Outcome {
        kind: OutcomeKind::Deferred,
        error: Some("node 2 has no address yet".to_owned()),
        ..Outcome::stopped()
    }
}

async fn a_deferred_task_waits_without_using_an_attempt(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let cluster_id = cluster(&queue, DEFAULT_TENANT_ID, "c1").await;
    let job_id = submit(
        &queue,
        &cluster_id,
        &layered_dag(1, 1),
        &SubmitOptions::default(),
    )
    .await;
    let first = claim(&queue, "w1", 1).await.unwrap();
    let done = queue
        .complete(&first.lease(), &deferred(), 2)
        .await
        .unwrap();
    assert_eq!(done.task_state, TaskState::Ready);
    assert_eq!(done.job_state, JobState::Running);
    assert!(
        claim(&queue, "w1", 2 + DEFER_MS - 1).await.is_none(),
        "claimed again before the deferral ran out"
    );
    let again = claim(&queue, "w1", 2 + DEFER_MS).await.unwrap();
    assert_eq!(again.number, first.number);
    assert_eq!(again.attempt, first.attempt, "the deferral used no attempt");
    assert!(
        queue
            .task_attempts(&again.task_id)
            .await
            .unwrap()
            .is_empty(),
        "a deferral is not an attempt"
    );

    // Deferred while the job is being cancelled: the task ends cancelled, and so does the job.
    queue.cancel_job(&job_id, 3 + DEFER_MS).await.unwrap();
    let done = queue
        .complete(&again.lease(), &deferred(), 4 + DEFER_MS)
        .await
        .unwrap();
    assert_eq!(done.task_state, TaskState::Cancelled);
    assert_eq!(done.job_state, JobState::Cancelled);
}

/// One sweep takes back a dead worker's leases across jobs in one pass: idempotent
/// tasks go back to the queue, a non-idempotent one fails its job, and a lease a
/// heartbeat renewed is left alone.
async fn one_sweep_settles_every_expired_lease(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let retried = SubmitOptions {
        max_attempts: 3,
        backoff_ms: 0,
        ..SubmitOptions::default()
    };
    let once = SubmitOptions {
        non_idempotent: BTreeSet::from([Action::Create]),
        ..retried.clone()
    };
    let first_cluster = cluster(&queue, DEFAULT_TENANT_ID, "c1").await;
    let second_cluster = cluster(&queue, DEFAULT_TENANT_ID, "c2").await;
    let nodes: Vec<(u32, Action, &[u32])> = (0..4)
        .map(|node| (1000 + node, Action::Create, &[][..]))
        .collect();
    let idempotent_job = submit(&queue, &first_cluster, &dag(&nodes), &retried).await;
    let failing_job = submit(&queue, &second_cluster, &dag(&nodes[..2]), &once).await;

    let held = claim_batch(&queue, "dead", 6, 0).await;
    assert_eq!(held.len(), 6);
    let renewed = held
        .iter()
        .find(|task| task.job_id == idempotent_job)
        .unwrap();
    queue
        .heartbeat(&renewed.lease(), LEASE_MS, LEASE_MS)
        .await
        .unwrap();

    let mut expired = queue.requeue_expired(LEASE_MS + 1).await.unwrap();
    expired.sort_by(|a, b| a.task_id.cmp(&b.task_id));
    assert_eq!(expired.len(), 5, "every expired lease but the renewed one");
    assert!(expired.iter().all(|gone| gone.worker_id == "dead"));
    assert!(expired.iter().all(|gone| gone.task_id != renewed.task_id));
    let states: Vec<(JobId, TaskState)> = held
        .iter()
        .filter(|task| task.task_id != renewed.task_id)
        .map(|task| {
            let gone = expired
                .iter()
                .find(|gone| gone.task_id == task.task_id)
                .unwrap();
            (task.job_id.clone(), gone.task_state)
        })
        .collect();
    for (job_id, state) in &states {
        let expected = if *job_id == idempotent_job {
            TaskState::Ready
        } else {
            TaskState::Failed
        };
        assert_eq!(*state, expected, "task of job {job_id}");
    }
    assert_eq!(
        queue.job(&failing_job).await.unwrap().state,
        JobState::Failed
    );
    assert_eq!(
        queue.job(&idempotent_job).await.unwrap().state,
        JobState::Running
    );
    // Each expiry is on the attempt log once; a second sweep finds nothing.
    for gone in &expired {
        assert_eq!(queue.task_attempts(&gone.task_id).await.unwrap().len(), 1);
    }
    assert!(queue
        .requeue_expired(LEASE_MS + 2)
        .await
        .unwrap()
        .is_empty());
}

/// A tenant served by dedicated workers only: shared claims pass its tasks over, a
/// pool scoped to it takes only its tasks, and a pool scoped to another tenant takes
/// none of them.
async fn dedicated_tenants_are_served_by_their_own_workers(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let new_tenant = |name: &str| NewTenant {
        name: name.into(),
        max_clusters: None,
        max_nodes: None,
        provider_types: NewTenant::all_provider_types(),
    };
    let secret = queue
        .store()
        .create_tenant(&new_tenant("secret"))
        .await
        .unwrap();
    let other = queue
        .store()
        .create_tenant(&new_tenant("other"))
        .await
        .unwrap();
    queue
        .store()
        .set_tenant_switch(&secret.id, TenantSwitch::DedicatedWorkers, true)
        .await
        .unwrap();
    let two_nodes = dag(&[(1000, Action::Create, &[]), (1001, Action::Create, &[])]);
    let options = SubmitOptions::default();
    for (tenant, name) in [(DEFAULT_TENANT_ID, "shared"), (&secret.id, "kept")] {
        let cluster = cluster(&queue, tenant, name).await;
        queue
            .submit_job(tenant, &cluster, Operation::Create, &two_nodes, &options, 0)
            .await
            .unwrap();
    }
    let claim_in = |worker: &'static str, scope: WorkerScope| {
        let queue = queue.clone();
        async move {
            queue
                .claim_up_to_in(worker, LEASE_MS, ClaimLimits::default(), &scope, || 10, 1)
                .await
                .unwrap()
        }
    };
    let elsewhere = claim_in("other-only", WorkerScope::Tenants(vec![other.id.clone()])).await;
    assert!(elsewhere.is_empty(), "{elsewhere:?}");
    let shared = claim_in("shared", WorkerScope::Shared).await;
    assert_eq!(shared.len(), 2);
    assert!(shared
        .iter()
        .all(|task| task.tenant_id == DEFAULT_TENANT_ID));
    assert!(
        claim(&queue, "single", 1).await.is_none(),
        "one at a time too"
    );
    let dedicated = claim_in("dedicated", WorkerScope::Tenants(vec![secret.id.clone()])).await;
    assert_eq!(dedicated.len(), 2);
    assert!(dedicated.iter().all(|task| task.tenant_id == secret.id));

    // Marked shared again, its next tasks go to any worker.
    queue
        .store()
        .set_tenant_switch(&secret.id, TenantSwitch::DedicatedWorkers, false)
        .await
        .unwrap();
    let more = cluster(&queue, &secret.id, "more").await;
    queue
        .submit_job(
            &secret.id,
            &more,
            Operation::Create,
            &two_nodes,
            &options,
            1,
        )
        .await
        .unwrap();
    assert_eq!(claim_in("shared", WorkerScope::Shared).await.len(), 2);
}

/// A stopping worker's leases go back at once: its idempotent tasks are ready again
/// (a new attempt), another worker's leases are untouched.
async fn a_stopping_worker_hands_its_leases_back(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let cluster_id = cluster(&queue, DEFAULT_TENANT_ID, "handback").await;
    let three = dag(&[
        (1000, Action::Create, &[]),
        (1001, Action::Create, &[]),
        (1002, Action::Create, &[]),
    ]);
    let job = submit(&queue, &cluster_id, &three, &SubmitOptions::default()).await;
    let first = claim(&queue, "stopping", 1).await.unwrap();
    let second = claim(&queue, "stopping", 1).await.unwrap();
    let kept = claim(&queue, "staying", 1).await.unwrap();
    let released = queue.release_leases("stopping", 2).await.unwrap();
    let mut ids: Vec<&str> = released.iter().map(|task| task.task_id.as_str()).collect();
    ids.sort_unstable();
    let mut expected = vec![first.task_id.as_str(), second.task_id.as_str()];
    expected.sort_unstable();
    assert_eq!(ids, expected);
    assert!(released
        .iter()
        .all(|task| task.task_state == TaskState::Ready));
    let attempts = queue.task_attempts(&first.task_id).await.unwrap();
    assert!(
        attempts[0]
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("handed the task back"),
        "{attempts:?}"
    );
    // Well before any lease could expire, another worker takes them.
    let retaken = claim(&queue, "other", 3).await.unwrap();
    assert_eq!(retaken.attempt, 2);
    assert!(queue.heartbeat(&kept.lease(), LEASE_MS, 3).await.is_ok());
    assert!(queue
        .release_leases("stopping", 4)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(queue.job(&job).await.unwrap().state, JobState::Running);
}

/// Followers of a job are woken by its events, whichever process wrote them: the
/// process's queue in-process, through any of its clones (the stream endpoint and the
/// workers each hold one), another process's through PostgreSQL's NOTIFY (two queues on
/// two stores stand for two processes: each has its own pool and its own wakes). A
/// follower of another job is not woken.
async fn followers_are_woken_by_their_jobs_events(backend: Backend) {
    use std::time::Duration;
    let (db, queue) = open(backend).await;
    let cluster_id = cluster(&queue, DEFAULT_TENANT_ID, "woken").await;
    let job = submit(
        &queue,
        &cluster_id,
        &dag(&[(1000, Action::Create, &[])]),
        &SubmitOptions::default(),
    )
    .await;
    let event = NewEvent {
        job_id: job.clone(),
        task_id: None,
        attempt: Some(1),
        kind: EventKind::Output,
        stream: Some(OutputStream::Stdout),
        data: "hello".to_owned(),
    };
    let within = Duration::from_secs(10);

    let mut follower = queue.subscribe();
    let mut bystander = queue.wakes().subscribe();
    let writer = queue.clone();
    writer
        .append_events(std::slice::from_ref(&event), 1)
        .await
        .unwrap();
    tokio::time::timeout(within, follower.changed(job.as_str()))
        .await
        .expect("woken by this process's write");
    let other_job =
        tokio::time::timeout(Duration::from_millis(300), bystander.changed("other")).await;
    assert!(other_job.is_err(), "a follower of another job was woken");
    // And the other way round: a follower on a clone hears the original's writes.
    let mut on_clone = writer.subscribe();
    queue.append_event(&event, 1).await.unwrap();
    tokio::time::timeout(within, on_clone.changed(job.as_str()))
        .await
        .expect("woken through a clone of the process's queue");

    if backend == Backend::Postgres {
        let elsewhere = Queue::new(Store::open(&db.url).await.unwrap());
        let mut remote = elsewhere.subscribe();
        let forwarding = tokio::spawn(elsewhere.clone().forward_notifications(db.url.clone()));
        // The listener wakes everyone once it is connected (what came before is lost).
        tokio::time::timeout(within, remote.changed("any job"))
            .await
            .expect("the listener connects");
        queue.append_event(&event, 2).await.unwrap();
        tokio::time::timeout(within, remote.changed(job.as_str()))
            .await
            .expect("woken by another process's write");
        forwarding.abort();
    }
}

/// What the job page reads of a large job: one page of its tasks filtered by state,
/// node and step with how many match, its tasks counted by step and state, and pages
/// of its output from the newest back.
async fn a_jobs_tasks_are_listed_filtered_counted_and_its_output_paged(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let cluster_id = cluster(&queue, DEFAULT_TENANT_ID, "c1").await;
    let job_id = submit(
        &queue,
        &cluster_id,
        &layered_dag(3, 3),
        &SubmitOptions::default(),
    )
    .await;
    let all = queue.job_tasks(&job_id).await.unwrap();
    assert_eq!(all.len(), 9);
    let states: BTreeSet<TaskState> = all.iter().map(|task| task.state).collect();
    assert!(states.len() > 1, "some ready, some pending: {states:?}");
    for state in [
        None,
        Some(TaskState::Ready),
        Some(TaskState::Pending),
        Some(TaskState::Failed),
    ] {
        for node in [None, Some(2)] {
            let filter = TaskFilter {
                state,
                node,
                ..TaskFilter::default()
            };
            let (listed, total) = queue
                .job_tasks_filtered(&job_id, &filter, 0, 100)
                .await
                .unwrap();
            let expected: Vec<_> = all
                .iter()
                .filter(|task| state.is_none_or(|state| task.state == state))
                .filter(|task| node.is_none_or(|node| task.node == node))
                .cloned()
                .collect();
            assert_eq!(listed, expected, "{filter:?}");
            assert_eq!(total, expected.len() as u64);
        }
    }
    let creates = TaskFilter {
        action: Some(TaskAction::Create),
        ..TaskFilter::default()
    };
    let (page, total) = queue
        .job_tasks_filtered(&job_id, &creates, 1, 1)
        .await
        .unwrap();
    let every_create: Vec<_> = all
        .iter()
        .filter(|task| task.action == Action::Create)
        .cloned()
        .collect();
    assert_eq!((page, total), (every_create[1..2].to_vec(), 3));
    let a_service = TaskFilter {
        service: Some("web".to_owned()),
        ..TaskFilter::default()
    };
    let (none, total) = queue
        .job_tasks_filtered(&job_id, &a_service, 0, 10)
        .await
        .unwrap();
    assert!(
        none.is_empty() && total == 0,
        "no task of this DAG has a service"
    );

    let counts = queue.job_step_counts(&job_id).await.unwrap();
    assert_eq!(counts.iter().map(|count| count.tasks).sum::<i64>(), 9);
    for count in &counts {
        let of_step: Vec<_> = all
            .iter()
            .filter(|task| {
                queue::views::task_action(task.action) == count.action && task.state == count.state
            })
            .collect();
        assert_eq!(count.tasks, of_step.len() as i64, "{count:?}");
        assert_eq!(
            count.first_number,
            i64::from(of_step.iter().map(|task| task.number.0).min().unwrap())
        );
        assert_eq!(count.service, None);
    }

    assert_eq!(queue.last_event_id(&job_id).await.unwrap(), 0);
    let line = |n: usize, task: Option<&TaskRecordId>| NewEvent {
        job_id: job_id.clone(),
        task_id: task.cloned(),
        attempt: Some(1),
        kind: EventKind::Output,
        stream: Some(OutputStream::Stdout),
        data: format!("line {n}"),
    };
    let first_task = all[0].id.clone();
    let mut events: Vec<NewEvent> = (1..=6)
        .map(|n| line(n, (n % 2 == 0).then_some(&first_task)))
        .collect();
    events.push(NewEvent {
        kind: EventKind::State,
        stream: None,
        data: "running (attempt 1)".to_owned(),
        ..line(0, Some(&first_task))
    });
    queue.append_events(&events, 0).await.unwrap();
    let data = |events: Vec<queue::Event>| -> Vec<String> {
        events.into_iter().map(|event| event.data).collect()
    };
    let newest = queue.last_output(&job_id, None, 4).await.unwrap();
    let last_id = queue.last_event_id(&job_id).await.unwrap();
    assert!(
        last_id > newest.last().unwrap().id,
        "the state event is the newest"
    );
    let before = newest[0].id;
    assert_eq!(data(newest), ["line 3", "line 4", "line 5", "line 6"]);
    let older = queue.last_output(&job_id, Some(before), 4).await.unwrap();
    assert_eq!(data(older), ["line 1", "line 2"]);
    let of_task = queue
        .task_last_output(&job_id, &first_task, 2)
        .await
        .unwrap();
    assert_eq!(data(of_task), ["line 4", "line 6"]);
}

/// Every node's second step waits on the first step of all ten nodes: the queue keeps
/// that shared set as one group (20 dependency rows instead of 100) and releases the
/// ten waiters only with the set's last member, after a failure and a retry of it too,
/// on the batched and the single completion paths.
async fn a_shared_prerequisite_set_releases_its_waiters_with_its_last_member(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let cluster_id = cluster(&queue, DEFAULT_TENANT_ID, "c1").await;
    let all_firsts: Vec<u32> = (0..10).collect();
    let mut tasks: Vec<(u32, Action, &[u32])> =
        (0..10).map(|n| (n, Action::Create, &[][..])).collect();
    tasks.extend((0..10).map(|n| (n, Action::Confirm, all_firsts.as_slice())));
    let plan = dag(&tasks);
    let options = SubmitOptions {
        max_attempts: 1,
        ..SubmitOptions::default()
    };
    let job_id = submit(&queue, &cluster_id, &plan, &options).await;
    let count = |table: &'static str| {
        let queue = queue.clone();
        let job_id = job_id.clone();
        async move {
            sqlx::query_scalar::<_, i64>(&format!("SELECT COUNT(*) FROM {table} WHERE job_id = $1"))
                .bind(job_id)
                .fetch_one(queue.store().pool())
                .await
                .unwrap()
        }
    };
    assert_eq!(
        (count("task_deps").await, count("task_groups").await),
        (20, 1)
    );

    let firsts = claim_batch(&queue, "w1", 20, 1).await;
    assert_eq!(firsts.len(), 10, "only the first steps are ready");
    succeed_all(&queue, &firsts[..9], 2).await;
    assert!(
        claim(&queue, "w1", 3).await.is_none(),
        "one member is still running"
    );
    let failed = queue
        .complete(&firsts[9].lease(), &Outcome::failed("boom"), 4)
        .await
        .unwrap();
    assert_eq!(failed.job_state, JobState::Failed);
    for second in 10..20 {
        assert_eq!(
            task_state(&queue, &job_id, second).await,
            TaskState::Pending
        );
    }

    queue.retry_job(&job_id, 5).await.unwrap();
    let last = claim(&queue, "w2", 6).await.unwrap();
    assert_eq!(last.number, TaskId(9));
    queue
        .complete(&last.lease(), &Outcome::succeeded(), 7)
        .await
        .unwrap();
    let seconds = claim_batch(&queue, "w2", 20, 8).await;
    let mut numbers: Vec<u32> = seconds.iter().map(|task| task.number.0).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (10..20).collect::<Vec<_>>());
    let done = succeed_all(&queue, &seconds, 9).await;
    assert!(done
        .iter()
        .all(|completion| completion.job_state == JobState::Succeeded));
    assert_eq!(queue.job(&job_id).await.unwrap().tasks_succeeded, 20);
}

/// `nodes` independent create tasks, one a node.
fn independent_nodes(nodes: u32) -> TaskDag {
    let tasks: Vec<(u32, Action, &[u32])> = (0..nodes)
        .map(|node| (1000 + node, Action::Create, &[][..]))
        .collect();
    dag(&tasks)
}

/// A big job's 40 ready tasks first, then a 3-node job of the same tenant and one of
/// another tenant: the next nine claims (one at a time, or one batch) share the slots
/// between the tenants, then between the jobs of each (fewest running first), instead
/// of handing out the big job's older tasks until they run out.
async fn a_small_job_is_not_starved_by_a_big_one(backend: Backend) {
    for batched in [false, true] {
        let (_db, queue) = open(backend).await;
        let acme = queue
            .store()
            .create_tenant(&NewTenant {
                name: "acme".into(),
                max_clusters: None,
                max_nodes: None,
                provider_types: NewTenant::all_provider_types(),
            })
            .await
            .unwrap();
        let options = SubmitOptions::default();
        let mut jobs = Vec::new();
        for (at, tenant, name, nodes) in [
            (0, DEFAULT_TENANT_ID, "big", 40),
            (1, DEFAULT_TENANT_ID, "colleague", 3),
            (2, acme.id.as_str(), "other-tenant", 3),
        ] {
            let cluster_id = cluster(&queue, tenant, name).await;
            let plan = independent_nodes(nodes);
            jobs.push(
                queue
                    .submit_job(tenant, &cluster_id, Operation::Create, &plan, &options, at)
                    .await
                    .unwrap(),
            );
        }
        let claimed = if batched {
            claim_batch(&queue, "w", 9, 10).await
        } else {
            let mut claimed = Vec::new();
            for _ in 0..9 {
                claimed.push(claim(&queue, "w", 10).await.unwrap());
            }
            claimed
        };
        assert_claim_rules(&queue, &claimed).await;
        let of_job = |job: &JobId| -> Vec<u32> {
            claimed
                .iter()
                .filter(|task| task.job_id == *job)
                .map(|task| task.number.0)
                .collect()
        };
        assert_eq!(
            of_job(&jobs[1]),
            [0, 1, 2],
            "same tenant (batched: {batched})"
        );
        assert_eq!(
            of_job(&jobs[2]),
            [0, 1, 2],
            "other tenant (batched: {batched})"
        );
        assert_eq!(of_job(&jobs[0]), [0, 1, 2], "big job (batched: {batched})");
        // Slots alternate: tenants first (fewest running, ties to the older job), then
        // the jobs of the default tenant.
        let order: Vec<usize> = claimed
            .iter()
            .map(|task| jobs.iter().position(|job| *job == task.job_id).unwrap())
            .collect();
        assert_eq!(order, [0, 2, 1, 2, 0, 2, 1, 0, 1], "batched: {batched}");
        for job in &jobs {
            assert_eq!(queue.job(job).await.unwrap().state, JobState::Running);
        }
    }
}

/// A small job's share of a batch is more than its ready tasks: the batch still takes
/// every ready task, the big job's filling what the small one leaves (the claim reads
/// the big job again, past its first window).
async fn a_batch_fills_up_when_a_small_job_has_less_than_its_share(backend: Backend) {
    let (_db, queue) = open(backend).await;
    let options = SubmitOptions::default();
    let big_cluster = cluster(&queue, DEFAULT_TENANT_ID, "big").await;
    let big = queue
        .submit_job(
            DEFAULT_TENANT_ID,
            &big_cluster,
            Operation::Create,
            &independent_nodes(40),
            &options,
            0,
        )
        .await
        .unwrap();
    assert_eq!(claim_batch(&queue, "w", 4, 1).await.len(), 4);
    let small_cluster = cluster(&queue, DEFAULT_TENANT_ID, "small").await;
    let small = queue
        .submit_job(
            DEFAULT_TENANT_ID,
            &small_cluster,
            Operation::Create,
            &independent_nodes(2),
            &options,
            2,
        )
        .await
        .unwrap();
    let batch = claim_batch(&queue, "w", 40, 3).await;
    assert_claim_rules(&queue, &batch).await;
    let of = |job: &JobId| batch.iter().filter(|task| task.job_id == *job).count();
    assert_eq!((of(&small), of(&big)), (2, 36), "every ready task");
}

store::on_both_backends!(
    a_batch_fills_up_when_a_small_job_has_less_than_its_share,
    a_small_job_is_not_starved_by_a_big_one,
    a_shared_prerequisite_set_releases_its_waiters_with_its_last_member,
    a_jobs_tasks_are_listed_filtered_counted_and_its_output_paged,
    followers_are_woken_by_their_jobs_events,
    dedicated_tenants_are_served_by_their_own_workers,
    a_stopping_worker_hands_its_leases_back,
    a_deferred_task_waits_without_using_an_attempt,
    one_sweep_settles_every_expired_lease,
    two_claimers_drain_in_dependency_order,
    expired_lease_requeues_and_old_worker_is_refused,
    failed_idempotent_task_is_retried_with_backoff,
    non_idempotent_task_is_not_retried,
    retry_after_failure_completes_the_job,
    cancel_twice_then_retry,
    events_resume_from_an_offset,
    tenant_and_global_limits_are_respected,
    large_dag_submits_in_one_transaction,
    batch_claim_respects_nodes_limits_and_prerequisites,
    a_claim_takes_the_room_it_is_given_when_its_turn_comes,
    batch_completion_refuses_only_the_lost_lease,
    batch_completion_moves_jobs_and_their_clusters,
    two_batch_claimers_drain_in_dependency_order,
    batched_events_keep_their_order,
);
