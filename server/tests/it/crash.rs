//! Crash test: a 20-node create, its upgrade, a heal of three dead nodes and its delete
//! run by a real `corral serve` that is killed with SIGKILL at several points and
//! restarted. Every job must complete, no task may have run twice
//! at once (nor two tasks on one node), and none may be lost. A docker variant kills the
//! server mid-create of a web-stack on containers and checks they are adopted.

use std::time::{Duration, Instant};

use domain::names::{ClusterName, ProviderName, TemplateName};
use domain::solver::SolveRequest;
use engine::operations::{create_cluster, submit_change, ClusterChange, CreateRequest};
use engine::provider::LocalProvider;
use engine::queue::{JobId, JobState, Queue, SubmitOptions};
use engine::store::tenants::DEFAULT_TENANT_ID;
use engine::store::{now_ms, Backend, Store};
use engine::testing::TestDatabase;

use crate::support::chaos::{
    check_attempt_log, wait_for_end, wait_for_end_within, wait_for_progress, Process, Role,
};
use crate::support::{docker, lifecycle};

const NODES: u32 = 20;

async fn killed_server_loses_no_task(backend: Backend) {
    let db = TestDatabase::new(backend).await;
    let data = tempfile::Builder::new()
        .prefix("corral-crash-")
        .tempdir()
        .unwrap();
    let data_dir = data.path().canonicalize().unwrap();
    let store = Store::open(&db.url).await.unwrap();
    let queue = Queue::new(store.clone());
    lifecycle::seed(&store, &data_dir, &lifecycle::catalog()).await;
    let mut server = Process::new("server", Role::Serve, data_dir.clone(), db.url.clone());
    server.start();

    let request = CreateRequest {
        tenant_id: DEFAULT_TENANT_ID.to_owned(),
        owner_id: None,
        name: ClusterName::parse("crash").unwrap(),
        template: TemplateName::parse("lifecycle").unwrap(),
        solve: SolveRequest::of_size(NODES),
        config: serde_json::Map::new(),
    };
    let (cluster, create) = create_cluster(&queue, &request, SubmitOptions::default(), now_ms())
        .await
        .unwrap();
    for fraction in [0.15, 0.4, 0.7] {
        wait_for_progress(&queue, &create, fraction).await;
        server.kill();
        server.start();
    }
    assert_eq!(wait_for_end(&queue, &create).await, JobState::Succeeded);
    check_attempt_log(&queue, &create).await;
    assert_eq!(
        store.list_nodes(&cluster.id).await.unwrap().len(),
        NODES as usize
    );

    // An upgrade is killed once too: it finishes, and the cluster keeps the new
    // definitions (the admin changed the workers' start).
    let mut catalog = lifecycle::catalog();
    // Healing on as well, for the heal below (nothing is unhealthy yet).
    catalog["clustertemplates"][0]["administration"]["healing"] =
        serde_json::json!({"enabled": true, "heal_after": "1h", "max_unhealthy": 40});
    for service in catalog["services"].as_array_mut().unwrap() {
        if service["name"] == "worker" {
            let start = &mut service["provisioner"]["actions"]["start"]["fields"]["run"];
            *start = format!("{}; echo worker release 2", start.as_str().unwrap()).into();
        }
    }
    let catalog = domain::catalog::coopr::import_bundle(&catalog.to_string()).unwrap();
    engine::catalog::import(&store, DEFAULT_TENANT_ID, &catalog, None, now_ms())
        .await
        .unwrap();
    let upgrade = submit_change(
        &queue,
        &cluster.id,
        &ClusterChange::Upgrade { max_unavailable: 4 },
        None,
        SubmitOptions::default(),
        now_ms(),
    )
    .await
    .unwrap();
    wait_for_progress(&queue, &upgrade, 0.3).await;
    server.kill();
    server.start();
    assert_eq!(wait_for_end(&queue, &upgrade).await, JobState::Succeeded);
    check_attempt_log(&queue, &upgrade).await;
    assert!(store
        .catalog_snapshot(&cluster.id)
        .await
        .unwrap()
        .contains("worker release 2"));

    // A heal is killed once too: three nodes' machines die (their sshd is killed), the
    // monitor replaces them, and the replacement finishes after the restart.
    let mut nodes = store.list_nodes(&cluster.id).await.unwrap();
    nodes.sort_by_key(|node| node.number);
    let dead: Vec<i64> = nodes.iter().take(3).map(|node| node.number).collect();
    for node in nodes.iter().take(3) {
        let record: serde_json::Value =
            serde_json::from_str(node.provider_json.as_deref().unwrap()).unwrap();
        let pid = record["provider_state"]["pid"].as_i64().unwrap();
        let killed = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
    }
    let heal = {
        let started = Instant::now();
        loop {
            let jobs = queue.cluster_jobs(&cluster.id).await.unwrap();
            if let Some(heal) = jobs
                .iter()
                .find(|job| job.operation == api_types::Operation::ReplaceNodes)
            {
                break heal.id.clone();
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "no heal job within 60 s"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    wait_for_progress(&queue, &heal, 0.3).await;
    server.kill();
    server.start();
    assert_eq!(wait_for_end(&queue, &heal).await, JobState::Succeeded);
    check_attempt_log(&queue, &heal).await;
    let after: Vec<i64> = store
        .list_nodes(&cluster.id)
        .await
        .unwrap()
        .iter()
        .map(|node| node.number)
        .collect();
    assert_eq!(after.len(), NODES as usize, "{after:?}");
    assert!(
        dead.iter().all(|number| !after.contains(number)),
        "{after:?}"
    );

    // The delete is killed once too, and still takes everything down.
    let delete = submit_change(
        &queue,
        &cluster.id,
        &ClusterChange::Delete { force: false },
        None,
        SubmitOptions::default(),
        now_ms(),
    )
    .await
    .unwrap();
    wait_for_progress(&queue, &delete, 0.3).await;
    server.kill();
    server.start();
    assert_eq!(wait_for_end(&queue, &delete).await, JobState::Succeeded);
    check_attempt_log(&queue, &delete).await;
    assert_eq!(
        LocalProvider::processes_under(&data_dir.join("nodes")),
        Vec::<i32>::new(),
        "no node process is left"
    );
    server.kill();
    store.close().await;
    drop(server);
    drop(data);
}

/// A hook's `job.succeeded` survives a SIGKILL of the server: the job ends while the
/// receiver is down (its delivery is written with the job's end, then refused), the
/// server is killed, the receiver comes up, and the restarted server delivers the event
/// once, with the delivery id stored at the job's end.
async fn killed_server_still_delivers_hook_events(backend: Backend) {
    use std::sync::{Arc, Mutex};
    let db = TestDatabase::new(backend).await;
    let data = tempfile::Builder::new()
        .prefix("corral-crash-hooks-")
        .tempdir()
        .unwrap();
    let data_dir = data.path().canonicalize().unwrap();
    let store = Store::open(&db.url).await.unwrap();
    let queue = Queue::new(store.clone());
    lifecycle::seed(&store, &data_dir, &lifecycle::catalog()).await;
    // The receiver's port, with nothing listening on it yet; loopback is allowed for
    // hooks of the servers this test starts.
    let parked = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = parked.local_addr().unwrap();
    drop(parked);
    let mut server = Process::new("server", Role::Serve, data_dir.clone(), db.url.clone())
        .with_env("CORRAL_HOOK_ALLOW", "127.0.0.0/8");
    server.start();
    // The server made its secret key at start: seal the hook's secret with it.
    let keyed = store
        .clone()
        .with_secret_key(engine::secrets::SecretKey::load(&data_dir).unwrap());
    let hook = engine::store::hooks::Hook {
        id: uuid::Uuid::new_v4().to_string(),
        tenant_id: DEFAULT_TENANT_ID.to_owned(),
        url: format!("http://{address}/corral"),
        events: vec![api_types::HookEvent::JobSucceeded],
        gates: Vec::new(),
        format: api_types::HookFormat::Json,
        timeout_ms: 2_000,
        on_failure: api_types::GateFailurePolicy::Refuse,
        created_by: None,
        created_at_ms: now_ms(),
    };
    keyed.insert_hook(&hook, "crash-secret").await.unwrap();

    let request = CreateRequest {
        tenant_id: DEFAULT_TENANT_ID.to_owned(),
        owner_id: None,
        name: ClusterName::parse("hooked").unwrap(),
        template: TemplateName::parse("lifecycle").unwrap(),
        solve: SolveRequest::of_size(2),
        config: serde_json::Map::new(),
    };
    let (_, create) = create_cluster(&queue, &request, SubmitOptions::default(), now_ms())
        .await
        .unwrap();
    assert_eq!(wait_for_end(&queue, &create).await, JobState::Succeeded);
    server.kill();
    let window = engine::store::Window {
        offset: 0,
        limit: 10,
    };
    let (deliveries, _) = keyed.deliveries_window(&hook.id, window).await.unwrap();
    assert_eq!(deliveries.len(), 1, "written with the job's end");
    let delivery_id = deliveries[0].id.clone();

    let got: Arc<Mutex<Vec<String>>> = Arc::default();
    let router = axum::Router::new().fallback({
        let got = got.clone();
        move |headers: axum::http::HeaderMap| {
            let got = got.clone();
            async move {
                let id = headers
                    .get("Corral-Delivery")
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                got.lock().unwrap().push(id);
                "ok"
            }
        }
    });
    let listener = tokio::net::TcpListener::bind(address).await.unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    server.start();
    // Due again after its backoff, or after the claim of a send the kill cut short.
    let started = Instant::now();
    while got.lock().unwrap().is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "never delivered after the restart"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    eprintln!(
        "hook event delivered {:?} after the restart",
        started.elapsed()
    );
    // Delivered: nothing more comes.
    let done = Instant::now();
    loop {
        let delivery = keyed.delivery(&delivery_id).await.unwrap();
        if delivery.state == api_types::DeliveryState::Delivered {
            break;
        }
        assert!(done.elapsed() < Duration::from_secs(30), "{delivery:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(*got.lock().unwrap(), vec![delivery_id], "once, with its id");
    server.kill();
    store.close().await;
    drop(server);
    drop(data);
}

/// A 3-node web-stack on the demo's `docker` provider, the server killed with SIGKILL
/// once a container is recorded for a node but the create has not finished: the next
/// start adopts the containers made before the kill (same container ids, none made
/// twice), finishes the job, and the delete leaves no container and no network.
#[tokio::test(flavor = "multi_thread")]
async fn killed_server_adopts_docker_containers() {
    let test_started = Instant::now();
    // Before the server: locals drop in reverse order, so the server is killed first.
    let mut cleanup = docker::Cleanup::default();
    let db = TestDatabase::new(Backend::Sqlite).await;
    let data = tempfile::Builder::new()
        .prefix("corral-crash-docker-")
        .tempdir()
        .unwrap();
    let data_dir = data.path().canonicalize().unwrap();
    let store = Store::open(&db.url).await.unwrap();
    let queue = Queue::new(store.clone());
    let mut server = Process::new("server", Role::Serve, data_dir.clone(), db.url.clone());
    // The first start loads the demo catalog (providers local and docker) into the
    // empty default tenant.
    server.start();
    assert!(
        !engine::catalog::load(&store, DEFAULT_TENANT_ID)
            .await
            .unwrap()
            .is_empty(),
        "the first start loaded the demo catalog"
    );

    let mut solve = SolveRequest::of_size(3);
    solve.provider = Some(ProviderName::parse("docker").unwrap());
    let request = CreateRequest {
        tenant_id: DEFAULT_TENANT_ID.to_owned(),
        owner_id: None,
        name: ClusterName::parse("crash-docker").unwrap(),
        template: TemplateName::parse("web-stack").unwrap(),
        solve,
        config: serde_json::Map::new(),
    };
    let (cluster, create) = create_cluster(&queue, &request, SubmitOptions::default(), now_ms())
        .await
        .unwrap();
    cleanup.watch(&cluster.id);

    // Kill as soon as a node has its container recorded (the provider made it and the
    // store holds its record), while the job is still running.
    let deadline = Instant::now() + Duration::from_secs(60);
    let recorded = loop {
        let recorded: Vec<i64> = store
            .list_nodes(&cluster.id)
            .await
            .unwrap()
            .iter()
            .filter(|node| node.provider_json.is_some())
            .map(|node| node.number)
            .collect();
        if !recorded.is_empty() {
            break recorded;
        }
        let job = queue.job(&create).await.unwrap();
        assert!(
            job.state.is_active(),
            "the create ended {} before any node was recorded: {:?}",
            job.state,
            job.error
        );
        assert!(
            Instant::now() < deadline,
            "no node recorded within 60 s: {job:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    server.kill();
    let job = queue.job(&create).await.unwrap();
    assert!(
        job.state.is_active(),
        "the kill came after the create ended ({}): nothing was tested",
        job.state
    );
    let before = docker::containers(&cluster.id);
    assert!(!before.is_empty(), "a container exists at the kill");
    eprintln!(
        "killed with {} container(s), node(s) {recorded:?} recorded, {}/{} tasks done",
        before.len(),
        job.tasks_succeeded,
        job.tasks_total
    );

    let restarted = Instant::now();
    server.start();
    let state = wait_for_end_within(&queue, &create, Duration::from_secs(60)).await;
    let finished_after = restarted.elapsed();
    assert_eq!(state, JobState::Succeeded);
    eprintln!("the create finished {finished_after:?} after the restart");
    check_attempt_log(&queue, &create).await;

    // Exactly one running container per node, and the nodes recorded before the kill
    // kept their containers: adopted, not made again.
    let nodes = store.list_nodes(&cluster.id).await.unwrap();
    assert_eq!(nodes.len(), 3);
    let after = docker::containers(&cluster.id);
    let mut expected: Vec<String> = nodes
        .iter()
        .map(|node| format!("corral-node-{}-{}", cluster.id, node.number))
        .collect();
    expected.sort();
    let names: Vec<String> = after.iter().map(|c| c.name.clone()).collect();
    assert_eq!(names, expected, "one container per node, none duplicated");
    assert!(after.iter().all(|c| c.state == "running"), "{after:?}");
    for number in &recorded {
        let name = format!("corral-node-{}-{number}", cluster.id);
        let old = before.iter().find(|c| c.name == name).unwrap();
        let new = after.iter().find(|c| c.name == name).unwrap();
        assert_eq!(
            old.id, new.id,
            "node {number}'s container was replaced, not adopted"
        );
    }
    for container in &after {
        assert_eq!(
            docker::memory_limit(&container.id),
            docker::demo_memory_bytes("small"),
            "{}",
            container.name
        );
    }
    assert_eq!(docker::networks(&cluster.id).len(), 1, "one network");

    let delete = submit_change(
        &queue,
        &cluster.id,
        &ClusterChange::Delete { force: false },
        None,
        SubmitOptions::default(),
        now_ms(),
    )
    .await
    .unwrap();
    assert_eq!(
        wait_for_end_within(&queue, &delete, Duration::from_secs(30)).await,
        JobState::Succeeded
    );
    assert_eq!(
        docker::containers(&cluster.id),
        Vec::new(),
        "no container is left"
    );
    assert_eq!(
        docker::networks(&cluster.id),
        Vec::<String>::new(),
        "no network is left"
    );
    server.kill();
    store.close().await;
    eprintln!("docker crash test: {:?} in all", test_started.elapsed());
    drop(server);
    drop(data);
}

/// A rollout survives SIGKILL (issue 40): two lifecycle clusters behind the catalog, a
/// rollout of one at a time started from its rows, the server killed while the first
/// upgrade runs and started again. The restarted server resumes it: both clusters are
/// upgraded, each by exactly one upgrade job, one after the other.
async fn killed_server_resumes_a_rollout(backend: Backend) {
    use api_types::{RolloutClusterState, RolloutState};
    use engine::store::rollouts::Rollout;
    use engine::store::users::{NewUser, Role as UserRole};

    let db = TestDatabase::new(backend).await;
    let data = tempfile::Builder::new()
        .prefix("corral-crash-rollout-")
        .tempdir()
        .unwrap();
    let data_dir = data.path().canonicalize().unwrap();
    let store = Store::open(&db.url).await.unwrap();
    let queue = Queue::new(store.clone());
    lifecycle::seed(&store, &data_dir, &lifecycle::catalog()).await;
    let admin = store
        .create_user(&NewUser {
            tenant_id: DEFAULT_TENANT_ID.to_owned(),
            username: "rollout-admin".to_owned(),
            role: UserRole::TenantAdmin,
            password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA"
                .to_owned(),
        })
        .await
        .unwrap();
    let mut server = Process::new("server", Role::Serve, data_dir.clone(), db.url.clone());
    server.start();
    let mut clusters = Vec::new();
    for name in ["roll-a", "roll-b"] {
        let request = CreateRequest {
            tenant_id: DEFAULT_TENANT_ID.to_owned(),
            owner_id: None,
            name: ClusterName::parse(name).unwrap(),
            template: TemplateName::parse("lifecycle").unwrap(),
            solve: SolveRequest::of_size(3),
            config: serde_json::Map::new(),
        };
        let (cluster, create) =
            create_cluster(&queue, &request, SubmitOptions::default(), now_ms())
                .await
                .unwrap();
        assert_eq!(wait_for_end(&queue, &create).await, JobState::Succeeded);
        clusters.push(cluster.id);
    }
    // The workers' start changes, and takes a few seconds: a kill lands mid-upgrade.
    let mut catalog = lifecycle::catalog();
    for service in catalog["services"].as_array_mut().unwrap() {
        if service["name"] == "worker" {
            let start = &mut service["provisioner"]["actions"]["start"]["fields"]["run"];
            *start = format!("sleep 3; {}", start.as_str().unwrap()).into();
        }
    }
    let catalog = domain::catalog::coopr::import_bundle(&catalog.to_string()).unwrap();
    engine::catalog::import(&store, DEFAULT_TENANT_ID, &catalog, None, now_ms())
        .await
        .unwrap();
    let now = now_ms();
    let rollout = Rollout {
        id: "crash-rollout".to_owned(),
        tenant_id: DEFAULT_TENANT_ID.to_owned(),
        template: "lifecycle".to_owned(),
        max_parallel: 1,
        state: RolloutState::Running,
        reason: None,
        created_by: admin.id.clone(),
        created_at_ms: now,
        updated_at_ms: now,
    };
    let rows: Vec<_> = clusters
        .iter()
        .map(|id| (id.clone(), RolloutClusterState::Pending))
        .collect();
    store.create_rollout(&rollout, &rows).await.unwrap();

    // Killed once the first cluster's upgrade job is recorded and running.
    let deadline = Instant::now() + Duration::from_secs(120);
    let first_job = loop {
        let rows = store.rollout_clusters(&rollout.id).await.unwrap();
        if let Some(job) = &rows[0].job_id {
            break JobId::from(job.as_str());
        }
        assert!(
            Instant::now() < deadline,
            "the rollout never started: {rows:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    wait_for_progress(&queue, &first_job, 0.2).await;
    server.kill();
    server.start();

    let deadline = Instant::now() + Duration::from_secs(300);
    let ended = loop {
        let ended = store.rollout(DEFAULT_TENANT_ID, &rollout.id).await.unwrap();
        if !ended.state.is_active() {
            break ended;
        }
        assert!(
            Instant::now() < deadline,
            "the rollout never ended: {ended:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let rows = store.rollout_clusters(&rollout.id).await.unwrap();
    assert_eq!(ended.state, RolloutState::Succeeded, "{ended:?} {rows:?}");
    let mut windows = Vec::new();
    for row in &rows {
        assert_eq!(row.state, RolloutClusterState::Succeeded, "{rows:?}");
        let upgrades: Vec<_> = queue
            .cluster_jobs(&row.cluster_id)
            .await
            .unwrap()
            .into_iter()
            .filter(|job| job.operation == api_types::Operation::Upgrade)
            .collect();
        assert_eq!(upgrades.len(), 1, "one upgrade per cluster: {upgrades:?}");
        assert_eq!(row.job_id.as_deref(), Some(upgrades[0].id.as_str()));
        windows.push((
            upgrades[0].started_at_ms.unwrap(),
            upgrades[0].finished_at_ms.unwrap(),
        ));
    }
    assert!(
        windows[0].1 <= windows[1].0,
        "one after the other: {windows:?}"
    );
    server.kill();
    store.close().await;
    drop(data);
}

mod sqlite {
    #[tokio::test(flavor = "multi_thread")]
    async fn killed_server_loses_no_task() {
        super::killed_server_loses_no_task(engine::store::Backend::Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn killed_server_still_delivers_hook_events() {
        super::killed_server_still_delivers_hook_events(engine::store::Backend::Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn killed_server_resumes_a_rollout() {
        super::killed_server_resumes_a_rollout(engine::store::Backend::Sqlite).await;
    }
}

mod postgres {
    #[tokio::test(flavor = "multi_thread")]
    async fn killed_server_loses_no_task() {
        super::killed_server_loses_no_task(engine::store::Backend::Postgres).await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn killed_server_still_delivers_hook_events() {
        super::killed_server_still_delivers_hook_events(engine::store::Backend::Postgres).await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn killed_server_resumes_a_rollout() {
        super::killed_server_resumes_a_rollout(engine::store::Backend::Postgres).await;
    }
}
