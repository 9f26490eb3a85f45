//! The `ssh-pool` provider on both backends, against real sshd processes: hosts registered
//! through the service (host keys pinned, Corral's client key authorized on them), a
//! cluster built on them by the worker pool, check-outs shared by two providers over one
//! database (two worker processes), steps on pool nodes from a worker on another machine,
//! retried creations, and a host whose key is not the registered one.

use std::collections::BTreeSet;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use crate::lab::Lab;
use api_types::PoolHostState;
use engine::execute::{Executor, ExecutorSettings, Providers};
use engine::operations::ClusterChange;
use engine::principal::Principal;
use engine::provider::{NodeProvider, NodeRecord, NodeSpec, ProviderError, SshPoolProvider};
use engine::queue::{JobState, Queue};
use engine::resources::ResourceFiles;
use engine::service::{
    Caller, PageRequest, PoolHostRequest, PoolHostUpdate, PoolHostView, Service, ServiceError,
};
use engine::ssh::{PoolConfig, RunOptions, SessionPool};
use engine::store::tenants::DEFAULT_TENANT_ID;
use engine::store::users::Role;
use engine::store::{now_ms, Backend, Store};
use engine::worker::WorkerPool;

const JOB_LIMIT: Duration = Duration::from_secs(60);

fn admin() -> Caller {
    Caller::new(
        Principal {
            user_id: "admin-1".to_owned(),
            username: "admin".to_owned(),
            tenant_id: DEFAULT_TENANT_ID.to_owned(),
            role: Role::TenantAdmin,
        },
        None,
    )
}

fn service(queue: &Queue) -> Service {
    // Pool hosts touch no plugin resources; the directory only has to exist.
    Service::new(
        queue.clone(),
        ResourceFiles::in_directory(std::env::temp_dir()),
    )
}

/// The lifecycle catalog plus a provider `pool` of type `ssh-pool` and a template
/// `pooled` (base and worker services) that builds on it.
async fn import_pooled_catalog(store: &Store) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/lifecycle/catalog.json"
    );
    let mut bundle: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    bundle["providers"].as_array_mut().unwrap().push(serde_json::json!(
        {"name": "pool", "description": "registered hosts", "providertype": "ssh-pool", "provisioner": {}}
    ));
    bundle["hardwaretypes"][0]["providermap"]["pool"] = serde_json::json!({"flavor": "any"});
    bundle["imagetypes"][0]["providermap"]["pool"] = serde_json::json!({"image": "host"});
    bundle["clustertemplates"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "name": "pooled",
            "description": "worker nodes on pool hosts",
            "compatibility": {"services": ["base", "worker"], "hardwaretypes": ["small"], "imagetypes": ["debian"]},
            "defaults": {"services": ["base", "worker"], "provider": "pool", "hardwaretype": "small", "imagetype": "debian", "config": {}},
            "constraints": {"size": {"min": 1}}
        }));
    let catalog = domain::catalog::coopr::import_bundle(&bundle.to_string()).unwrap();
    let report = engine::catalog::import(store, DEFAULT_TENANT_ID, &catalog, None, now_ms())
        .await
        .unwrap();
    assert!(!report.has_errors(), "{report}");
}

/// Registers `machine` (a running sshd) as a pool host and authorizes Corral's key on it.
async fn register(
    service: &Service,
    name: &str,
    machine: &NodeRecord,
    host_key: &str,
) -> PoolHostView {
    let view = service
        .register_pool_host(
            &admin(),
            &PoolHostRequest {
                name: name.to_owned(),
                host: machine.host.clone(),
                port: i64::from(machine.port),
                user: machine.user.clone(),
                host_key: host_key.to_owned(),
                tenant: None,
            },
        )
        .await
        .unwrap();
    let authorized_keys = machine
        .client_key_path
        .parent()
        .unwrap()
        .join("authorized_keys");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(authorized_keys)
        .unwrap();
    writeln!(file, "{}", view.client_public_key).unwrap();
    view
}

