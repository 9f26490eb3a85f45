//! Acceptance for the demo catalog (`demo/`): each template built on `local` nodes at
//! its smallest size and a larger one, every service answering on its node (HTTP or
//! TCP), the template's constraints holding on the real layout, the cluster's links
//! expanded to live addresses, and no process left after delete.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

use crate::lab::Lab;
use engine::operations::ClusterChange;
use engine::queue::JobState;
use engine::store::clusters::Cluster;
use engine::store::Backend;
use sha2::Digest;

const JOB_LIMIT: Duration = Duration::from_secs(120);
/// Docker creates share one engine with the other docker tests running at the same
/// time; its network and container calls queue behind theirs (seen at 120 s in a full
/// run, 42 s alone). A bound on a hang, not a time the job must beat.
const DOCKER_JOB_LIMIT: Duration = Duration::from_secs(300);

/// Each node's address and services, in node-number order.
async fn layout(lab: &Lab, cluster: &Cluster) -> Vec<(String, BTreeSet<String>)> {
    let mut nodes = lab.store.list_nodes(&cluster.id).await.unwrap();
    nodes.sort_by_key(|node| node.number);
    nodes
        .into_iter()
        .map(|node| {
            let services: BTreeSet<String> = serde_json::from_str(&node.services_json).unwrap();
            (node.hostname.unwrap(), services)
        })
        .collect()
}

fn carrying<'a>(nodes: &'a [(String, BTreeSet<String>)], service: &str) -> Vec<&'a str> {
    nodes
        .iter()
        .filter(|(_, services)| services.contains(service))
        .map(|(host, _)| host.as_str())
        .collect()
}

/// Builds clusters of `template` at each size at once; returns them when all are up.
async fn build(lab: &Lab, template: &str, sizes: &[u32]) -> Vec<Cluster> {
    let mut jobs = Vec::new();
    for size in sizes {
        jobs.push(
            lab.create_from(template, &format!("{template}-{size}"), *size)
                .await,
        );
    }
    let mut clusters = Vec::new();
    for (cluster, job) in jobs {
        assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
        clusters.push(lab.store.cluster(&cluster.id).await.unwrap());
    }
    clusters
}

/// Deletes the clusters and checks that nothing of them still runs.
async fn tear_down(lab: &Lab, clusters: &[Cluster]) {
    let mut jobs = Vec::new();
    for cluster in clusters {
        jobs.push(
            lab.change(&cluster.id, ClusterChange::Delete { force: false })
                .await,
        );
    }
    for job in jobs {
        assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    }
    assert_eq!(
        lab.live_processes(),
        Vec::<i32>::new(),
        "no process is left"
    );
}

async fn links(lab: &Lab, cluster: &Cluster) -> BTreeMap<String, String> {
    let nodes = lab.store.list_nodes(&cluster.id).await.unwrap();
    engine::links::cluster_links(cluster, &nodes)
        .into_iter()
        .map(|link| (link.label, link.url))
        .collect()
}

/// The `small` hardware type's limits reach the service's process: a 1 GiB address
/// space (`memory_mb: 1024`) and nice 10.
fn assert_small_limits(lab: &Lab, cluster: &Cluster, service: &str) {
    let layout: domain::layout::Layout = serde_json::from_str(&cluster.layout_json).unwrap();
    let node = layout
        .nodes
        .iter()
        .find(|node| node.services.iter().any(|s| s.as_str() == service))
        .unwrap();
    assert_eq!(node.hardwaretype.as_str(), "small");
    let pid_file = lab
        .nodes_dir
        .join(format!("{}-{}", cluster.id, node.number))
        .join(format!("home/corral/services/{service}/pid"));
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let pid = pid.trim();
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let address_space = limits
        .lines()
        .find(|line| line.starts_with("Max address space"))
        .unwrap();
    assert!(address_space.contains("1073741824"), "{address_space}");
    // `nice -n` adds to the caller's niceness (tests may run niced themselves).
    let expected = (nice_of("self") + 10).min(19);
    assert_eq!(nice_of(pid), expected);
}

/// A process's nice value: the 19th field of /proc/PID/stat.
fn nice_of(pid: &str) -> i64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields are counted after the command's closing parenthesis (names hold spaces).
    let after = stat.rsplit_once(") ").unwrap().1;
    after.split(' ').nth(16).unwrap().parse().unwrap()
}

struct Answer {
    status: u16,
    backend: Option<String>,
    body: String,
}

