//! A lease's grace stops the machines too (issue 44 point 5), on the demo's `docker`
//! provider against the real Docker engine: at the end of the lease the stop job stops
//! the services and then each node's container (Docker says it is not running, the
//! web site no longer answers, the nodes read `stopped`, and a restarted worker does
//! not start them); extending the lease starts the containers first, stores the ports
//! Docker published anew, and the web site answers again; a second cluster left past
//! its grace is deleted as it is, stopped, and leaves no container or network.
//!
//! The leases are ended by moving them into the past, as `lease_grace` does; the lab's
//! janitor runs every half second.

use std::time::{Duration, Instant};

use api_types::{LeaseExtension, Operation};
use domain::catalog::coopr::import_bundle;
use domain::plan::Action;
use engine::execute::NodeState;
use engine::operations::{ClusterChange, ClusterState};
use engine::principal::Principal;
use engine::provider::NodeRecord;
use engine::queue::{self, JobId, JobState, SubmitOptions};
use engine::resources::ResourceFiles;
use engine::service::{Caller, Service};
use engine::store::clusters::Cluster;
use engine::store::now_ms;
use engine::store::tenants::DEFAULT_TENANT_ID;
use engine::store::users::Role;
use engine::store::Backend;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::docker_nodes::{containers_of, networks_of, Cleanup};
use crate::lab::Lab;

/// A bound on a hang (docker calls queue behind other tests'), not a time to beat.
const JOB_LIMIT: Duration = Duration::from_secs(300);
/// The templates' grace: long enough for the stop job and the extension on a busy
/// machine (the extended cluster must be started again before it runs out).
const GRACE_MS: i64 = 240_000;

/// The demo lab with the docker provider, its web-stack and kv-cluster templates given
/// an hour's lease with a grace of [`GRACE_MS`].
async fn lab_with_grace(keys: &std::path::Path) -> Lab {
    let lab = Lab::start_demo_with_docker(Backend::Sqlite, keys).await;
    let mut bundle = engine::catalog::export(&lab.store, DEFAULT_TENANT_ID)
        .await
        .unwrap();
    for template in bundle["clustertemplates"].as_array_mut().unwrap() {
        if ["web-stack", "kv-cluster"].contains(&template["name"].as_str().unwrap()) {
            template["administration"] = serde_json::json!({
                "leaseduration": {"initial": "1h", "grace": format!("{}s", GRACE_MS / 1000)}
            });
        }
    }
    let catalog = import_bundle(&bundle.to_string()).unwrap();
    engine::catalog::import(&lab.store, DEFAULT_TENANT_ID, &catalog, None, now_ms())
        .await
        .unwrap();
    lab
}

/// Whether an HTTP server answers at `address` (`host:port`).
async fn answers(address: &str) -> bool {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(address).await?;
        stream
            .write_all(b"GET / HTTP/1.0\r\nHost: corral\r\n\r\n")
            .await?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await?;
        Ok::<_, std::io::Error>(answer.starts_with(b"HTTP/1"))
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(3), exchange).await,
        Ok(Ok(true))
    )
}