/// Starts `count` pool machines and registers them as `host-1`… with their real keys.
async fn register_machines(lab: &Lab, service: &Service, count: usize) -> Vec<PoolHostView> {
    let mut views = Vec::with_capacity(count);
    for index in 1..=count {
        let machine = lab.pool_machine(&format!("machine-{index}")).await;
        views.push(
            register(
                service,
                &format!("host-{index}"),
                &machine,
                &machine.host_key.to_openssh(),
            )
            .await,
        );
    }
    views
}

async fn hosts(service: &Service) -> Vec<PoolHostView> {
    service
        .list_pool_hosts(&admin(), PageRequest::default())
        .await
        .unwrap()
        .items
}

async fn a_cluster_is_built_on_pool_hosts_and_returns_them(backend: Backend) {
    let lab = Lab::start(backend).await;
    import_pooled_catalog(&lab.store).await;
    let service = service(&lab.queue);
    for view in register_machines(&lab, &service, 3).await {
        assert_eq!(view.state, PoolHostState::Free);
        assert!(view.client_public_key.starts_with("ssh-ed25519 "));
    }

    let (cluster, job) = lab.create_from("pooled", "lent", 2).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let nodes = lab.store.list_nodes(&cluster.id).await.unwrap();
    assert_eq!(nodes.len(), 2);
    for node in &nodes {
        let record: NodeRecord =
            serde_json::from_str(node.provider_json.as_deref().unwrap()).unwrap();
        assert_eq!(record.provider, "ssh-pool");
        let key = record.client_key_path.clone();
        assert!(key.starts_with(&lab.pool_keys_dir), "{key:?}");
    }
    let listed = hosts(&service).await;
    let lent: Vec<&PoolHostView> = listed
        .iter()
        .filter(|host| host.state == PoolHostState::CheckedOut)
        .collect();
    assert_eq!(lent.len(), 2, "{listed:?}");
    for host in &lent {
        let checkout = host.checked_out.as_ref().unwrap();
        assert_eq!(checkout.cluster_name.as_deref(), Some("lent"));
        assert_eq!(checkout.cluster_id.as_deref(), Some(cluster.id.as_str()));
    }
    let lent_ports: BTreeSet<u16> = lent.iter().map(|host| host.port).collect();
    let node_ports: BTreeSet<u16> = nodes
        .iter()
        .map(|node| {
            serde_json::from_str::<NodeRecord>(node.provider_json.as_deref().unwrap())
                .unwrap()
                .port
        })
        .collect();
    assert_eq!(lent_ports, node_ports);

    // A lent host cannot be removed, nor re-addressed; the refusal names the cluster.
    let error = service
        .remove_pool_host(&admin(), &lent[0].id)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ServiceError::Conflict(message) if message.contains("cluster lent")),
        "{error}"
    );
    let error = service
        .update_pool_host(
            &admin(),
            &lent[0].id,
            &PoolHostUpdate {
                port: Some(2222),
                ..PoolHostUpdate::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(error, ServiceError::Conflict(_)), "{error}");

    // Re-adoption after a restart: a fresh provider over the same store claims the
    // same hosts again and refuses a record naming another node's host.
    let provider = SshPoolProvider::new(lab.store.clone(), lab.pool_keys_dir.clone()).unwrap();
    let first: NodeRecord =
        serde_json::from_str(nodes[0].provider_json.as_deref().unwrap()).unwrap();
    let second: NodeRecord =
        serde_json::from_str(nodes[1].provider_json.as_deref().unwrap()).unwrap();
    assert_eq!(provider.adopt(&first).await.unwrap(), first);
    let stolen = NodeRecord {
        id: first.id.clone(),
        ..second.clone()
    };
    let error = provider.adopt(&stolen).await.unwrap_err();
    assert!(matches!(error, ProviderError::HostInUse { .. }), "{error}");

    let job = lab
        .change(&cluster.id, ClusterChange::Delete { force: false })
        .await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let listed = hosts(&service).await;
    assert!(
        listed.iter().all(|host| host.state == PoolHostState::Free),
        "{listed:?}"
    );
    assert!(
        !first.client_key_path.exists(),
        "returning a host removes its key file"
    );
    service
        .remove_pool_host(&admin(), &lent[0].id)
        .await
        .unwrap();
    assert_eq!(hosts(&service).await.len(), 2);
}