async fn http(method: reqwest::Method, url: &str, body: Option<&str>) -> Answer {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let mut request = client.request(method, url);
    if let Some(body) = body {
        request = request.body(body.to_owned());
    }
    let response = request
        .send()
        .await
        .unwrap_or_else(|error| panic!("{url}: {error}"));
    let status = response.status().as_u16();
    let backend = response
        .headers()
        .get("x-corral-backend")
        .map(|value| value.to_str().unwrap().to_owned());
    Answer {
        status,
        backend,
        body: response.text().await.unwrap(),
    }
}

async fn get_ok(url: &str) -> Answer {
    let answer = http(reqwest::Method::GET, url, None).await;
    assert_eq!(answer.status, 200, "{url}: {}", answer.body);
    answer
}

/// Sends a line over TCP and returns the first answer.
fn tcp_chat(host: &str, port: u16, line: &str) -> String {
    let mut stream = std::net::TcpStream::connect((host, port))
        .unwrap_or_else(|error| panic!("{host}:{port}: {error}"));
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream.write_all(line.as_bytes()).unwrap();
    let mut buffer = [0u8; 256];
    let read = stream.read(&mut buffer).unwrap();
    String::from_utf8_lossy(&buffer[..read]).into_owned()
}

async fn web_stack_at_three_and_five_nodes(backend: Backend) {
    let lab = Lab::start_demo(backend).await;
    let clusters = build(&lab, "web-stack", &[3, 5]).await;
    for (cluster, size) in clusters.iter().zip([3usize, 5]) {
        check_web_stack(&lab, cluster, size).await;
        assert_small_limits(&lab, cluster, "lb");
    }
    tear_down(&lab, &clusters).await;
}

/// A built web-stack of `size` nodes: its constraints hold, every service answers, the
/// balancer spreads requests over every app and counts visits in kv, and its links
/// point at the balancer and kv.
async fn check_web_stack(lab: &Lab, cluster: &Cluster, size: usize) {
    let nodes = layout(lab, cluster).await;
    assert_eq!(nodes.len(), size);
    // The constraints: one lb, one kv, lb, kv and each app on nodes of their own.
    assert!(nodes.iter().all(|(_, s)| s.contains("base")), "{nodes:?}");
    let (lb, kv, apps) = (
        carrying(&nodes, "lb"),
        carrying(&nodes, "kv"),
        carrying(&nodes, "app"),
    );
    assert_eq!((lb.len(), kv.len(), apps.len()), (1, 1, size - 2));
    for (_, services) in &nodes {
        let roles = ["lb", "kv", "app"]
            .iter()
            .filter(|role| services.contains(**role))
            .count();
        assert_eq!(roles, 1, "{nodes:?}");
    }
    get_ok(&format!("http://{}:7070/health", kv[0])).await;
    for app in &apps {
        get_ok(&format!("http://{app}:8080/health")).await;
    }
    // The lb spreads requests over every app node; the visit count lives in kv.
    let mut backends = BTreeSet::new();
    for _ in 0..apps.len() * 2 {
        let page = get_ok(&format!("http://{}:8000/", lb[0])).await;
        assert!(page.body.contains("visits: "), "{}", page.body);
        backends.insert(page.backend.unwrap());
    }
    let expected: BTreeSet<String> = apps.iter().map(|app| format!("{app}:8080")).collect();
    assert_eq!(backends, expected);
    let visits = get_ok(&format!("http://{}:7070/kv/visits", kv[0])).await;
    assert_eq!(visits.body, (apps.len() * 2).to_string());
    let links = links(lab, cluster).await;
    assert_eq!(links["web site"], format!("http://{}:8000/", lb[0]));
    assert_eq!(
        links["kv leader health"],
        format!("http://{}:7070/health", kv[0])
    );
}

/// The web-stack on the demo's `docker` provider: three containers, each limited to the
/// `small` hardware type's 512 MiB, whose services answer at the addresses Docker gave
/// them (the links say which), and no container or network left after the delete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_stack_on_docker() {
    let keys = tempfile::tempdir().unwrap();
    let lab = Lab::start_demo_with_docker(Backend::Sqlite, keys.path()).await;
    let docker = lab.docker.clone().unwrap();
    let (cluster, job) = lab.create_on("docker", "web-stack", "web-docker", 3).await;
    let _cleanup = crate::docker_nodes::Cleanup::new(docker.docker(), &cluster.id);
    assert_eq!(lab.wait(&job, DOCKER_JOB_LIMIT).await, JobState::Succeeded);
    let cluster = lab.store.cluster(&cluster.id).await.unwrap();
    check_web_stack(&lab, &cluster, 3).await;
    let containers = crate::docker_nodes::containers_of(docker.docker(), &cluster.id).await;
    assert_eq!(containers.len(), 3);
    for container in &containers {
        let inspected = docker
            .docker()
            .inspect_container(container, None)
            .await
            .unwrap();
        assert_eq!(
            inspected.host_config.unwrap().memory,
            Some(512 * 1024 * 1024)
        );
    }
    tear_down(&lab, std::slice::from_ref(&cluster)).await;
    assert!(
        crate::docker_nodes::containers_of(docker.docker(), &cluster.id)
            .await
            .is_empty()
    );
    assert!(
        crate::docker_nodes::networks_of(docker.docker(), &cluster.id)
            .await
            .is_empty()
    );
}

