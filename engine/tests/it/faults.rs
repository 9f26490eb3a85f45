//! Fault tests: a node's sshd (and its sessions) killed in the middle of a step (the
//! step is retried per policy, then the job fails naming the node and the step; once
//! the node is restored, retry-from-failure completes the job), and every node process
//! gone while the server was down (the restarted pool brings the nodes back first), and a
//! node gone for good (only a forced delete gets rid of its cluster).

use std::time::{Duration, Instant};

use crate::lab::Lab;
use engine::execute::node_id;
use engine::operations::{ClusterChange, ClusterState};
use engine::provider::{LocalProvider, NodeProvider, NodeRecord};
use engine::queue::{self, JobId, JobState, TaskState};
use engine::store::Backend;

const JOB_LIMIT: Duration = Duration::from_secs(90);

async fn a_node_lost_mid_step_fails_then_resumes(backend: Backend) {
    let lab = Lab::start(backend).await;
    let (cluster, job) = lab.create("faulty", 2).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);

    let job = lab
        .change(
            &cluster.id,
            ClusterChange::AddServices {
                services: vec!["slow".into()],
            },
        )
        .await;
    // Wait for the slow step to be running on its node, then take that node down.
    let slow = wait_for_running_slow_step(&lab, &job).await;
    let node_dir = lab.nodes_dir.join(node_id(&cluster.id, slow.node));
    assert!(LocalProvider::kill_everything_under(&node_dir) > 0);

    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Failed);
    let failed = lab.queue.job(&job).await.unwrap();
    let error = failed.error.unwrap();
    let label = format!("{}-start-slow", slow.node);
    assert!(
        error.contains(&label),
        "the error names node and step: {error}"
    );
    let attempts = lab.queue.task_attempts(&slow.id).await.unwrap();
    assert_eq!(
        attempts.len(),
        3,
        "retried per policy (3 attempts): {attempts:?}"
    );
    let cluster_now = lab.store.cluster(&cluster.id).await.unwrap();
    assert_eq!(cluster_now.state, ClusterState::Failed);

    // Restore the node (its sshd comes back with the same host key), then resume.
    let row = lab
        .store
        .list_nodes(&cluster.id)
        .await
        .unwrap()
        .into_iter()
        .find(|node| node.number == i64::from(slow.node))
        .unwrap();
    let record: NodeRecord = serde_json::from_str(row.provider_json.as_deref().unwrap()).unwrap();
    LocalProvider::new(&lab.nodes_dir)
        .unwrap()
        .adopt(&record)
        .await
        .unwrap();
    assert_eq!(
        lab.queue
            .retry_job(&job, engine::store::now_ms())
            .await
            .unwrap(),
        JobState::Running
    );
    lab.wake();
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let tasks = lab.queue.job_tasks(&job).await.unwrap();
    assert!(tasks.iter().all(|task| task.state == TaskState::Succeeded));
    assert_eq!(
        lab.store.cluster(&cluster.id).await.unwrap().state,
        ClusterState::Active
    );
}

/// After a reboot (every node process gone, the server restarted), a restarted pool
/// re-adopts the nodes, restarting their sshd, before it runs anything on them: a job
/// submitted while no pool ran succeeds with one attempt per task.
async fn a_restarted_pool_adopts_its_nodes_before_running_their_tasks(backend: Backend) {
    let mut lab = Lab::start(backend).await;
    let (cluster, job) = lab.create("rebooted", 2).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);

    lab.stop_workers().await;
    assert!(LocalProvider::kill_everything_under(&lab.nodes_dir) > 0);
    let job = lab
        .change(&cluster.id, ClusterChange::Restart { services: None })
        .await;
    lab.restart_workers().await;
    lab.wake();
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    // Adoption stored each node's new sshd; every task started after the last of those.
    let adopted_ms = lab
        .store
        .list_nodes(&cluster.id)
        .await
        .unwrap()
        .iter()
        .map(|node| node.updated_at_ms)
        .max()
        .unwrap();
    for task in lab.queue.job_tasks(&job).await.unwrap() {
        let attempts = lab.queue.task_attempts(&task.id).await.unwrap();
        assert_eq!(attempts.len(), 1, "task {}: {attempts:?}", task.number.0);
        assert!(
            attempts[0].started_at_ms >= adopted_ms,
            "task {} started before its node was adopted",
            task.number.0
        );
    }
}