/// Waits until the cluster's newest job is `operation` and has ended; its id and state.
async fn newest_job_ended(lab: &Lab, cluster_id: &str, operation: Operation) -> (JobId, JobState) {
    let started = Instant::now();
    loop {
        if let Some((id, _, _)) = lab.queue.newest_job(cluster_id).await.unwrap() {
            if lab.queue.job(&id).await.unwrap().operation == operation {
                let state = lab.wait(&id, JOB_LIMIT).await;
                return (id, state);
            }
        }
        assert!(
            started.elapsed() < JOB_LIMIT,
            "no {operation} job was submitted"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The web site's address: the load balancer node's, port 8000.
async fn web_site(lab: &Lab, cluster: &Cluster) -> String {
    let nodes = lab.store.list_nodes(&cluster.id).await.unwrap();
    let lb = nodes
        .iter()
        .find(|node| node.services_json.contains("\"lb\""))
        .unwrap();
    format!("{}:8000", lb.hostname.as_ref().unwrap())
}

/// Whether each of the cluster's containers runs, as Docker says.
async fn running(lab: &Lab, cluster: &Cluster) -> Vec<bool> {
    let docker = lab.docker.as_ref().unwrap().docker();
    let mut states = Vec::new();
    for container in containers_of(docker, &cluster.id).await {
        let inspected = docker.inspect_container(&container, None).await.unwrap();
        states.push(inspected.state.unwrap().running.unwrap());
    }
    states
}

/// The loopback port Docker publishes the container's sshd on now (none when stopped).
async fn published_port(lab: &Lab, container: &str) -> Option<u16> {
    let docker = lab.docker.as_ref().unwrap().docker();
    let inspected = docker.inspect_container(container, None).await.unwrap();
    inspected
        .network_settings?
        .ports?
        .get("22/tcp")
        .cloned()
        .flatten()?
        .into_iter()
        .find_map(|binding| binding.host_port?.parse().ok())
}

/// The actions of a job's tasks, each with how many there are.
async fn actions(lab: &Lab, job: &JobId) -> Vec<(Action, usize)> {
    let mut counted: Vec<(Action, usize)> = Vec::new();
    for task in lab.queue.job_tasks(job).await.unwrap() {
        assert_eq!(task.state, queue::TaskState::Succeeded, "{task:?}");
        match counted
            .iter_mut()
            .find(|(action, _)| *action == task.action)
        {
            Some((_, count)) => *count += 1,
            None => counted.push((task.action, 1)),
        }
    }
    counted
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_stop_stops_the_containers_and_its_extension_starts_them() {
    let keys = tempfile::tempdir().unwrap();
    let mut lab = lab_with_grace(keys.path()).await;
    let docker = lab.docker.clone().unwrap();
    let (web, web_job) = lab.create_on("docker", "web-stack", "leased", 3).await;
    let _web_cleanup = Cleanup::new(docker.docker(), &web.id);
    let (kv, kv_job) = lab.create_on("docker", "kv-cluster", "lapsed", 1).await;
    let _kv_cleanup = Cleanup::new(docker.docker(), &kv.id);
    assert_eq!(lab.wait(&web_job, JOB_LIMIT).await, JobState::Succeeded);
    assert_eq!(lab.wait(&kv_job, JOB_LIMIT).await, JobState::Succeeded);
    let site = web_site(&lab, &web).await;
    assert!(answers(&site).await, "the web site answers at first");
    assert_eq!(running(&lab, &web).await, [true, true, true]);

    // Both leases end: `leased` has its grace ahead, `lapsed` a few seconds of it left.
    let ended = now_ms() - 1_000;
    assert!(lab
        .store
        .set_cluster_lease(&web.id, Some(ended))
        .await
        .unwrap());
    assert!(lab
        .store
        .set_cluster_lease(&kv.id, Some(now_ms() - GRACE_MS + 10_000))
        .await
        .unwrap());
    let (stop, state) = newest_job_ended(&lab, &web.id, Operation::Stop).await;
    assert_eq!(state, JobState::Succeeded);
    let stop_actions = actions(&lab, &stop).await;
    assert!(
        stop_actions.contains(&(Action::Suspend, 3)),
        "{stop_actions:?}"
    );
    assert_eq!(
        running(&lab, &web).await,
        [false, false, false],
        "Docker says the containers are stopped"
    );
    assert!(
        !answers(&site).await,
        "a stopped cluster's web site is down"
    );
    let nodes = lab.store.list_nodes(&web.id).await.unwrap();
    assert!(nodes.iter().all(|node| node.state == NodeState::Stopped));
    let stopped = lab.store.cluster(&web.id).await.unwrap();
    assert_eq!(stopped.state, ClusterState::Active);
    assert_eq!(stopped.lease_deletes_at_ms, Some(ended + GRACE_MS));
    let view = api_types::ClusterView::try_from(stopped).unwrap();
    let left = view.lease_left(now_ms()).unwrap();
    assert!(left.starts_with("stopped; deleted in "), "{left}");

    // A worker started meanwhile adopts live nodes, but leaves stopped machines off.
    lab.restart_workers().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(running(&lab, &web).await, [false, false, false]);

    // Extending within the grace starts the containers, then the services.
    let files = tempfile::tempdir().unwrap();
    let service = Service::new(lab.queue.clone(), ResourceFiles::in_directory(files.path()));
    let owner = Caller::new(
        Principal {
            user_id: "u-grace".to_owned(),
            username: "grace".to_owned(),
            tenant_id: DEFAULT_TENANT_ID.to_owned(),
            role: Role::TenantAdmin,
        },
        None,
    );
    let extended = service
        .extend_lease(&owner, &web.id, &LeaseExtension { seconds: 3600 })
        .await
        .unwrap();
    assert_eq!(extended.lease_deletes_at_ms, None);
    lab.wake();
    let (start, state) = newest_job_ended(&lab, &web.id, Operation::Start).await;
    assert_eq!(state, JobState::Succeeded);
    let start_actions = actions(&lab, &start).await;
    assert_eq!(start_actions.first(), Some(&(Action::Resume, 3)));
    assert_eq!(running(&lab, &web).await, [true, true, true]);
    for node in lab.store.list_nodes(&web.id).await.unwrap() {
        assert_eq!(node.state, NodeState::Ready);
        let record: NodeRecord =
            serde_json::from_str(node.provider_json.as_ref().unwrap()).unwrap();
        let container = engine::provider::container_name(&record.id);
        assert_eq!(
            published_port(&lab, &container).await,
            Some(record.port),
            "the node's record has the port Docker published anew"
        );
    }
    let site = web_site(&lab, &web).await;
    assert!(answers(&site).await, "extended, the web site answers again");

    // `lapsed` ran out of grace: stopped, then deleted as it was, nothing left.
    let (delete, state) = newest_job_ended(&lab, &kv.id, Operation::Delete).await;
    assert_eq!(state, JobState::Succeeded);
    assert_eq!(actions(&lab, &delete).await, [(Action::Delete, 1)]);
    let jobs: Vec<Operation> = lab
        .queue
        .cluster_jobs(&kv.id)
        .await
        .unwrap()
        .into_iter()
        .map(|job| job.operation)
        .collect();
    assert_eq!(
        jobs,
        [Operation::Delete, Operation::Stop, Operation::Create]
    );
    assert_eq!(
        lab.store.cluster(&kv.id).await.unwrap().state,
        ClusterState::Deleted
    );
    assert!(containers_of(docker.docker(), &kv.id).await.is_empty());
    assert!(networks_of(docker.docker(), &kv.id).await.is_empty());

    // The extended cluster goes as usual.
    let job = engine::operations::submit_change(
        &lab.queue,
        &web.id,
        &ClusterChange::Delete { force: false },
        None,
        SubmitOptions::default(),
        now_ms(),
    )
    .await
    .unwrap();
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    assert!(containers_of(docker.docker(), &web.id).await.is_empty());
}