/// kv-cluster and paas on the demo's `docker` provider, three nodes each, built at once:
/// they pass the same checks as on `local` (kv replicates from the leader, every paas
/// stand-in answers, the router spreads over the DEAs, redis and memcached speak), each
/// container carries its node's hardware-type memory limit, and after the delete no
/// container and no network of either cluster is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kv_cluster_and_paas_on_docker() {
    let keys = tempfile::tempdir().unwrap();
    let lab = Lab::start_demo_with_docker(Backend::Sqlite, keys.path()).await;
    let docker = lab.docker.clone().unwrap();
    let started = std::time::Instant::now();
    let (kv, kv_job) = lab.create_on("docker", "kv-cluster", "kv-docker", 3).await;
    let _kv_cleanup = crate::docker_nodes::Cleanup::new(docker.docker(), &kv.id);
    let (paas, paas_job) = lab.create_on("docker", "paas", "paas-docker", 3).await;
    let _paas_cleanup = crate::docker_nodes::Cleanup::new(docker.docker(), &paas.id);
    assert_eq!(
        lab.wait(&kv_job, DOCKER_JOB_LIMIT).await,
        JobState::Succeeded
    );
    assert_eq!(
        lab.wait(&paas_job, DOCKER_JOB_LIMIT).await,
        JobState::Succeeded
    );
    eprintln!(
        "kv-cluster and paas of 3 on docker: built in {:?}",
        started.elapsed()
    );
    let kv = lab.store.cluster(&kv.id).await.unwrap();
    let paas = lab.store.cluster(&paas.id).await.unwrap();
    check_kv_cluster(&lab, &kv, 3).await;
    check_paas(&lab, &paas, 3).await;
    for cluster in [&kv, &paas] {
        assert_docker_memory_limits(docker.docker(), cluster, 3).await;
    }
    let clusters = [kv, paas];
    let started = std::time::Instant::now();
    tear_down(&lab, &clusters).await;
    eprintln!("deleted in {:?}", started.elapsed());
    for cluster in &clusters {
        let containers = crate::docker_nodes::containers_of(docker.docker(), &cluster.id).await;
        assert!(
            containers.is_empty(),
            "{}: containers left {containers:?}",
            cluster.name
        );
        let networks = crate::docker_nodes::networks_of(docker.docker(), &cluster.id).await;
        assert!(
            networks.is_empty(),
            "{}: networks left {networks:?}",
            cluster.name
        );
    }
}

/// The cluster has `size` containers, and each one's memory limit is what the demo
/// catalog gives its node's hardware type on `docker` (`memory_mb`).
async fn assert_docker_memory_limits(docker: &bollard::Docker, cluster: &Cluster, size: usize) {
    let catalog: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../demo/catalog.json"))
            .unwrap(),
    )
    .unwrap();
    let memory_mb = |hardware: &str| {
        catalog["hardwaretypes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|entity| entity["name"] == hardware)
            .unwrap_or_else(|| panic!("no hardware type {hardware} in the demo catalog"))
            ["providermap"]["docker"]["memory_mb"]
            .as_i64()
            .unwrap()
    };
    let layout: domain::layout::Layout = serde_json::from_str(&cluster.layout_json).unwrap();
    let containers = crate::docker_nodes::containers_of(docker, &cluster.id).await;
    assert_eq!(containers.len(), size, "{}: {containers:?}", cluster.name);
    for node in &layout.nodes {
        let name = engine::provider::container_name(&format!("{}-{}", cluster.id, node.number));
        let inspected = docker
            .inspect_container(&name, None)
            .await
            .unwrap_or_else(|error| panic!("{}: container {name}: {error}", cluster.name));
        assert_eq!(
            inspected.host_config.unwrap().memory,
            Some(memory_mb(node.hardwaretype.as_str()) * 1024 * 1024),
            "{}: node {} ({})",
            cluster.name,
            node.number,
            node.hardwaretype.as_str()
        );
    }
}