async fn two_workers_never_lend_one_host_twice(backend: Backend) {
    let lab = Lab::start(backend).await;
    let service = service(&lab.queue);
    let machine = lab.pool_machine("machine").await;
    for index in 0..4u16 {
        // Distinct registrations; no connection is made by a check-out.
        service
            .register_pool_host(
                &admin(),
                &PoolHostRequest {
                    name: format!("host-{index}"),
                    host: machine.host.clone(),
                    port: i64::from(machine.port + index),
                    user: machine.user.clone(),
                    host_key: machine.host_key.to_openssh(),
                    tenant: None,
                },
            )
            .await
            .unwrap();
    }
    // Two "processes": each its own connection pool and its own key directory.
    let db_url = lab.store_url();
    let other_store = Store::open(&db_url)
        .await
        .unwrap()
        .with_secret_key(engine::testing::test_secret_key());
    let keys = tempfile::tempdir().unwrap();
    let one = SshPoolProvider::new(lab.store.clone(), keys.path().join("one")).unwrap();
    let two = SshPoolProvider::new(other_store.clone(), keys.path().join("two")).unwrap();

    let mut attempts = tokio::task::JoinSet::new();
    for index in 0..10 {
        let provider = if index % 2 == 0 {
            one.clone()
        } else {
            two.clone()
        };
        attempts.spawn(async move {
            let spec = NodeSpec::for_tenant(format!("node-{index}"), DEFAULT_TENANT_ID);
            provider.create(&spec).await
        });
    }
    let mut lent = Vec::new();
    let mut exhausted = 0;
    while let Some(result) = attempts.join_next().await {
        match result.unwrap() {
            Ok(record) => lent.push(record),
            Err(ProviderError::PoolExhausted { hosts: 4, .. }) => exhausted += 1,
            Err(other) => panic!("unexpected: {other}"),
        }
    }
    assert_eq!(lent.len(), 4);
    assert_eq!(exhausted, 6);
    let ports: BTreeSet<u16> = lent.iter().map(|record| record.port).collect();
    assert_eq!(ports.len(), 4, "every lent node got a host of its own");

    // A retried creation (on the other process) gets the same host, never a second one;
    // the same node created from both processes at once gets one host too.
    let retry = NodeSpec::for_tenant(lent[0].id.clone(), DEFAULT_TENANT_ID);
    assert_eq!(two.create(&retry).await.unwrap().port, lent[0].port);
    for record in &lent[1..] {
        one.delete(record).await.unwrap();
    }
    let spec = NodeSpec::for_tenant("racer", DEFAULT_TENANT_ID);
    let (a, b) = tokio::join!(one.create(&spec), two.create(&spec));
    assert_eq!(a.unwrap().port, b.unwrap().port);
    let listed = hosts(&service).await;
    let lent_now: Vec<&str> = listed
        .iter()
        .filter_map(|host| host.checked_out.as_ref().map(|out| out.node.as_str()))
        .collect();
    assert_eq!(lent_now.len(), 2, "{listed:?}");
    assert!(lent_now.contains(&"racer"));
    assert!(lent_now.contains(&lent[0].id.as_str()));

    // Another tenant's node gets none of these hosts.
    let error = one
        .create(&NodeSpec::for_tenant("elsewhere", "another-tenant"))
        .await
        .unwrap_err();
    assert!(matches!(error, ProviderError::PoolEmpty { .. }), "{error}");
    assert!(error.to_string().contains("/admin/hosts"), "{error}");
    other_store.close().await;
}

