//! Issue 45, point 3: a connection cut or a node that stops answering in the middle of a
//! step, on local nodes (real sshd processes).
//!
//! - The node-side SSH session of a running step is killed (the sshd processes serving
//!   that one connection; the node's sshd listener lives on): the step's outcome is
//!   unknown, so it is never reported succeeded. A step that may be repeated is run
//!   again on a new connection and succeeds; one declared `"idempotent": false` fails
//!   its job after its one attempt, naming the node and the step, and a retry of the
//!   job runs it again.
//! - A node whose processes are all stopped (SIGSTOP: its TCP connections stay open and
//!   nothing answers) fails its step after the step's timeout, naming the node, and so
//!   do the step's retries (on the old connection, then on a new one), each within that
//!   timeout; a step of the same job on another node runs on well past the workers'
//!   lease (heartbeats keep it) and succeeds.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::lab::Lab;
use engine::execute::node_id;
use engine::operations::ClusterChange;
use engine::provider::LocalProvider;
use engine::queue::{JobId, JobState, TaskRecord, TaskRecordId, TaskState};
use engine::resources::ResourceKind;
use engine::store::Backend;

const JOB_LIMIT: Duration = Duration::from_secs(90);
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/lifecycle");

/// The lifecycle catalog plus services for these tests: `once` (a slow start declared
/// not safe to repeat), `hang` (a start that outlives its 3 s timeout) and `long` (a
/// 12 s start, three leases long), with `hang` and `long` on different nodes.
fn catalog() -> String {
    let text = std::fs::read_to_string(format!("{FIXTURES}/catalog.json")).unwrap();
    let mut catalog: serde_json::Value = serde_json::from_str(&text).unwrap();
    let service = |name: &str, fields: serde_json::Value| {
        serde_json::json!({
            "name": name,
            "description": "a step of the connection fault tests",
            "dependencies": {"install": {"requires": ["base"]}},
            "provisioner": {"actions": {
                "start": {"type": "shell", "fields": fields},
                "stop": {"type": "shell", "fields": {"run": "true"}},
            }},
        })
    };
    let services = catalog["services"].as_array_mut().unwrap();
    services.push(service(
        "once",
        serde_json::json!({
            "run": "echo once starting; sleep 3; echo once > once.done",
            "idempotent": false,
        }),
    ));
    services.push(service(
        "hang",
        serde_json::json!({"run": "echo hang starting; sleep 60", "timeout": 3}),
    ));
    services.push(service(
        "long",
        serde_json::json!({"run": "echo long starting; sleep 12; echo long > long.done"}),
    ));
    let template = &mut catalog["clustertemplates"][0];
    let compatible = template["compatibility"]["services"]
        .as_array_mut()
        .unwrap();
    for name in ["once", "hang", "long"] {
        compatible.push(name.into());
    }
    template["constraints"]["layout"]["cantcoexist"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!(["hang", "long"]));
    catalog.to_string()
}

async fn lab(backend: Backend) -> Lab {
    let script = std::fs::read(format!("{FIXTURES}/web.sh")).unwrap();
    Lab::start_catalog(
        backend,
        &catalog(),
        &[(ResourceKind::Scripts, "web.sh", script)],
    )
    .await
}