/// The web-stack through an `exec` plugin: the demo catalog gets a provider `lab-plugin`
/// of type `exec` running `corral-test-provider` (nodes as loopback sshds of its own),
/// with the tenant's credentials the plugin checks on every call; the cluster is built,
/// its links answer, and after the delete no sshd of the plugin is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_stack_through_an_exec_plugin() {
    let keys = tempfile::tempdir().unwrap();
    let nodes = tempfile::Builder::new()
        .prefix("corral-plugin-nodes-")
        .tempdir()
        .unwrap();
    let _cleanup = crate::exec_provider::KillSshds(nodes.path().to_owned());
    let lab = Lab::start_demo_with_exec(Backend::Sqlite, keys.path()).await;
    add_plugin_provider(&lab, "lab-plugin", nodes.path(), false).await;
    let started = std::time::Instant::now();
    let (cluster, job) = lab
        .create_on("lab-plugin", "web-stack", "web-plugin", 3)
        .await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    eprintln!(
        "web-stack of 3 through the exec plugin: built in {:?}",
        started.elapsed()
    );
    let cluster = lab.store.cluster(&cluster.id).await.unwrap();
    let records: Vec<engine::provider::NodeRecord> = lab
        .store
        .list_nodes(&cluster.id)
        .await
        .unwrap()
        .iter()
        .map(|node| serde_json::from_str(node.provider_json.as_deref().unwrap()).unwrap())
        .collect();
    assert_eq!(records.len(), 3);
    assert!(records.iter().all(|record| record.provider == "exec"));
    check_web_stack(&lab, &cluster, 3).await;
    assert_eq!(crate::exec_provider::sshds_under(nodes.path()).len(), 3);
    let started = std::time::Instant::now();
    tear_down(&lab, std::slice::from_ref(&cluster)).await;
    eprintln!("deleted in {:?}", started.elapsed());
    assert_eq!(
        crate::exec_provider::sshds_under(nodes.path()),
        Vec::<i32>::new(),
        "no sshd of the plugin is left"
    );
    let left: Vec<_> = std::fs::read_dir(nodes.path())
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name())
        .filter(|name| !name.to_string_lossy().starts_with('.') && name != "last-call.json")
        .collect();
    assert!(left.is_empty(), "node directories left: {left:?}");
}

/// A user's own token for `lab-plugin` (see [`a_users_cluster_through_an_exec_plugin`]).
const USERS_PLUGIN_TOKEN: &str = "lab-plugin-token-of-alice";

/// A kv-cluster of one node owned by a user who set their own token for a provider that
/// takes users' own (`user_credentials`): the plugin, which refuses every call without
/// the user's token, builds and deletes it, so the owner reached the node's spec and
/// their credentials were chosen over the tenant's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_cluster_through_an_exec_plugin() {
    use engine::store::tenants::DEFAULT_TENANT_ID;
    let keys = tempfile::tempdir().unwrap();
    let nodes = tempfile::Builder::new()
        .prefix("corral-plugin-nodes-")
        .tempdir()
        .unwrap();
    let _cleanup = crate::exec_provider::KillSshds(nodes.path().to_owned());
    let lab = Lab::start_demo_with_exec(Backend::Sqlite, keys.path()).await;
    add_plugin_provider(&lab, "lab-plugin", nodes.path(), true).await;
    let alice = lab
        .store
        .create_user(&engine::store::users::NewUser {
            tenant_id: DEFAULT_TENANT_ID.into(),
            username: "alice".into(),
            role: engine::store::users::Role::User,
            password_hash: "x".into(),
        })
        .await
        .unwrap()
        .id;
    let own = engine::provider::Credentials::from_json(
        serde_json::json!({ "token": USERS_PLUGIN_TOKEN }),
    )
    .unwrap();
    let catalog = engine::catalog::load(&lab.store, DEFAULT_TENANT_ID)
        .await
        .unwrap();
    let binding = engine::provider::binding::of_catalog(&catalog, "lab-plugin").unwrap();
    lab.store
        .set_user_provider_credentials(
            DEFAULT_TENANT_ID,
            &alice,
            "lab-plugin",
            &binding,
            &own,
            None,
            engine::store::now_ms(),
        )
        .await
        .unwrap();
    let (cluster, job) = lab
        .create_owned_on(
            "lab-plugin",
            "kv-cluster",
            "kv-alice",
            1,
            Some(alice.clone()),
        )
        .await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let cluster = lab.store.cluster(&cluster.id).await.unwrap();
    let nodes_made = lab.store.list_nodes(&cluster.id).await.unwrap();
    assert_eq!(nodes_made.len(), 1);
    let record: engine::provider::NodeRecord =
        serde_json::from_str(nodes_made[0].provider_json.as_deref().unwrap()).unwrap();
    let state: engine::provider::ExecNodeState =
        serde_json::from_value(record.provider_state).unwrap();
    assert_eq!(state.credentials_user.as_deref(), Some(alice.as_str()));
    tear_down(&lab, std::slice::from_ref(&cluster)).await;
    assert_eq!(
        crate::exec_provider::sshds_under(nodes.path()),
        Vec::<i32>::new(),
        "no sshd of the plugin is left"
    );
}