async fn a_worker_on_another_machine_runs_steps_on_pool_nodes(backend: Backend) {
    let mut lab = Lab::start(backend).await;
    import_pooled_catalog(&lab.store).await;
    let service = service(&lab.queue);
    register_machines(&lab, &service, 2).await;
    let (cluster, job) = lab.create_from("pooled", "lent", 2).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);

    // The first machine stops; the second shares only the database: its own key
    // directory, its own connections, and none of the first one's key files.
    lab.stop_workers().await;
    let moved = lab.pool_keys_dir.with_extension("elsewhere");
    std::fs::rename(&lab.pool_keys_dir, &moved).unwrap();
    let other_store = Store::open(&lab.store_url())
        .await
        .unwrap()
        .with_secret_key(engine::testing::test_secret_key());
    let other = tempfile::tempdir().unwrap();
    let other_keys = other.path().join("pool-keys");
    let provider = Arc::new(SshPoolProvider::new(other_store.clone(), &other_keys).unwrap());
    // The stored records name the first machine's key files; the pool connects with its
    // own copy. (Its janitor would also rewrite the records when it starts, which does
    // not help while both machines run.)
    let connections = SessionPool::new(PoolConfig::default());
    for node in lab.store.list_nodes(&cluster.id).await.unwrap() {
        let record: NodeRecord =
            serde_json::from_str(node.provider_json.as_deref().unwrap()).unwrap();
        let target = provider.ssh_target(&record).await.unwrap();
        let outcome = connections
            .run(&target, "true", RunOptions::with_timeout(JOB_LIMIT))
            .await
            .unwrap();
        assert!(outcome.exit.success());
    }
    // Another process: a queue of its own on the same database.
    let executor = Executor::new(
        Queue::new(other_store.clone()),
        Providers::new().with(provider),
        Arc::new(SessionPool::new(PoolConfig::default())),
        ResourceFiles::in_directory(other.path().join("resources")),
        ExecutorSettings::default(),
    );
    let workers = WorkerPool::start(executor, lab.settings.clone());

    let job = lab
        .change(&cluster.id, ClusterChange::Restart { services: None })
        .await;
    workers.waker().notify_waiters();
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let keys_here = std::fs::read_dir(&other_keys).unwrap().count();
    assert_eq!(
        keys_here, 2,
        "the second machine keeps its own copy of each key"
    );

    let job = lab
        .change(&cluster.id, ClusterChange::Delete { force: false })
        .await;
    workers.waker().notify_waiters();
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let listed = hosts(&service).await;
    assert!(
        listed.iter().all(|host| host.state == PoolHostState::Free),
        "{listed:?}"
    );
    assert_eq!(
        std::fs::read_dir(&other_keys).unwrap().count(),
        0,
        "returning the hosts removes this machine's key files"
    );
    workers.shutdown().await;
    other_store.close().await;
}

async fn a_retried_create_gets_the_host_its_first_attempt_took(backend: Backend) {
    let mut lab = Lab::start(backend).await;
    import_pooled_catalog(&lab.store).await;
    let service = service(&lab.queue);
    register_machines(&lab, &service, 2).await;
    lab.stop_workers().await;
    let (cluster, job) = lab.create_from("pooled", "retried", 1).await;
    let tasks = lab.queue.job_tasks(&job).await.unwrap();
    let node_id = format!("{}-{}", cluster.id, tasks[0].node);
    // A first attempt took host-2 (host-1 was busy then) and its process died before
    // the node record was saved; host-1 is free again by the time the task is retried.
    let crashed = SshPoolProvider::new(lab.store.clone(), lab.pool_keys_dir.clone()).unwrap();
    let busy = crashed
        .create(&NodeSpec::for_tenant("busy", DEFAULT_TENANT_ID))
        .await
        .unwrap();
    let taken = crashed
        .create(&NodeSpec::for_tenant(node_id.clone(), DEFAULT_TENANT_ID))
        .await
        .unwrap();
    crashed.delete(&busy).await.unwrap();

    lab.pool = Some(engine::worker::WorkerPool::start(
        lab.executor.clone(),
        lab.settings.clone(),
    ));
    lab.wake();
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let node = &lab.store.list_nodes(&cluster.id).await.unwrap()[0];
    let record: NodeRecord = serde_json::from_str(node.provider_json.as_deref().unwrap()).unwrap();
    assert_eq!(
        record.port, taken.port,
        "the retry got the host the first attempt took"
    );
    let listed = hosts(&service).await;
    let states: Vec<(&str, &str)> = listed
        .iter()
        .map(|host| (host.name.as_str(), host.state.as_str()))
        .collect();
    assert_eq!(states, [("host-1", "free"), ("host-2", "checked-out")]);

    let job = lab
        .change(&cluster.id, ClusterChange::Delete { force: false })
        .await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    assert!(hosts(&service)
        .await
        .iter()
        .all(|host| host.state == PoolHostState::Free));
}

