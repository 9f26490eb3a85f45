//! The `docker` provider against the real Docker engine (`scripts/dockerd.sh` starts it
//! where no init system does): nodes are containers of Corral's node image, reached over
//! SSH on a port published on 127.0.0.1 with the host key pinned at create, limited as
//! their hardware type says, labelled, adopted after a restart, and gone with their
//! network after delete.
//!
//! Each test uses a cluster id of its own, so its containers and network are found by
//! label, and removes them by label at the end even when it fails.

use std::collections::HashMap;
use std::time::Duration;

use bollard::query_parameters::{ListContainersOptions, ListNetworksOptions};
use engine::provider::{
    container_name, network_name, DockerNodeState, DockerProvider, NodeProvider, NodeRecord,
    NodeSpec, ResourceLimits,
};
use engine::ssh::{OutputChunk, PoolConfig, RunOptions, SessionPool};
use engine::store::Store;
use engine::testing::TestDatabase;
use tokio::sync::mpsc;

const CONFIRM: Duration = Duration::from_secs(60);
const STEP: Duration = Duration::from_secs(30);

/// Removes whatever a test's cluster left on the engine, by label.
pub(crate) struct Cleanup {
    docker: bollard::Docker,
    cluster: String,
}

impl Cleanup {
    pub(crate) fn new(docker: &bollard::Docker, cluster: &str) -> Self {
        Self {
            docker: docker.clone(),
            cluster: cluster.to_owned(),
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let (docker, cluster) = (self.docker.clone(), self.cluster.clone());
        // Drop cannot await: a thread of its own finishes the removal before the test ends.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                for id in containers_of(&docker, &cluster).await {
                    let _ = docker
                        .remove_container(
                            &id,
                            Some(bollard::query_parameters::RemoveContainerOptions {
                                force: true,
                                ..Default::default()
                            }),
                        )
                        .await;
                }
                let _ = docker.remove_network(&network_name(&cluster)).await;
            });
        })
        .join();
    }
}

fn label_filter(cluster: &str) -> HashMap<String, Vec<String>> {
    HashMap::from([(
        "label".to_owned(),
        vec![format!("corral.cluster={cluster}")],
    )])
}