/// Adds the catalog provider `name` of type `exec` (the test plugin, keeping nodes in
/// `nodes`, requiring a token) with the `local` provider's hardware and image mappings,
/// and sets the tenant's token for it. With `users_own`, the provider takes users' own
/// credentials and the plugin accepts only [`USERS_PLUGIN_TOKEN`].
async fn add_plugin_provider(lab: &Lab, name: &str, nodes: &std::path::Path, users_own: bool) {
    use engine::store::tenants::DEFAULT_TENANT_ID;
    let token = "lab-plugin-token";
    let expected = if users_own { USERS_PLUGIN_TOKEN } else { token };
    let digest: String = sha2::Sha256::digest(expected.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let mut bundle = engine::catalog::export(&lab.store, DEFAULT_TENANT_ID)
        .await
        .unwrap();
    bundle["providers"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "name": name,
            "description": "nodes made by the corral-test-provider plugin",
            "providertype": "exec",
            "provisioner": {
                "plugin": "corral-test-provider",
                "nodes_dir": nodes.display().to_string(),
                "expect_token_sha256": digest,
                "user_credentials": users_own,
            },
        }));
    for kind in ["hardwaretypes", "imagetypes"] {
        for entity in bundle[kind].as_array_mut().unwrap() {
            let local = entity["providermap"]["local"].clone();
            entity["providermap"][name] = local;
        }
    }
    let catalog = domain::catalog::coopr::import_bundle_value(bundle).unwrap();
    let report = engine::catalog::import(
        &lab.store,
        DEFAULT_TENANT_ID,
        &catalog,
        None,
        engine::store::now_ms(),
    )
    .await
    .unwrap();
    assert!(!report.has_errors(), "{report}");
    let credentials =
        engine::provider::Credentials::from_json(serde_json::json!({ "token": token })).unwrap();
    lab.store
        .set_provider_credentials(
            DEFAULT_TENANT_ID,
            name,
            &credentials,
            None,
            engine::store::now_ms(),
        )
        .await
        .unwrap();
}

async fn kv_cluster_at_one_and_three_nodes(backend: Backend) {
    let lab = Lab::start_demo(backend).await;
    let clusters = build(&lab, "kv-cluster", &[1, 3]).await;
    for (cluster, size) in clusters.iter().zip([1usize, 3]) {
        check_kv_cluster(&lab, cluster, size).await;
    }
    tear_down(&lab, &clusters).await;
}

