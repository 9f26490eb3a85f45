//! Acceptance: a 5-node cluster on `local` nodes built by the worker pool over real SSH,
//! serving HTTP from one node; then a service added, a restart, a scale-in (the web
//! page, written from macros, forgets the removed workers), a service removed, and a
//! delete that leaves no process of the cluster behind.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::lab::Lab;
use domain::layout::Layout;
use domain::solver::NodesToRemove;
use engine::operations::{preview_change, ClusterChange, ClusterState, OperationError};
use engine::queue::JobState;
use engine::store::Backend;

const JOB_LIMIT: Duration = Duration::from_secs(60);

async fn five_node_cluster_lives_and_dies(backend: Backend) {
    let lab = Lab::start(backend).await;
    let (cluster, job) = lab.create("shop", 5).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);

    let cluster = lab.store.cluster(&cluster.id).await.unwrap();
    assert_eq!(cluster.state, ClusterState::Active);
    let layout: Layout = serde_json::from_str(&cluster.layout_json).unwrap();
    assert_eq!(layout.nodes.len(), 5);
    let nodes = lab.store.list_nodes(&cluster.id).await.unwrap();
    assert_eq!(nodes.len(), 5);
    let hosts: BTreeSet<_> = nodes.iter().map(|n| n.hostname.clone().unwrap()).collect();
    assert_eq!(
        hosts.len(),
        5,
        "every node has an address of its own: {hosts:?}"
    );

    // The web node answers with a page its configure step wrote from macros.
    let web_numbers: Vec<u32> = layout
        .nodes
        .iter()
        .filter(|n| n.services.iter().any(|s| s.as_str() == "web"))
        .map(|n| n.number)
        .collect();
    assert_eq!(web_numbers.len(), 1, "{layout:?}");
    let web = nodes
        .iter()
        .find(|n| n.number == i64::from(web_numbers[0]))
        .unwrap();
    let page = http_get(&format!("http://{}:8080/", web.hostname.as_ref().unwrap())).await;
    assert!(page.starts_with("cluster=shop "), "{page}");
    let worker_hosts: BTreeSet<String> = nodes
        .iter()
        .filter(|n| n.services_json.contains("\"worker\""))
        .map(|n| n.hostname.clone().unwrap())
        .collect();
    let listed: BTreeSet<String> = page
        .trim()
        .rsplit_once("workers=")
        .unwrap()
        .1
        .split(',')
        .map(str::to_owned)
        .collect();
    assert_eq!(listed, worker_hosts, "macros listed the worker hosts");

    // Add a service onto the running cluster.
    let job = lab
        .change(
            &cluster.id,
            ClusterChange::AddServices {
                services: vec!["extra".into()],
            },
        )
        .await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let cluster = lab.store.cluster(&cluster.id).await.unwrap();
    let layout: Layout = serde_json::from_str(&cluster.layout_json).unwrap();
    assert!(
        layout
            .nodes
            .iter()
            .any(|n| n.services.iter().any(|s| s.as_str() == "extra")),
        "extra is placed: {layout:?}"
    );

    // Restart everything; the page is served again afterwards.
    let job = lab
        .change(&cluster.id, ClusterChange::Restart { services: None })
        .await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let page = http_get(&format!("http://{}:8080/", web.hostname.as_ref().unwrap())).await;
    assert!(page.starts_with("cluster=shop "), "{page}");
    assert!(!lab.live_processes().is_empty());

    // Scale in by two: the solver keeps the one web node, two workers go, and the web
    // page is written again (configure runs before the workers stop) without them.
    let job = lab
        .change(
            &cluster.id,
            ClusterChange::RemoveNodes {
                which: NodesToRemove::Count(2),
            },
        )
        .await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let shrunk = lab.store.cluster(&cluster.id).await.unwrap();
    assert_eq!(shrunk.state, ClusterState::Active);
    let layout: Layout = serde_json::from_str(&shrunk.layout_json).unwrap();
    assert_eq!(layout.nodes.len(), 3);
    assert!(layout.node(web_numbers[0]).is_some(), "the web node stays");
    let nodes = lab.store.list_nodes(&cluster.id).await.unwrap();
    assert_eq!(nodes.len(), 3, "the removed nodes' records are gone");
    let worker_hosts: BTreeSet<String> = nodes
        .iter()
        .filter(|n| n.services_json.contains("\"worker\""))
        .map(|n| n.hostname.clone().unwrap())
        .collect();
    let page = http_get(&format!("http://{}:8080/", web.hostname.as_ref().unwrap())).await;
    let listed: BTreeSet<String> = page
        .trim()
        .rsplit_once("workers=")
        .unwrap()
        .1
        .split(',')
        .map(str::to_owned)
        .collect();
    assert_eq!(listed, worker_hosts, "the page lists only the workers left");

    // Refused removals name why, and store nothing.
    let refuse = |change: ClusterChange| {
        let queue = lab.queue.clone();
        let shrunk = shrunk.clone();
        async move { preview_change(&queue, &shrunk, &change).await.unwrap_err() }
    };
    let error = refuse(ClusterChange::RemoveNodes {
        which: NodesToRemove::Named(BTreeSet::from([web_numbers[0]])),
    })
    .await;
    assert!(
        matches!(error, OperationError::Unsatisfiable(_))
            && error
                .to_string()
                .contains("service web would be left on 0 node(s), fewer than its minimum 1"),
        "{error}"
    );
    let error = refuse(ClusterChange::RemoveNodes {
        which: NodesToRemove::Named(BTreeSet::from([999])),
    })
    .await;
    assert!(error.to_string().contains("has no node 999"), "{error}");
    let error = refuse(ClusterChange::RemoveServices {
        services: vec!["base".into()],
    })
    .await;
    assert!(
        matches!(error, OperationError::StillRequired(_))
            && error.to_string().starts_with("cannot remove base: ")
            && error.to_string().contains("web needs base to install")
            && error.to_string().contains("worker needs base to install"),
        "{error}"
    );
    let error = refuse(ClusterChange::RemoveServices {
        services: vec!["nope".into()],
    })
    .await;
    assert!(
        error
            .to_string()
            .contains("service nope is not on cluster shop"),
        "{error}"
    );

    // Remove the added service again: stopped on its nodes, gone from the layout.
    let job = lab
        .change(
            &cluster.id,
            ClusterChange::RemoveServices {
                services: vec!["extra".into()],
            },
        )
        .await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let cluster = lab.store.cluster(&cluster.id).await.unwrap();
    let layout: Layout = serde_json::from_str(&cluster.layout_json).unwrap();
    assert!(
        layout
            .nodes
            .iter()
            .all(|n| n.services.iter().all(|s| s.as_str() != "extra")),
        "{layout:?}"
    );

    // Delete: every node process and service process is gone.
    let job = lab
        .change(&cluster.id, ClusterChange::Delete { force: false })
        .await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let cluster = lab.store.cluster(&cluster.id).await.unwrap();
    assert_eq!(cluster.state, ClusterState::Deleted);
    assert!(lab.store.list_nodes(&cluster.id).await.unwrap().is_empty());
    assert_eq!(
        lab.live_processes(),
        Vec::<i32>::new(),
        "no process is left"
    );
    assert!(
        std::fs::read_dir(&lab.nodes_dir).unwrap().next().is_none(),
        "node directories are removed"
    );
}

/// A GET with a short retry (the server may still be binding after a restart).
async fn http_get(url: &str) -> String {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let mut last = None;
    for _ in 0..50 {
        match client.get(url).send().await {
            Ok(response) if response.status().is_success() => {
                return response.text().await.unwrap();
            }
            Ok(response) => last = Some(format!("status {}", response.status())),
            Err(error) => last = Some(error.to_string()),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{url} did not answer: {last:?}");
}

engine::on_both_backends!(five_node_cluster_lives_and_dies);