/// The `start` task of `service` once it runs (and has had half a second to get going).
async fn running_start_of(lab: &Lab, job: &JobId, service: &str) -> TaskRecord {
    let started = Instant::now();
    loop {
        let tasks = lab.queue.job_tasks(job).await.unwrap();
        if let Some(task) = tasks.into_iter().find(|task| {
            task.service.as_ref().is_some_and(|s| s.as_str() == service)
                && task.action == domain::plan::Action::Start
                && task.state == TaskState::Running
        }) {
            tokio::time::sleep(Duration::from_millis(500)).await;
            return task;
        }
        assert!(started.elapsed() < JOB_LIMIT, "{service} never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Every process's parent and command line, read from /proc now.
fn process_table() -> HashMap<i32, (i32, String)> {
    let mut table = HashMap::new();
    for pid in engine::provider::process_ids() {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(after_name) = stat.rfind(')').map(|at| &stat[at + 1..]) else {
            continue;
        };
        let Some(parent) = after_name
            .split_whitespace()
            .nth(1)
            .and_then(|parent| parent.parse().ok())
        else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', " "))
            .unwrap_or_default();
        table.insert(pid, (parent, cmdline));
    }
    table
}

/// The sshd processes serving the node's connections: the listener's descendants that
/// are sshd (not the shells and steps they run), the listener itself left alone.
fn session_processes(node_dir: &Path) -> Vec<i32> {
    let listener: i32 = std::fs::read_to_string(node_dir.join("sshd.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let table = process_table();
    let descends = |mut pid: i32| loop {
        match table.get(&pid) {
            Some((parent, _)) if *parent == listener => return true,
            Some((parent, _)) if *parent > 1 => pid = *parent,
            _ => return false,
        }
    };
    table
        .iter()
        .filter(|(pid, (_, cmdline))| cmdline.starts_with("sshd") && descends(**pid))
        .map(|(pid, _)| *pid)
        .collect()
}

fn signal(pids: &[i32], signal: &str) {
    for pid in pids {
        // A process may be gone already (an sshd child dies with its monitor).
        let _ = std::process::Command::new("kill")
            .args([signal, &pid.to_string()])
            .stderr(std::process::Stdio::null())
            .status();
    }
}

/// Kills the sshd session of the step `service`'s start while it runs: the outcome is
/// unknown, the attempt is not a success. Returns the task.
async fn cut_the_session_of(lab: &Lab, cluster_id: &str, job: &JobId, service: &str) -> TaskRecord {
    let task = running_start_of(lab, job, service).await;
    let node_dir = lab.nodes_dir.join(node_id(cluster_id, task.node));
    let sessions = session_processes(&node_dir);
    assert!(!sessions.is_empty(), "the step's connection has its sshd");
    signal(&sessions, "-KILL");
    task
}

async fn a_cut_session_is_retried_when_the_step_may_be_repeated_else_fails_the_job(
    backend: Backend,
) {
    let lab = lab(backend).await;
    let (cluster, job) = lab.create("cut", 2).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);

    // `slow` may be repeated: its second attempt, on a new connection, succeeds.
    let job = lab
        .change(
            &cluster.id,
            ClusterChange::AddServices {
                services: vec!["slow".into()],
            },
        )
        .await;
    let slow = cut_the_session_of(&lab, &cluster.id, &job, "slow").await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let attempts = lab.queue.task_attempts(&slow.id).await.unwrap();
    let node = node_id(&cluster.id, slow.node);
    assert_eq!(attempts.len(), 2, "{attempts:#?}");
    assert_eq!(attempts[0].outcome, "ready", "the cut attempt is retried");
    let error = attempts[0].error.clone().unwrap_or_default();
    assert!(
        error.contains(&format!("node {node}")) && error.contains("closed before the command"),
        "the cut attempt says where and what: {error}"
    );
    assert_eq!(attempts[1].outcome, "succeeded");
    let (code, done) = lab
        .run_on_node(
            &cluster.id,
            i64::from(slow.node),
            "cat corral/services/slow/slow.done",
        )
        .await;
    assert_eq!((code, done.as_str()), (0, "slow started\n"));

    // `once` may not be repeated: its job fails after the one attempt, naming node and
    // step, and never says the step succeeded.
    let job = lab
        .change(
            &cluster.id,
            ClusterChange::AddServices {
                services: vec!["once".into()],
            },
        )
        .await;
    let once = cut_the_session_of(&lab, &cluster.id, &job, "once").await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Failed);
    let attempts = lab.queue.task_attempts(&once.id).await.unwrap();
    assert_eq!(attempts.len(), 1, "{attempts:#?}");
    assert_eq!(attempts[0].outcome, "failed");
    let error = lab.queue.job(&job).await.unwrap().error.unwrap();
    let node = node_id(&cluster.id, once.node);
    assert!(
        error.contains(&format!("{}-start-once", once.node)) && error.contains(&node),
        "the job's error names step and node: {error}"
    );
    // A retry of the job (the user's call) runs it again, to its end.
    assert_eq!(
        lab.queue
            .retry_job(&job, engine::store::now_ms())
            .await
            .unwrap(),
        JobState::Running
    );
    lab.wake();
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let attempts = lab.queue.task_attempts(&once.id).await.unwrap();
    assert_eq!(attempts.last().unwrap().outcome, "succeeded");
}

/// Sends SIGCONT to the stopped processes when dropped, whatever the test did.
struct Resume(Vec<i32>);

impl Drop for Resume {
    fn drop(&mut self) {
        signal(&self.0, "-CONT");
    }
}

async fn a_node_that_stops_answering_fails_its_step_after_the_timeout_naming_the_node(
    backend: Backend,
) {
    let lab = lab(backend).await;
    let (cluster, job) = lab.create("frozen", 2).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);

    let job = lab
        .change(
            &cluster.id,
            ClusterChange::AddServices {
                services: vec!["hang".into(), "long".into()],
            },
        )
        .await;
    let hang = running_start_of(&lab, &job, "hang").await;
    let long = running_start_of(&lab, &job, "long").await;
    assert_ne!(hang.node, long.node);
    // Every process of the node stops: sshd, its sessions, the step. The kernel keeps
    // the connections open and takes new ones into the listener's backlog.
    let frozen_dir = lab.nodes_dir.join(node_id(&cluster.id, hang.node));
    let frozen = LocalProvider::processes_under(&frozen_dir);
    assert!(!frozen.is_empty());
    let _resume = Resume(frozen.clone());
    signal(&frozen, "-STOP");

    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Failed);
    let node = node_id(&cluster.id, hang.node);
    let attempts = lab.queue.task_attempts(&hang.id).await.unwrap();
    assert_eq!(attempts.len(), 3, "retried per policy: {attempts:#?}");
    for attempt in &attempts {
        assert_ne!(attempt.outcome, "succeeded");
        let error = attempt.error.clone().unwrap_or_default();
        assert!(error.contains(&format!("node {node}")), "{error}");
        // Each within the step's timeout (3 s), with room for a loaded machine: not
        // the 20 s a handshake may otherwise take, nor forever.
        let took = attempt.finished_at_ms - attempt.started_at_ms;
        assert!(took < 15_000, "attempt {}: {took} ms", attempt.attempt);
    }
    let errors: Vec<String> = attempts
        .iter()
        .map(|attempt| attempt.error.clone().unwrap_or_default())
        .collect();
    assert!(errors[0].contains("timed out after 3s"), "{errors:?}");
    assert!(
        errors[1].contains("did not answer within 3s"),
        "the old connection answers nothing: {errors:?}"
    );
    assert!(
        errors[2].contains("handshake") && errors[2].contains("3s"),
        "a new connection gets no handshake: {errors:?}"
    );
    let error = lab.queue.job(&job).await.unwrap().error.unwrap();
    assert!(error.contains(&node), "{error}");

    // The other node's step ran three leases long, in one attempt, and succeeded.
    let long_end = wait_for_end(&lab, &job, &long.id).await;
    assert_eq!(long_end, TaskState::Succeeded);
    let attempts = lab.queue.task_attempts(&long.id).await.unwrap();
    assert_eq!(attempts.len(), 1, "{attempts:#?}");
    assert!(attempts[0].finished_at_ms - attempts[0].started_at_ms >= 12_000);
}

/// The task's state once it no longer runs (a failed job lets its running tasks end).
async fn wait_for_end(lab: &Lab, job: &JobId, task_id: &TaskRecordId) -> TaskState {
    let started = Instant::now();
    loop {
        let task = lab
            .queue
            .job_tasks(job)
            .await
            .unwrap()
            .into_iter()
            .find(|task| task.id == *task_id)
            .unwrap();
        if task.state != TaskState::Running {
            return task.state;
        }
        assert!(started.elapsed() < JOB_LIMIT, "task {task_id} still runs");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

engine::on_both_backends!(
    a_cut_session_is_retried_when_the_step_may_be_repeated_else_fails_the_job,
    a_node_that_stops_answering_fails_its_step_after_the_timeout_naming_the_node,
);