/// A built kv-cluster of `size` nodes: kv on every node, the first leads and the others
/// follow, a write to the last node reaches every node, and the link names the leader.
async fn check_kv_cluster(lab: &Lab, cluster: &Cluster, size: usize) {
    let nodes = layout(lab, cluster).await;
    let kv = carrying(&nodes, "kv");
    assert_eq!(kv.len(), size, "kv on every node: {nodes:?}");
    let leader = kv[0];
    let mut roles = Vec::new();
    for host in &kv {
        let health = get_ok(&format!("http://{host}:7070/health")).await;
        let health: serde_json::Value = serde_json::from_str(&health.body).unwrap();
        roles.push(health["role"].as_str().unwrap().to_owned());
    }
    assert_eq!(roles[0], "leader");
    assert!(
        roles[1..].iter().all(|role| role == "follower"),
        "{roles:?}"
    );
    // A write to the last node (a follower when there are several) reaches the
    // leader and every follower.
    let put = http(
        reqwest::Method::PUT,
        &format!("http://{}:7070/kv/greeting", kv[size - 1]),
        Some("hello"),
    )
    .await;
    assert_eq!(put.status, 200, "{}", put.body);
    for host in &kv {
        let mut value = String::new();
        for _ in 0..50 {
            let answer = http(
                reqwest::Method::GET,
                &format!("http://{host}:7070/kv/greeting"),
                None,
            )
            .await;
            value = answer.body;
            if answer.status == 200 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(value, "hello", "replicated to {host}");
    }
    let links = links(lab, cluster).await;
    assert_eq!(links["kv leader"], format!("http://{leader}:7070/health"));
}

/// Each paas role and the port it answers on.
const PAAS_HTTP_ROLES: &[(&str, u16)] = &[
    ("primary", 9001),
    ("controller", 9002),
    ("health-manager", 9003),
    ("stager", 9004),
    ("filesystem", 9005),
    ("mysql", 13306),
    ("postgresql", 15432),
    ("mongodb", 17017),
    ("rabbit", 15672),
];

async fn paas_at_one_and_three_nodes(backend: Backend) {
    let lab = Lab::start_demo(backend).await;
    let clusters = build(&lab, "paas", &[1, 3]).await;
    for (cluster, size) in clusters.iter().zip([1usize, 3]) {
        check_paas(&lab, cluster, size).await;
    }
    tear_down(&lab, &clusters).await;
}

/// A built paas of `size` nodes: one core node (primary, controller, health manager),
/// the single-instance roles once each, more nodes adding DEAs, every stand-in answering
/// as its role, each router spreading over every DEA, redis and memcached speaking their
/// protocols, and the link naming the router.
async fn check_paas(lab: &Lab, cluster: &Cluster, size: usize) {
    let nodes = layout(lab, cluster).await;
    assert_eq!(nodes.len(), size);
    assert!(nodes.iter().all(|(_, s)| s.contains("base")), "{nodes:?}");
    // One core node: primary with the controller and health manager beside it.
    let primary = carrying(&nodes, "primary");
    assert_eq!(primary.len(), 1, "{nodes:?}");
    assert_eq!(carrying(&nodes, "controller"), primary);
    assert_eq!(carrying(&nodes, "health-manager"), primary);
    assert!(!carrying(&nodes, "router").is_empty());
    assert!(!carrying(&nodes, "dea").is_empty());
    for single in [
        "stager",
        "mysql",
        "postgresql",
        "redis",
        "mongodb",
        "filesystem",
    ] {
        assert_eq!(carrying(&nodes, single).len(), 1, "{single}: {nodes:?}");
    }
    if size == 1 {
        assert_eq!(nodes[0].1.len(), 14, "everything on one node: {nodes:?}");
    } else {
        assert!(
            nodes[1..].iter().all(|(_, s)| s.contains("dea")),
            "more nodes add DEAs: {nodes:?}"
        );
    }
    for (role, port) in PAAS_HTTP_ROLES {
        for host in carrying(&nodes, role) {
            let answer = get_ok(&format!("http://{host}:{port}/")).await;
            let answer: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
            assert_eq!(answer["role"], *role);
            assert_eq!(answer["standin"], true, "stand-ins say so");
        }
    }
    let deas: BTreeSet<String> = carrying(&nodes, "dea")
        .iter()
        .map(|host| format!("{host}:9100"))
        .collect();
    for host in carrying(&nodes, "router") {
        let mut seen = BTreeSet::new();
        for _ in 0..deas.len() * 2 {
            let page = get_ok(&format!("http://{host}:9080/")).await;
            assert!(page.body.contains("dea on cluster"), "{}", page.body);
            seen.insert(page.backend.unwrap());
        }
        assert_eq!(seen, deas, "the router spreads over every DEA");
    }
    for host in carrying(&nodes, "redis") {
        assert!(tcp_chat(host, 16379, "PING\r\n").starts_with("+PONG"));
    }
    for host in carrying(&nodes, "memcached") {
        assert!(tcp_chat(host, 11211, "version\r\n").starts_with("VERSION"));
    }
    let links = links(lab, cluster).await;
    let router = carrying(&nodes, "router")[0];
    assert_eq!(links["paas router"], format!("http://{router}:9080/"));
}

async fn kv_automated_at_three_nodes(backend: Backend) {
    let lab = Lab::start_demo(backend).await;
    let clusters = build(&lab, "kv-automated", &[3]).await;
    check_kv_automated(&lab, &clusters[0], 3).await;
    tear_down(&lab, &clusters).await;
}

/// kv-automated on the demo's `docker` provider, in a tenant that may not have `local`
/// nodes: Ansible's controller runs confined and reaches the containers with their
/// pinned keys through its relay, Puppet runs inside them, and the links answer at the
/// addresses Docker gave them; nothing is left after the delete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kv_automated_on_docker() {
    let keys = tempfile::tempdir().unwrap();
    let lab = Lab::start_demo_with_docker(Backend::Sqlite, keys.path()).await;
    let docker = lab.docker.clone().unwrap();
    let tenant = lab
        .store
        .create_tenant(&engine::store::tenants::NewTenant {
            name: "docker-only".to_owned(),
            max_clusters: None,
            max_nodes: None,
            provider_types: vec!["docker".to_owned()],
        })
        .await
        .unwrap();
    let now = engine::store::now_ms();
    engine::demo::load_if_empty(&lab.store, &lab.resource_files(), &tenant.id, now)
        .await
        .unwrap();
    let (cluster, job) = lab
        .create_in_on(
            &tenant.id,
            "docker",
            "kv-automated",
            "kv-automated-docker",
            3,
            None,
        )
        .await;
    let _cleanup = crate::docker_nodes::Cleanup::new(docker.docker(), &cluster.id);
    assert_eq!(lab.wait(&job, DOCKER_JOB_LIMIT).await, JobState::Succeeded);
    let cluster = lab.store.cluster(&cluster.id).await.unwrap();
    check_kv_automated(&lab, &cluster, 3).await;
    tear_down(&lab, std::slice::from_ref(&cluster)).await;
    assert!(
        crate::docker_nodes::containers_of(docker.docker(), &cluster.id)
            .await
            .is_empty()
    );
}