async fn a_host_whose_key_differs_from_the_registered_one_fails_clearly(backend: Backend) {
    let lab = Lab::start(backend).await;
    import_pooled_catalog(&lab.store).await;
    let service = service(&lab.queue);
    let machine = lab.pool_machine("machine").await;
    let impostor = lab.pool_machine("impostor").await;
    // Registered with another machine's host key: what a reinstalled host (or someone in
    // between) looks like.
    register(&service, "host", &machine, &impostor.host_key.to_openssh()).await;
    let (_, job) = lab.create_from("pooled", "pinned", 1).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Failed);
    let mut errors = Vec::new();
    for task in lab.queue.job_tasks(&job).await.unwrap() {
        for attempt in lab.queue.task_attempts(&task.id).await.unwrap() {
            errors.extend(attempt.error);
        }
    }
    let message = errors.join("\n");
    assert!(message.contains("host key changed"), "{message}");
    assert!(
        message.contains(&impostor.host_key.fingerprint())
            && message.contains(&machine.host_key.fingerprint()),
        "both fingerprints are named: {message}"
    );
}

async fn registration_checks_every_field(backend: Backend) {
    let lab = Lab::start(backend).await;
    let service = service(&lab.queue);
    let request = PoolHostRequest {
        name: "bad name!".to_owned(),
        host: " ".to_owned(),
        port: 70000,
        user: "".to_owned(),
        host_key: "ssh-ed25519 AAAAnotakey".to_owned(),
        tenant: None,
    };
    let error = service
        .register_pool_host(&admin(), &request)
        .await
        .unwrap_err();
    let ServiceError::Invalid { message, details } = error else {
        panic!("{error}")
    };
    let paths: Vec<&str> = details
        .iter()
        .map(|problem| problem.path.as_str())
        .collect();
    assert_eq!(
        paths,
        ["name", "host", "port", "user", "host_key"],
        "{message}"
    );
    assert!(message.contains("port: 70000 is not a port"), "{message}");
    assert!(hosts(&service).await.is_empty(), "nothing was stored");

    let machine = lab.pool_machine("machine").await;
    let good = PoolHostRequest {
        name: "ok".to_owned(),
        host: machine.host.clone(),
        port: i64::from(machine.port),
        user: machine.user.clone(),
        host_key: format!("{} {}", machine.host, machine.host_key.to_openssh()),
        tenant: None,
    };
    let view = service.register_pool_host(&admin(), &good).await.unwrap();
    assert_eq!(view.host_key, machine.host_key.to_openssh());
    let error = service
        .register_pool_host(&admin(), &good)
        .await
        .unwrap_err();
    assert!(matches!(error, ServiceError::Conflict(_)), "{error}");

    let user = Caller::new(
        Principal {
            role: Role::User,
            ..admin().principal
        },
        None,
    );
    let error = service
        .list_pool_hosts(&user, PageRequest::default())
        .await
        .unwrap_err();
    assert!(matches!(error, ServiceError::Forbidden(_)), "{error}");
    let stranger = Caller::new(
        Principal {
            tenant_id: "another-tenant".to_owned(),
            ..admin().principal
        },
        None,
    );
    let error = service
        .remove_pool_host(&stranger, &view.id)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        service
            .remove_pool_host(&stranger, "no-such-host")
            .await
            .unwrap_err()
            .to_string()
            .replace("no-such-host", &view.id)
    );
}

engine::on_both_backends!(
    a_cluster_is_built_on_pool_hosts_and_returns_them,
    two_workers_never_lend_one_host_twice,
    a_worker_on_another_machine_runs_steps_on_pool_nodes,
    a_retried_create_gets_the_host_its_first_attempt_took,
    a_host_whose_key_differs_from_the_registered_one_fails_clearly,
    registration_checks_every_field,
);
