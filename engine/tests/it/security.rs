//! Security rules that hold below the HTTP layer, on both backends: login throttling
//! shared by every process on one database, the `local` provider only for tenants a
//! superadmin allowed, and quotas that count the nodes that exist.

use domain::catalog::coopr::import_bundle;
use domain::names::{ClusterName, TemplateName};
use domain::solver::SolveRequest;
use engine::accounts::{create_user, Password};
use engine::operations::{check_quota, create_cluster, preview_create, CreateRequest};
use engine::queue::{Queue, SubmitOptions};
use engine::resources::ResourceFiles;
use engine::service::{Service, ServiceError, ThrottleSettings};
use engine::store::clusters::nodes::NodeRow;
use engine::store::tenants::NewTenant;
use engine::store::users::Role;
use engine::store::{Backend, Store};
use engine::testing::TestDatabase;

const PASSWORD: &str = "the right password";

async fn open(db: &TestDatabase) -> Store {
    Store::open(&db.url).await.unwrap()
}

async fn failed_logins_count_across_processes(backend: Backend) {
    let db = TestDatabase::new(backend).await;
    let (one, two) = (open(&db).await, open(&db).await);
    create_user(&one, "shared", Role::User, None, &Password::new(PASSWORD))
        .await
        .unwrap();
    let settings = ThrottleSettings::default();
    let dir = tempfile::tempdir().unwrap();
    let service = |store: Store| {
        Service::new(Queue::new(store), ResourceFiles::in_directory(dir.path()))
            .with_throttle(settings)
    };
    let (first, second) = (service(one), service(two));
    let wrong = Password::new("not the password");
    let from = Some("192.0.2.10");
    for attempt in 0..settings.per_account {
        let process = if attempt % 2 == 0 { &first } else { &second };
        let error = process.login("shared", &wrong, from).await.unwrap_err();
        assert!(matches!(error, ServiceError::Unauthenticated), "{error}");
    }
    for process in [&first, &second] {
        let error = process
            .login("shared", &Password::new(PASSWORD), from)
            .await
            .unwrap_err();
        assert!(
            matches!(error, ServiceError::TooManyAttempts { .. }),
            "each process sees the failures made on the other: {error}"
        );
    }
    // Another address is a different counter: the owner is not locked out.
    first
        .login("shared", &Password::new(PASSWORD), Some("192.0.2.99"))
        .await
        .unwrap();
}

/// The lifecycle test catalog (its provider is of type `local`) in tenant `name`.
async fn tenant_with_catalog(
    store: &Store,
    name: &str,
    provider_types: &[&str],
    max_nodes: Option<i64>,
) -> String {
    let tenant = store
        .create_tenant(&NewTenant {
            name: name.to_owned(),
            max_clusters: None,
            max_nodes,
            provider_types: provider_types.iter().map(|t| (*t).to_owned()).collect(),
        })
        .await
        .unwrap();
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/lifecycle/catalog.json"
    ))
    .unwrap();
    let catalog = import_bundle(&text).unwrap();
    engine::catalog::import(store, &tenant.id, &catalog, None, 0)
        .await
        .unwrap();
    tenant.id
}

fn request(tenant_id: &str, name: &str, size: u32) -> CreateRequest {
    CreateRequest {
        tenant_id: tenant_id.to_owned(),
        owner_id: None,
        name: ClusterName::parse(name.to_owned()).unwrap(),
        template: TemplateName::parse("lifecycle".to_owned()).unwrap(),
        solve: SolveRequest {
            size,
            services: None,
            provider: None,
            hardwaretype: None,
            imagetype: None,
        },
        config: Default::default(),
    }
}

async fn local_nodes_need_a_superadmins_leave(backend: Backend) {
    let db = TestDatabase::new(backend).await;
    let store = open(&db).await;
    let tenant = tenant_with_catalog(&store, "outsiders", &["docker", "ec2"], None).await;
    let refused = preview_create(&store, &request(&tenant, "probe", 2), 0)
        .await
        .unwrap_err();
    let message = refused.to_string();
    assert!(message.contains("type local"), "{message}");
    assert!(message.contains("outsiders"), "{message}");
    assert!(matches!(
        ServiceError::from(refused),
        ServiceError::Forbidden(_)
    ));
    store
        .set_tenant_provider_types(&tenant, &["docker".to_owned(), "local".to_owned()])
        .await
        .unwrap();
    preview_create(&store, &request(&tenant, "probe", 2), 0)
        .await
        .unwrap();
}