/// A built kv-automated of `size` nodes: the playbook's kv servers answer (the first
/// leads, the rest follow), the manifest's balancer spreads requests over all of them,
/// and the links answer.
async fn check_kv_automated(lab: &Lab, cluster: &Cluster, size: usize) {
    let nodes = layout(lab, cluster).await;
    let (lb, kv) = (
        carrying(&nodes, "lb-puppet"),
        carrying(&nodes, "kv-ansible"),
    );
    assert_eq!((lb.len(), kv.len()), (1, size - 1), "{nodes:?}");
    let mut roles = Vec::new();
    for host in &kv {
        let health = get_ok(&format!("http://{host}:7070/health")).await;
        let health: serde_json::Value = serde_json::from_str(&health.body).unwrap();
        roles.push(health["role"].as_str().unwrap().to_owned());
    }
    assert_eq!(roles[0], "leader", "{roles:?}");
    assert!(
        roles[1..].iter().all(|role| role == "follower"),
        "{roles:?}"
    );
    let mut backends = BTreeSet::new();
    for _ in 0..kv.len() * 2 {
        let answer = get_ok(&format!("http://{}:8000/health", lb[0])).await;
        backends.insert(answer.backend.unwrap());
    }
    let expected: BTreeSet<String> = kv.iter().map(|host| format!("{host}:7070")).collect();
    assert_eq!(backends, expected);
    let links = links(lab, cluster).await;
    assert_eq!(
        links["kv through the balancer"],
        format!("http://{}:8000/health", lb[0])
    );
    for url in links.values() {
        get_ok(url).await;
    }
}

engine::on_both_backends!(
    web_stack_at_three_and_five_nodes,
    kv_cluster_at_one_and_three_nodes,
    paas_at_one_and_three_nodes,
    kv_automated_at_three_nodes
);