pub(crate) async fn containers_of(docker: &bollard::Docker, cluster: &str) -> Vec<String> {
    docker
        .list_containers(Some(ListContainersOptions {
            all: true,
            filters: Some(label_filter(cluster)),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_iter()
        .filter_map(|container| container.id)
        .collect()
}

pub(crate) async fn networks_of(docker: &bollard::Docker, cluster: &str) -> Vec<String> {
    docker
        .list_networks(Some(ListNetworksOptions {
            filters: Some(label_filter(cluster)),
        }))
        .await
        .unwrap()
        .into_iter()
        .filter_map(|network| network.name)
        .collect()
}

fn spec(cluster: &str, number: u32) -> NodeSpec {
    NodeSpec {
        cluster_id: Some(cluster.to_owned()),
        limits: ResourceLimits {
            memory_mb: Some(256),
            cpu_millis: Some(500),
            ..ResourceLimits::default()
        },
        ..NodeSpec::for_tenant(format!("{cluster}-{number}"), "tenant-a")
    }
}

async fn run(pool: &SessionPool, record: &NodeRecord, command: &str) -> (u32, String) {
    let (sender, mut receiver) = mpsc::channel(64);
    let options = RunOptions {
        timeout: STEP,
        output: Some(sender),
    };
    let outcome = pool
        .run(&record.ssh_target(), command, options)
        .await
        .unwrap();
    let mut stdout = Vec::new();
    while let Some(OutputChunk { bytes, .. }) = receiver.recv().await {
        stdout.extend(bytes);
    }
    (outcome.exit.0, String::from_utf8(stdout).unwrap())
}

/// A database holding the providers' client keys (sealed with a test key).
async fn key_store(db: &TestDatabase) -> Store {
    Store::open(&db.url)
        .await
        .unwrap()
        .with_secret_key(engine::testing::test_secret_key())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn docker_nodes_are_made_reached_limited_adopted_and_removed() {
    let db = TestDatabase::sqlite();
    let store = key_store(&db).await;
    let keys = tempfile::tempdir().unwrap();
    let provider = DockerProvider::connect(store.clone(), keys.path())
        .await
        .unwrap();
    let cluster = format!("test-{}", uuid::Uuid::new_v4().simple());
    let _cleanup = Cleanup::new(provider.docker(), &cluster);
    let pool = SessionPool::new(PoolConfig::default());

    // The create step says so before it waits for the node image to be built (on a
    // fresh engine), and says nothing once the engine has it. The image only ever goes
    // from missing to built, so both checks hold whatever other tests build meanwhile.
    let tag = engine::provider::NodeImage::tag();
    match provider.slow_start(&spec(&cluster, 1)).await.unwrap() {
        Some(note) => assert!(
            note.contains(&format!("building Corral's node image {tag}")),
            "{note}"
        ),
        None => assert!(provider.docker().inspect_image(&tag).await.is_ok()),
    }
    let first = provider.create(&spec(&cluster, 1)).await.unwrap();
    assert_eq!(provider.slow_start(&spec(&cluster, 2)).await.unwrap(), None);
    let own_image = NodeSpec {
        image: Some("corral-test-no-such-image:1".to_owned()),
        ..spec(&cluster, 2)
    };
    assert_eq!(
        provider.slow_start(&own_image).await.unwrap(),
        None,
        "an image Corral does not build is never waited for"
    );
    let second = provider.create(&spec(&cluster, 2)).await.unwrap();
    assert_eq!(first.host, "127.0.0.1", "only a loopback port is used");
    provider.confirm(&first, &pool, CONFIRM).await.unwrap();
    provider.confirm(&second, &pool, CONFIRM).await.unwrap();

    // The pinned key is the one the container serves: the session above checked it.
    // The limits are the hardware type's, inside the container and in the engine.
    let (status, whoami) = run(&pool, &first, "id -un && hostname").await;
    assert_eq!(status, 0);
    assert!(whoami.starts_with("root\nnode-1"), "{whoami}");
    let inspected = provider
        .docker()
        .inspect_container(&container_name(&first.id), None)
        .await
        .unwrap();
    let host = inspected.host_config.unwrap();
    assert_eq!(host.memory, Some(256 * 1024 * 1024));
    assert_eq!(
        host.memory_swap,
        Some(256 * 1024 * 1024),
        "no swap beyond the limit"
    );
    assert_eq!(host.nano_cpus, Some(500_000_000));
    assert_ne!(host.privileged, Some(true));
    assert!(host.binds.unwrap_or_default().is_empty(), "no host mounts");
    let labels = inspected.config.unwrap().labels.unwrap();
    assert_eq!(labels["corral.cluster"], cluster);
    assert_eq!(labels["corral.node"], first.id);
    assert_eq!(labels["corral.tenant"], "tenant-a");
    let (_, limit) = run(
        &pool,
        &first,
        "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max",
    )
    .await;
    assert_eq!(limit.trim(), "268435456");

    // Nodes of one cluster reach each other at the addresses Docker gave them on the
    // cluster's network (what macros and links use), and by container name.
    let second_address = second.address().to_owned();
    assert_ne!(second_address, "127.0.0.1");
    for peer in [second_address.clone(), container_name(&second.id)] {
        let (status, banner) = run(
            &pool,
            &first,
            &format!(
                "python3 -c 'import socket; s=socket.create_connection((\"{peer}\", 22), 5); \
                 print(s.recv(64).decode().strip())'"
            ),
        )
        .await;
        assert_eq!(status, 0, "{banner}");
        assert!(banner.starts_with("SSH-2.0-OpenSSH"), "{peer}: {banner}");
    }

    // A restarted server adopts the node: a stopped container is started again, on a
    // port that may have changed, and its pinned key still holds.
    provider
        .docker()
        .stop_container(&container_name(&first.id), None)
        .await
        .unwrap();
    pool.close(&first.id).await;
    // Another process, with a key directory of its own (another machine sharing the
    // database), adopts the node and reaches it with the stored key.
    let elsewhere = tempfile::tempdir().unwrap();
    let restarted = DockerProvider::connect(store.clone(), elsewhere.path())
        .await
        .unwrap();
    let adopted = restarted.adopt(&first).await.unwrap();
    assert_eq!(adopted.host_key, first.host_key);
    restarted.confirm(&adopted, &pool, CONFIRM).await.unwrap();
    let target = restarted.ssh_target(&adopted).await.unwrap();
    assert!(target.client_key.path().starts_with(elsewhere.path()));
    assert_eq!(
        std::fs::read(target.client_key.path()).unwrap(),
        std::fs::read(&first.client_key_path).unwrap()
    );
    let (status, _) = run(&pool, &adopted, "true").await;
    assert_eq!(status, 0);

    // Deleting the cluster's nodes leaves no container and no network; deleting again
    // succeeds.
    restarted.delete(&adopted).await.unwrap();
    assert_eq!(
        networks_of(provider.docker(), &cluster).await.len(),
        1,
        "the network stays while a node uses it"
    );
    restarted.delete(&second).await.unwrap();
    restarted.delete(&second).await.unwrap();
    assert!(containers_of(provider.docker(), &cluster).await.is_empty());
    assert!(networks_of(provider.docker(), &cluster).await.is_empty());
    assert!(
        store
            .client_key(&format!("docker:{}.key", second.id))
            .await
            .unwrap()
            .is_none(),
        "a deleted node's key is forgotten"
    );
    assert!(!target.client_key.path().exists());
    let state: DockerNodeState = serde_json::from_value(second.provider_state.clone()).unwrap();
    assert_eq!(state.cluster, cluster);
}

#[tokio::test]
async fn a_create_retried_after_a_crash_replaces_the_unrecorded_container() {
    let db = TestDatabase::sqlite();
    let keys = tempfile::tempdir().unwrap();
    let provider = DockerProvider::connect(key_store(&db).await, keys.path())
        .await
        .unwrap();
    let cluster = format!("test-{}", uuid::Uuid::new_v4().simple());
    let _cleanup = Cleanup::new(provider.docker(), &cluster);
    let pool = SessionPool::new(PoolConfig::default());
    // The first create's record was lost (the process died before storing it).
    let lost = provider.create(&spec(&cluster, 1)).await.unwrap();
    let again = provider.create(&spec(&cluster, 1)).await.unwrap();
    assert_ne!(lost.host_key, again.host_key, "a fresh key, pinned again");
    assert_eq!(containers_of(provider.docker(), &cluster).await.len(), 1);
    provider.confirm(&again, &pool, CONFIRM).await.unwrap();
    provider.delete(&again).await.unwrap();
    assert!(containers_of(provider.docker(), &cluster).await.is_empty());
    assert!(networks_of(provider.docker(), &cluster).await.is_empty());
}

#[tokio::test]
async fn an_image_the_engine_does_not_have_is_refused_without_a_pull() {
    let db = TestDatabase::sqlite();
    let keys = tempfile::tempdir().unwrap();
    let provider = DockerProvider::connect(key_store(&db).await, keys.path())
        .await
        .unwrap();
    let cluster = format!("test-{}", uuid::Uuid::new_v4().simple());
    let _cleanup = Cleanup::new(provider.docker(), &cluster);
    let spec = NodeSpec {
        image: Some("corral-test-no-such-image:1".to_owned()),
        ..spec(&cluster, 1)
    };
    let error = provider.create(&spec).await.unwrap_err().to_string();
    assert!(
        error.contains("\"corral-test-no-such-image:1\" is not on this Docker engine"),
        "{error}"
    );
    assert!(containers_of(provider.docker(), &cluster).await.is_empty());
    assert!(networks_of(provider.docker(), &cluster).await.is_empty());
}

/// The attack of issue 38: a hardware type without limits (or with 0) made a container
/// with no memory, CPU or PIDs limit, so one node could take the host down (a fork bomb
/// fills the host's process table). Every node now gets the operator's defaults and a
/// PIDs limit, as `docker inspect` shows and the node's own cgroup says; a hardware
/// type asking above the operator's maximum is refused before anything is made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn docker_nodes_without_limits_get_the_operators_defaults_and_a_pids_limit() {
    use engine::provider::DockerLimits;
    let db = TestDatabase::sqlite();
    let keys = tempfile::tempdir().unwrap();
    let limits = DockerLimits::new(384, 250, 64, 512, 1000).unwrap();
    let provider = DockerProvider::connect(key_store(&db).await, keys.path())
        .await
        .unwrap()
        .with_limits(limits);
    let cluster = format!("test-{}", uuid::Uuid::new_v4().simple());
    let _cleanup = Cleanup::new(provider.docker(), &cluster);
    let pool = SessionPool::new(PoolConfig::default());
    let unlimited = |number: u32, memory_mb: Option<u64>, cpu_millis: Option<u64>| NodeSpec {
        limits: ResourceLimits {
            memory_mb,
            cpu_millis,
            ..ResourceLimits::default()
        },
        ..spec(&cluster, number)
    };
    for (number, memory, cpus) in [(1, None, None), (2, Some(0), Some(0))] {
        let record = provider
            .create(&unlimited(number, memory, cpus))
            .await
            .unwrap();
        let state: DockerNodeState = serde_json::from_value(record.provider_state.clone()).unwrap();
        let host = provider
            .docker()
            .inspect_container(&state.container, None)
            .await
            .unwrap()
            .host_config
            .unwrap();
        assert_eq!(host.memory, Some(384 * 1024 * 1024), "node {number}");
        assert_eq!(
            host.memory_swap,
            Some(384 * 1024 * 1024),
            "no swap beyond it"
        );
        assert_eq!(host.nano_cpus, Some(250_000_000), "node {number}");
        assert_eq!(host.pids_limit, Some(64), "node {number}");
        provider.confirm(&record, &pool, CONFIRM).await.unwrap();
        // The node itself cannot start more processes than its limit.
        let (code, out) = run(
            &pool,
            &record,
            "cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max",
        )
        .await;
        assert_eq!((code, out.trim()), (0, "64"), "node {number}");
        pool.close(&record.id).await;
        provider.delete(&record).await.unwrap();
    }

    let greedy = unlimited(3, Some(4096), Some(8000));
    let error = provider.create(&greedy).await.unwrap_err().to_string();
    assert!(
        error.contains("memory_mb 4096 (at most 512)") && error.contains("cpus 8 (at most 1)"),
        "{error}"
    );
    assert!(containers_of(provider.docker(), &cluster).await.is_empty());
    assert!(networks_of(provider.docker(), &cluster).await.is_empty());
}