async fn nodes_left_by_a_cancelled_create_count_toward_the_quota(backend: Backend) {
    let db = TestDatabase::new(backend).await;
    let store = open(&db).await;
    let tenant = tenant_with_catalog(&store, "thrifty", &["local"], Some(2)).await;
    let queue = Queue::new(store.clone());
    let (cluster, job) = create_cluster(
        &queue,
        &request(&tenant, "first", 2),
        SubmitOptions::default(),
        0,
    )
    .await
    .unwrap();
    // The provider made the nodes, then the create was cancelled: they run on, and
    // nothing of them is in the cluster's committed layout.
    for number in [1000, 1001] {
        store
            .save_node(
                &NodeRow {
                    cluster_id: cluster.id.clone(),
                    number,
                    hostname: Some(format!("127.1.0.{}", number - 990)),
                    hardwaretype: "small".to_owned(),
                    imagetype: "debian".to_owned(),
                    services_json: "[]".to_owned(),
                    provider_json: Some("{}".to_owned()),
                    state: engine::execute::NodeState::Created,
                },
                1,
            )
            .await
            .unwrap();
    }
    sqlx::query("UPDATE jobs SET state = 'cancelled' WHERE id = $1")
        .bind(&job)
        .execute(store.pool())
        .await
        .unwrap();
    let refused = check_quota(&store, &tenant, 1, 1).await.unwrap_err();
    assert!(
        refused.to_string().contains("at most 2 node(s): it has 2"),
        "{refused}"
    );
}

/// Issue 38: a docker hardware type asking more memory or CPUs than the operator
/// allows is refused at preview (and so at create), naming the hardware type, what it
/// asks and the most; nothing is stored. Within the operator's maxima it plans.
async fn a_docker_hardware_type_above_the_operators_maximum_is_refused_at_preview(
    backend: Backend,
) {
    let db = TestDatabase::new(backend).await;
    let store = open(&db).await;
    let tenant = store
        .create_tenant(&NewTenant {
            name: "greedy".to_owned(),
            max_clusters: None,
            max_nodes: None,
            provider_types: NewTenant::all_provider_types(),
        })
        .await
        .unwrap();
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/lifecycle/catalog.json"
    ))
    .unwrap();
    let mut bundle: serde_json::Value = serde_json::from_str(&text).unwrap();
    // The lifecycle catalog's provider `local`, made a docker provider, and its hardware
    // type asking 100 GB and 64 CPUs of it.
    bundle["providers"][0]["providertype"] = "docker".into();
    bundle["hardwaretypes"][0]["providermap"]["local"]["memory_mb"] = 100_000.into();
    bundle["hardwaretypes"][0]["providermap"]["local"]["cpus"] = "64".into();
    let catalog = import_bundle(&bundle.to_string()).unwrap();
    engine::catalog::import(&store, &tenant.id, &catalog, None, 0)
        .await
        .unwrap();

    let refused = preview_create(&store, &request(&tenant.id, "huge", 2), 0)
        .await
        .unwrap_err();
    let message = refused.to_string();
    assert!(
        message.contains("hardware type small asks for more than a docker node may have")
            && message.contains("memory_mb 100000 (at most 8192)")
            && message.contains("cpus 64 (at most 4)"),
        "{message}"
    );
    assert!(matches!(
        ServiceError::from(refused),
        ServiceError::Invalid { .. }
    ));
    let queue = Queue::new(store.clone());
    let refused = create_cluster(
        &queue,
        &request(&tenant.id, "huge", 2),
        SubmitOptions::default(),
        0,
    )
    .await
    .unwrap_err();
    assert!(
        refused.to_string().contains("memory_mb 100000"),
        "{refused}"
    );
    assert!(
        store.cluster_by_name(&tenant.id, "huge").await.is_err(),
        "nothing stored"
    );

    let generous = store.with_docker_limits(
        engine::provider::DockerLimits::new(1024, 1000, 1024, 200_000, 64_000).unwrap(),
    );
    preview_create(&generous, &request(&tenant.id, "huge", 2), 0)
        .await
        .unwrap();
}

engine::on_both_backends!(
    failed_logins_count_across_processes,
    local_nodes_need_a_superadmins_leave,
    nodes_left_by_a_cancelled_create_count_toward_the_quota,
    a_docker_hardware_type_above_the_operators_maximum_is_refused_at_preview
);