/// Healing (issue 40 point 4) on the demo's `docker` provider: a web-stack of 4 whose
/// template turns healing on. `docker rm -f` of an app node's container gets the node
/// replaced by a heal job within the heal time and a minute; the balancer then sends
/// to the successor and the removed node is gone from the cluster, and the audit log
/// names the heal. Removing both app containers (2 of 4 nodes, above 40 %) replaces
/// nothing, and the cluster's heal note says why; the nodes' rows say which machines
/// are gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_container_is_healed_and_too_many_are_not() {
    use engine::store::tenants::DEFAULT_TENANT_ID;
    let keys = tempfile::tempdir().unwrap();
    let lab = Lab::start_demo_with_docker(Backend::Sqlite, keys.path()).await;
    let docker = lab.docker.clone().unwrap();
    let mut bundle: serde_json::Value = serde_json::from_str(engine::demo::CATALOG_JSON).unwrap();
    for template in bundle["clustertemplates"].as_array_mut().unwrap() {
        if template["name"] == "web-stack" {
            template["administration"]["healing"] =
                serde_json::json!({"enabled": true, "heal_after": "30s", "max_unhealthy": 40});
        }
    }
    let catalog = domain::catalog::coopr::import_bundle_value(bundle).unwrap();
    let report = engine::catalog::import(
        &lab.store,
        DEFAULT_TENANT_ID,
        &catalog,
        None,
        engine::store::now_ms(),
    )
    .await
    .unwrap();
    assert!(!report.has_errors(), "{report}");
    let (cluster, job) = lab.create_on("docker", "web-stack", "healing", 4).await;
    let _cleanup = crate::docker_nodes::Cleanup::new(docker.docker(), &cluster.id);
    assert_eq!(lab.wait(&job, DOCKER_JOB_LIMIT).await, JobState::Succeeded);
    let numbers_running = |service: &'static str| {
        let lab = &lab;
        let id = cluster.id.clone();
        async move {
            let mut nodes = lab.store.list_nodes(&id).await.unwrap();
            nodes.sort_by_key(|node| node.number);
            nodes
                .into_iter()
                .filter(|node| node.services_json.contains(&format!("\"{service}\"")))
                .map(|node| node.number)
                .collect::<Vec<i64>>()
        }
    };
    let remove = |number: i64| {
        let docker = docker.clone();
        let container = engine::provider::container_name(&format!("{}-{number}", cluster.id));
        async move {
            docker
                .docker()
                .remove_container(
                    &container,
                    Some(bollard::query_parameters::RemoveContainerOptions {
                        force: true,
                        ..Default::default()
                    }),
                )
                .await
                .unwrap();
        }
    };
    let apps = numbers_running("app").await;
    assert_eq!(apps.len(), 2);
    let removed = apps[0];
    let started = Instant::now();
    remove(removed).await;

    // Within the heal time and a minute, a heal job replaces the node and succeeds.
    let heal_job = loop {
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "no heal job within 90 s"
        );
        let jobs = lab.queue.cluster_jobs(&cluster.id).await.unwrap();
        if let Some(heal) = jobs
            .iter()
            .find(|job| job.operation == api_types::Operation::ReplaceNodes)
        {
            break heal.id.clone();
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(
        lab.wait(&heal_job, DOCKER_JOB_LIMIT).await,
        JobState::Succeeded
    );
    eprintln!("healed in {:?}", started.elapsed());
    let apps_now = numbers_running("app").await;
    assert_eq!(apps_now.len(), 2, "{apps_now:?}");
    assert!(!apps_now.contains(&removed), "{apps_now:?}");
    let cluster_now = lab.store.cluster(&cluster.id).await.unwrap();
    check_web_stack(&lab, &cluster_now, 4).await;
    let note = lab.store.heal_note(&cluster.id).await.unwrap().unwrap().0;
    assert!(
        note.starts_with(&format!("replacing node {removed} ({removed} is gone)")),
        "{note}"
    );
    let audit = lab
        .store
        .audit_entries(&engine::store::audit::AuditFilter {
            tenant_id: Some(DEFAULT_TENANT_ID.to_owned()),
            action_prefix: Some("cluster.heal".to_owned()),
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0].actor_name, engine::heal::HEALER);

    // Both app containers at once: 2 of 4 nodes is above 40 %, so nothing is replaced.
    for number in &apps_now {
        remove(*number).await;
    }
    let said = Instant::now();
    let note = loop {
        assert!(
            said.elapsed() < Duration::from_secs(60),
            "no heal note within 60 s"
        );
        let note = lab.store.heal_note(&cluster.id).await.unwrap().unwrap().0;
        if note.starts_with("2 of 4 nodes are unhealthy") {
            break note;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert!(note.contains("more than the 40%"), "{note}");
    // What the provider said is on the nodes' rows: the removed containers are gone,
    // the others present.
    let nodes = lab.store.list_nodes(&cluster.id).await.unwrap();
    for node in &nodes {
        let expected = if apps_now.contains(&node.number) {
            api_types::NodePresence::Gone
        } else {
            api_types::NodePresence::Present
        };
        assert_eq!(node.presence, Some(expected), "{node:?}");
    }
    // A few more heal rounds: still no new job.
    tokio::time::sleep(engine::heal::EVERY * 3).await;
    let jobs = lab.queue.cluster_jobs(&cluster.id).await.unwrap();
    assert_eq!(
        jobs.iter()
            .filter(|job| job.operation == api_types::Operation::ReplaceNodes)
            .count(),
        1,
        "{jobs:?}"
    );
    let job = lab
        .change(&cluster.id, ClusterChange::Delete { force: true })
        .await;
    assert_eq!(lab.wait(&job, DOCKER_JOB_LIMIT).await, JobState::Succeeded);
}
