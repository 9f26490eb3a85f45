//! The monitor: the demo web-stack's services declare health checks; on a live cluster
//! they turn up, a killed service turns down (with what its check printed), and a
//! restart of that service turns it up again, checked at once when the job ends. Each
//! node's machine is recorded present, though the cluster does not heal.

use std::time::{Duration, Instant};

use api_types::{NodePresence, ServiceHealth};
use engine::operations::ClusterChange;
use engine::queue::JobState;
use engine::store::health::HealthRow;
use engine::store::Backend;

use crate::lab::Lab;

const JOB_LIMIT: Duration = Duration::from_secs(60);
/// The acceptance bound: a dead service shows red within this.
const NOTICED_WITHIN: Duration = Duration::from_secs(30);

/// Waits until `wanted` holds for the cluster's checks, or panics with them.
async fn until(
    lab: &Lab,
    cluster_id: &str,
    what: &str,
    wanted: impl Fn(&[HealthRow]) -> bool,
) -> Duration {
    let started = Instant::now();
    loop {
        let rows = lab.store.cluster_health(cluster_id).await.unwrap();
        if wanted(&rows) {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < NOTICED_WITHIN,
            "{what}: not within {NOTICED_WITHIN:?}: {rows:#?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn health_of<'r>(rows: &'r [HealthRow], service: &str) -> Vec<&'r HealthRow> {
    rows.iter().filter(|row| row.service == service).collect()
}

async fn a_killed_service_turns_down_and_a_restart_brings_it_up(backend: Backend) {
    let lab = Lab::start_demo(backend).await;
    let (cluster, job) = lab.create_from("web-stack", "watched", 3).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);

    // kv, app and lb declare checks (base does not): three rows, all up.
    let first = until(&lab, &cluster.id, "every check up", |rows| {
        rows.len() == 3 && rows.iter().all(|row| row.health == ServiceHealth::Up)
    })
    .await;
    eprintln!("every service checked up {first:?} after the create ended");
    // The cluster does not heal, yet its nodes' machines are asked about and recorded
    // (a never-asked cluster at the next heal round).
    let started = Instant::now();
    loop {
        let nodes = lab.store.list_nodes(&cluster.id).await.unwrap();
        if nodes.len() == 3
            && nodes
                .iter()
                .all(|node| node.presence == Some(NodePresence::Present))
        {
            assert!(nodes.iter().all(|node| node.presence_since_ms.is_some()));
            break;
        }
        assert!(
            started.elapsed() < NOTICED_WITHIN,
            "machines not present within {NOTICED_WITHIN:?}: {nodes:#?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    eprintln!(
        "every machine recorded present {:?} later",
        started.elapsed()
    );

    // Kill kv behind the cluster's back.
    let kv = health_of(&lab.store.cluster_health(&cluster.id).await.unwrap(), "kv")[0].clone();
    let (code, _) = lab
        .run_on_node(
            &cluster.id,
            kv.node_number,
            "kill -KILL $(cat \"$HOME\"/corral/services/kv/pid)",
        )
        .await;
    assert_eq!(code, 0);
    let noticed = until(&lab, &cluster.id, "kv down", |rows| {
        health_of(rows, "kv")[0].health == ServiceHealth::Down
    })
    .await;
    eprintln!("a killed kv was seen down after {noticed:?}");
    let rows = lab.store.cluster_health(&cluster.id).await.unwrap();
    let down = health_of(&rows, "kv")[0];
    assert!(
        down.detail
            .as_deref()
            .is_some_and(|detail| detail.starts_with("the check exited with code")),
        "{down:?}"
    );
    assert!(down.checked_at_ms.is_some());
    assert_eq!(health_of(&rows, "lb")[0].health, ServiceHealth::Up);

    let job = lab
        .change(
            &cluster.id,
            ClusterChange::Restart {
                services: Some(["kv".parse().unwrap()].into()),
            },
        )
        .await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let back = until(&lab, &cluster.id, "kv up again", |rows| {
        rows.iter().all(|row| row.health == ServiceHealth::Up)
    })
    .await;
    eprintln!("kv was seen up {back:?} after its restart ended");

    // Deleted: its checks go with it.
    let job = lab
        .change(&cluster.id, ClusterChange::Delete { force: false })
        .await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    until(&lab, &cluster.id, "checks dropped", <[HealthRow]>::is_empty).await;
}

engine::on_both_backends!(a_killed_service_turns_down_and_a_restart_brings_it_up);
