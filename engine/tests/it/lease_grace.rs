//! Acceptance for leases that warn and forgive (issue 44 point 5), end to end on
//! `local` nodes over real SSH with the lab's own janitor (every half second): a
//! template with a lease grace; at the end of the lease the web service stops
//! answering and the cluster reads as stopped with its deletion time; extending the
//! lease starts it again (it answers); a lease that ends again is stopped again and,
//! past its grace, deleted. Each stop happens once however many rounds see it.

use std::time::{Duration, Instant};

use api_types::{LeaseExtension, Operation};
use engine::operations::ClusterState;
use engine::principal::Principal;
use engine::queue::JobState;
use engine::resources::{ResourceFiles, ResourceKind};
use engine::service::{Caller, Service};
use engine::store::now_ms;
use engine::store::tenants::DEFAULT_TENANT_ID;
use engine::store::users::Role;
use engine::store::Backend;

use crate::lab::Lab;

const JOB_LIMIT: Duration = Duration::from_secs(60);
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/lifecycle");
/// The template's grace: long enough for a stop job and an extension on a busy machine.
const GRACE_MS: i64 = 30_000;

/// A lab whose `lifecycle` template has a lease of an hour with a 30 s grace.
async fn lab_with_grace(backend: Backend) -> Lab {
    let mut catalog: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{FIXTURES}/catalog.json")).unwrap())
            .unwrap();
    catalog["clustertemplates"][0]["administration"] =
        serde_json::json!({"leaseduration": {"initial": "1h", "grace": "30s"}});
    let script = std::fs::read(format!("{FIXTURES}/web.sh")).unwrap();
    Lab::start_catalog(
        backend,
        &catalog.to_string(),
        &[(ResourceKind::Scripts, "web.sh", script)],
    )
    .await
}

/// Whether something listens on `address` (the web service's port).
async fn answers(address: &str) -> bool {
    matches!(
        tokio::time::timeout(
            Duration::from_secs(2),
            tokio::net::TcpStream::connect(address)
        )
        .await,
        Ok(Ok(_))
    )
}

/// Waits until the cluster's newest job is `operation` and has ended; its state.
async fn newest_job_ended(lab: &Lab, cluster_id: &str, operation: Operation) -> JobState {
    let started = Instant::now();
    loop {
        if let Some((id, _, _)) = lab.queue.newest_job(cluster_id).await.unwrap() {
            if lab.queue.job(&id).await.unwrap().operation == operation {
                return lab.wait(&id, JOB_LIMIT).await;
            }
        }
        assert!(
            started.elapsed() < JOB_LIMIT,
            "no {operation} job was submitted"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn a_lease_with_grace_stops_restarts_and_deletes(backend: Backend) {
    let lab = lab_with_grace(backend).await;
    let (cluster, job) = lab.create("graceful", 2).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let nodes = lab.store.list_nodes(&cluster.id).await.unwrap();
    let web = nodes
        .iter()
        .find(|node| node.services_json.contains("\"web\""))
        .unwrap();
    let address = format!("{}:8080", web.hostname.as_ref().unwrap());
    assert!(answers(&address).await, "the web service answers at first");

    // The lease ends: the lab's janitor stops the services, once.
    let ended = now_ms() - 1_000;
    assert!(lab
        .store
        .set_cluster_lease(&cluster.id, Some(ended))
        .await
        .unwrap());
    assert_eq!(
        newest_job_ended(&lab, &cluster.id, Operation::Stop).await,
        JobState::Succeeded
    );
    assert!(
        !answers(&address).await,
        "a stopped cluster's web service is down"
    );
    let stopped = lab.store.cluster(&cluster.id).await.unwrap();
    assert_eq!(stopped.state, ClusterState::Active);
    assert_eq!(stopped.lease_deletes_at_ms, Some(ended + GRACE_MS));
    // Down on purpose: neither checked (its last results stay) nor looked at by
    // healing, which would take its stopped services for dead nodes.
    let scope = engine::queue::WorkerScope::Shared;
    let due = lab
        .store
        .claim_due_checks(&scope, i64::MAX / 2, i64::MAX / 2, 1_000)
        .await
        .unwrap();
    assert!(
        due.iter().all(|check| check.cluster_id != cluster.id),
        "{due:?}"
    );
    let served = lab.store.served_clusters(&scope).await.unwrap();
    assert!(served.iter().all(|(id, _, _)| *id != cluster.id));
    let view = api_types::ClusterView::try_from(stopped).unwrap();
    assert_eq!(view.lease_deletes_at_ms, Some(ended + GRACE_MS));
    assert!(
        view.lease_left(now_ms())
            .unwrap()
            .starts_with("stopped; deleted in "),
        "{:?}",
        view.lease_left(now_ms())
    );

    // Extending within the grace starts it again, through the service as the API does.
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
        .extend_lease(&owner, &cluster.id, &LeaseExtension { seconds: 3600 })
        .await
        .unwrap();
    assert_eq!(extended.lease_deletes_at_ms, None);
    lab.wake();
    assert_eq!(
        newest_job_ended(&lab, &cluster.id, Operation::Start).await,
        JobState::Succeeded
    );
    assert!(answers(&address).await, "extended, it answers again");

    // The lease ends again, its grace already nearly over: stopped, then deleted.
    let ended = now_ms() - GRACE_MS + 8_000;
    assert!(lab
        .store
        .set_cluster_lease(&cluster.id, Some(ended))
        .await
        .unwrap());
    assert_eq!(
        newest_job_ended(&lab, &cluster.id, Operation::Delete).await,
        JobState::Succeeded
    );
    assert!(
        now_ms() >= ended + GRACE_MS,
        "not deleted before the grace ended"
    );
    assert_eq!(
        lab.store.cluster(&cluster.id).await.unwrap().state,
        ClusterState::Deleted
    );
    assert_eq!(lab.live_processes(), Vec::<i32>::new());
    let jobs: Vec<Operation> = lab
        .queue
        .cluster_jobs(&cluster.id)
        .await
        .unwrap()
        .into_iter()
        .map(|job| job.operation)
        .collect();
    assert_eq!(
        jobs,
        [
            Operation::Delete,
            Operation::Stop,
            Operation::Start,
            Operation::Stop,
            Operation::Create
        ],
        "each stop once, however many janitor rounds saw the ended lease"
    );
}

engine::on_both_backends!(a_lease_with_grace_stops_restarts_and_deletes);