/// A node gone for good: the delete fails at its stop step (it cannot reach the node),
/// and a forced delete reports that step, passes over it, and deletes every node.
async fn a_forced_delete_passes_over_steps_that_cannot_run(backend: Backend) {
    let lab = Lab::start(backend).await;
    let (cluster, job) = lab.create("doomed", 2).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let lost = lab.nodes_dir.join(node_id(&cluster.id, 1000));
    assert!(LocalProvider::kill_everything_under(&lost) > 0);

    let job = lab
        .change(&cluster.id, ClusterChange::Delete { force: false })
        .await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Failed);
    assert_eq!(
        lab.store.cluster(&cluster.id).await.unwrap().state,
        ClusterState::Failed
    );
    assert!(
        !lab.live_processes().is_empty(),
        "the other node still runs"
    );

    let job = lab
        .change(&cluster.id, ClusterChange::Delete { force: true })
        .await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    assert!(lab.queue.job(&job).await.unwrap().forced);
    assert_eq!(
        lab.store.cluster(&cluster.id).await.unwrap().state,
        ClusterState::Deleted
    );
    assert_eq!(lab.live_processes(), Vec::<i32>::new());
    let passed_over = lab
        .queue
        .events_after(&job, 0, 10_000)
        .await
        .unwrap()
        .into_iter()
        .filter(|event| event.data.contains("passed over: this delete is forced"))
        .count();
    assert!(passed_over > 0, "the passed-over steps are reported");
    // And they end `skipped`: the lost node's stop did not happen, and says so.
    let tasks = lab.queue.job_tasks(&job).await.unwrap();
    let skipped: Vec<String> = tasks
        .iter()
        .filter(|task| task.state == TaskState::Skipped)
        .map(|task| format!("{}-{}", task.node, task.action))
        .collect();
    assert!(!skipped.is_empty(), "{tasks:#?}");
    assert!(
        tasks
            .iter()
            .filter(|task| task.state == TaskState::Skipped)
            .all(|task| task.node == 1000),
        "only the lost node's steps are passed over: {skipped:?}"
    );
    assert!(tasks
        .iter()
        .all(|task| matches!(task.state, TaskState::Succeeded | TaskState::Skipped)));
    let job_view = lab.queue.job(&job).await.unwrap();
    assert_eq!(job_view.state, JobState::Succeeded);
}

/// A lease that ends on a cluster whose service cannot be stopped (its node is gone):
/// the janitor's plain delete fails, so its next round forces the delete, and the
/// cluster's jobs show both; a failed forced delete is not tried again and again.
async fn an_expired_lease_forces_a_delete_that_failed(backend: Backend) {
    let lab = Lab::start(backend).await;
    let (cluster, job) = lab.create("expiring", 2).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let lost = lab.nodes_dir.join(node_id(&cluster.id, 1000));
    assert!(LocalProvider::kill_everything_under(&lost) > 0);
    lab.store
        .set_cluster_lease(&cluster.id, Some(engine::store::now_ms() - 1_000))
        .await
        .unwrap();

    // The lab's own janitor (every half second) does the rest.
    let plain = wait_for_delete(&lab, &cluster.id, false).await;
    assert_eq!(lab.wait(&plain, JOB_LIMIT).await, JobState::Failed);
    let forced = wait_for_delete(&lab, &cluster.id, true).await;
    assert_eq!(lab.wait(&forced, JOB_LIMIT).await, JobState::Succeeded);
    assert_eq!(
        lab.store.cluster(&cluster.id).await.unwrap().state,
        ClusterState::Deleted
    );
    assert_eq!(lab.live_processes(), Vec::<i32>::new());
    let jobs: Vec<(api_types::Operation, bool)> = lab
        .queue
        .cluster_jobs(&cluster.id)
        .await
        .unwrap()
        .into_iter()
        .map(|job| (job.operation, job.forced))
        .collect();
    assert_eq!(
        jobs,
        [
            (api_types::Operation::Delete, true),
            (api_types::Operation::Delete, false),
            (api_types::Operation::Create, false)
        ]
    );
    let later = engine::store::now_ms();
    assert_eq!(
        engine::operations::lease::sweep(&lab.queue, later)
            .await
            .unwrap(),
        engine::operations::lease::LeaseSweep::default(),
        "nothing left to do"
    );
}

/// The cluster's newest job once it is a delete, forced or not as asked.
async fn wait_for_delete(lab: &Lab, cluster_id: &str, forced: bool) -> JobId {
    let started = Instant::now();
    loop {
        if let Some((id, _, layouts)) = lab.queue.newest_job(cluster_id).await.unwrap() {
            let job = lab.queue.job(&id).await.unwrap();
            if job.operation == api_types::Operation::Delete && layouts.forced == forced {
                return id;
            }
        }
        assert!(
            started.elapsed() < JOB_LIMIT,
            "no delete (forced: {forced}) was submitted"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn wait_for_running_slow_step(lab: &Lab, job: &JobId) -> queue::TaskRecord {
    let started = Instant::now();
    loop {
        let tasks = lab.queue.job_tasks(job).await.unwrap();
        if let Some(task) = tasks.into_iter().find(|task| {
            task.service.as_ref().is_some_and(|s| s.as_str() == "slow")
                && task.action == domain::plan::Action::Start
                && task.state == TaskState::Running
        }) {
            // Let the step get going on the node before pulling the plug.
            tokio::time::sleep(Duration::from_millis(500)).await;
            return task;
        }
        assert!(started.elapsed() < JOB_LIMIT, "the slow step never ran");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

engine::on_both_backends!(
    a_node_lost_mid_step_fails_then_resumes,
    a_restarted_pool_adopts_its_nodes_before_running_their_tasks,
    a_forced_delete_passes_over_steps_that_cannot_run,
    an_expired_lease_forces_a_delete_that_failed,
);
