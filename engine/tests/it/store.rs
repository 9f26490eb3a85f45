//! The store against both real backends: a SQLite file and a fresh PostgreSQL database.

use engine::provider::{CredentialBinding, Credentials};
use engine::store::clusters::nodes::{NodeRow, NodeState};
use engine::store::provider_credentials::{
    CredentialsChoice, CredentialsSource, OpenedCredentials,
};
use engine::store::tenants::{NewTenant, DEFAULT_TENANT_ID};
use engine::store::users::{NewUser, Role};
use engine::store::{Backend, Store, StoreError};
use engine::testing::TestDatabase;

async fn open(backend: Backend) -> (TestDatabase, Store) {
    let db = TestDatabase::new(backend).await;
    let store = Store::open(&db.url)
        .await
        .expect("store opens and migrates");
    (db, store)
}

async fn migrations_are_applied_and_idempotent(backend: Backend) {
    let (_db, store) = open(backend).await;
    let status = store.migration_status().await.unwrap();
    assert!(status.is_current(), "{status:?}");
    assert!(status.known >= 1);
    // A second run (another process starting, or `corral migrate`) changes nothing.
    store.migrate().await.unwrap();
    assert_eq!(store.migration_status().await.unwrap(), status);
}

async fn default_tenant_exists_from_the_start(backend: Backend) {
    let (_db, store) = open(backend).await;
    let tenant = store.tenant_by_name("default").await.unwrap();
    assert_eq!(tenant.id, DEFAULT_TENANT_ID);
}

async fn tenants_and_users_round_trip(backend: Backend) {
    let (_db, store) = open(backend).await;
    let acme = store
        .create_tenant(&NewTenant {
            name: "acme".into(),
            max_clusters: Some(3),
            max_nodes: None,
            provider_types: NewTenant::all_provider_types(),
        })
        .await
        .unwrap();
    let duplicate = store
        .create_tenant(&NewTenant {
            name: "acme".into(),
            max_clusters: None,
            max_nodes: None,
            provider_types: NewTenant::all_provider_types(),
        })
        .await
        .unwrap_err();
    assert!(
        matches!(&duplicate, StoreError::Conflict(what) if what.contains("acme")),
        "{duplicate}"
    );

    let alice = store
        .create_user(&NewUser {
            tenant_id: acme.id.clone(),
            username: "alice".into(),
            role: Role::TenantAdmin,
            password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
        })
        .await
        .unwrap();
    let found = store.user_by_username("alice").await.unwrap();
    assert_eq!(found, alice);
    assert_eq!(found.role, Role::TenantAdmin);
    assert!(
        !format!("{found:?}").contains("argon2"),
        "hash leaked into Debug"
    );

    assert_eq!(store.list_users(&acme.id).await.unwrap().len(), 1);
    assert!(store
        .list_users(DEFAULT_TENANT_ID)
        .await
        .unwrap()
        .is_empty());
    assert!(matches!(
        store.user_by_username("bob").await,
        Err(StoreError::NotFound(_))
    ));
    let tenants: Vec<String> = store
        .list_tenants()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(tenants, ["acme", "default"]);
}

async fn a_user_needs_an_existing_tenant(backend: Backend) {
    let (_db, store) = open(backend).await;
    let err = store
        .create_user(&NewUser {
            tenant_id: "no-such-tenant".into(),
            username: "eve".into(),
            role: Role::User,
            password_hash: "x".into(),
        })
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Query(_)), "{err}");
    assert_eq!(store.count_users().await.unwrap(), 0);
}

/// A word no state names, written behind the store's back (a hand edit, a newer
/// binary's state read by an older one), is a corrupt column naming the column: never a
/// default state, never a panic. (Where the schema has a CHECK on the column, as for
/// roles and job states, the database refuses such a write in the first place.)
async fn a_stored_word_no_state_names_is_a_corrupt_column(backend: Backend) {
    let (_db, store) = open(backend).await;
    let cluster = store
        .create_cluster(&engine::testing::bare_cluster(DEFAULT_TENANT_ID, "c1"), 0)
        .await
        .unwrap();
    sqlx::query("UPDATE clusters SET state = 'exploded' WHERE id = $1")
        .bind(&cluster.id)
        .execute(store.pool())
        .await
        .unwrap();
    let err = store.cluster(&cluster.id).await.unwrap_err();
    match &err {
        StoreError::CorruptColumn { column, reason } => {
            assert_eq!(column, "state");
            assert!(reason.contains("exploded"), "{reason}");
        }
        other => panic!("expected a corrupt column, got {other:?}"),
    }
    assert!(err.to_string().contains("column state"), "{err}");
    // The lists that hold the row fail the same way instead of leaving it out.
    assert!(matches!(
        store.list_clusters(DEFAULT_TENANT_ID).await,
        Err(StoreError::CorruptColumn { .. })
    ));

    let node = NodeRow {
        cluster_id: cluster.id.clone(),
        number: 1,
        hostname: None,
        hardwaretype: "small".into(),
        imagetype: "debian".into(),
        services_json: "[]".into(),
        provider_json: None,
        state: NodeState::Created,
    };
    store.save_node(&node, 0).await.unwrap();
    sqlx::query("UPDATE nodes SET state = 'melted' WHERE cluster_id = $1")
        .bind(&cluster.id)
        .execute(store.pool())
        .await
        .unwrap();
    assert!(matches!(
        store.list_nodes(&cluster.id).await,
        Err(StoreError::CorruptColumn { column, reason }) if column == "state" && reason.contains("melted")
    ));
}

/// A user of the default tenant, for owning clusters and credentials.
async fn user(store: &Store, username: &str) -> String {
    store
        .create_user(&NewUser {
            tenant_id: DEFAULT_TENANT_ID.into(),
            username: username.into(),
            role: Role::User,
            password_hash: "x".into(),
        })
        .await
        .unwrap()
        .id
}

fn token(value: &str) -> Credentials {
    Credentials::from_json(serde_json::json!({ "token": value })).unwrap()
}

/// The binding users' credentials are set for in these tests.
fn bound() -> CredentialBinding {
    CredentialBinding::stored("definition-1")
}

/// What `credentials_for` opened for the provider as [`bound`] defines it: the token
/// and whose it is.
async fn resolved(
    store: &Store,
    user: Option<&str>,
    users_allowed: bool,
) -> Option<(String, CredentialsSource)> {
    match store
        .credentials_for(DEFAULT_TENANT_ID, "lab", &bound(), user, users_allowed)
        .await
        .unwrap()
    {
        OpenedCredentials::Open(credentials, source) => {
            Some((credentials.field("token").unwrap().to_owned(), source))
        }
        OpenedCredentials::Nothing => None,
        OpenedCredentials::Rebound(user) => panic!("{user}'s are bound elsewhere"),
    }
}

async fn a_node_uses_its_owners_credentials_where_allowed_else_the_tenants(backend: Backend) {
    let (_db, store) = open(backend).await;
    let store = store.with_secret_key(engine::testing::test_secret_key());
    let alice = user(&store, "alice").await;
    let bob = user(&store, "bob").await;

    // Neither set: nothing, whoever owns the cluster.
    assert_eq!(resolved(&store, Some(&alice), true).await, None);
    assert_eq!(resolved(&store, None, false).await, None);

    // Only alice's own: hers where users' own are allowed, nothing where not.
    store
        .set_user_provider_credentials(
            DEFAULT_TENANT_ID,
            &alice,
            "lab",
            &bound(),
            &token("alice"),
            None,
            1,
        )
        .await
        .unwrap();
    assert_eq!(
        resolved(&store, Some(&alice), true).await,
        Some(("alice".into(), CredentialsSource::User(alice.clone())))
    );
    assert_eq!(resolved(&store, Some(&alice), false).await, None);

    // With the tenant's set too: the tenant's for bob (none of his own), for alice
    // where users' own are not allowed, and for a cluster with no owner.
    store
        .set_provider_credentials(DEFAULT_TENANT_ID, "lab", &token("tenant"), None, 1)
        .await
        .unwrap();
    let tenants = Some(("tenant".to_owned(), CredentialsSource::Tenant));
    assert_eq!(resolved(&store, Some(&bob), true).await, tenants);
    assert_eq!(resolved(&store, Some(&alice), false).await, tenants);
    assert_eq!(resolved(&store, None, true).await, tenants);
    assert_eq!(
        resolved(&store, Some(&alice), true).await.map(|(t, _)| t),
        Some("alice".into())
    );
    // Another provider's or tenant's rows are not hers for this one.
    assert!(matches!(
        store
            .credentials_for("another-tenant", "lab", &bound(), Some(&alice), true)
            .await
            .unwrap(),
        OpenedCredentials::Nothing
    ));
    // The provider defined otherwise: hers are not used, nor the tenant's instead.
    let redefined = CredentialBinding::stored("definition-2");
    assert!(matches!(
        store
            .credentials_for(DEFAULT_TENANT_ID, "lab", &redefined, Some(&alice), true)
            .await
            .unwrap(),
        OpenedCredentials::Rebound(user) if user == alice
    ));
    assert_eq!(
        store
            .credentials_choice(DEFAULT_TENANT_ID, "lab", &redefined, Some(&bob), true)
            .await
            .unwrap(),
        CredentialsChoice::Tenant,
        "bob has none of his own: the tenant's"
    );

    // Her row as stored, field names only; removed, the tenant's again.
    let stored = store
        .stored_user_provider_credentials(DEFAULT_TENANT_ID, &alice, "lab")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.field_names().unwrap(), ["token"]);
    assert!(store
        .delete_user_provider_credentials(DEFAULT_TENANT_ID, &alice, "lab")
        .await
        .unwrap());
    assert_eq!(resolved(&store, Some(&alice), true).await, tenants);

    // A sealed row copied to another user does not open as theirs.
    store
        .set_user_provider_credentials(
            DEFAULT_TENANT_ID,
            &alice,
            "lab",
            &bound(),
            &token("alice"),
            None,
            1,
        )
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO user_provider_credentials \
         (user_id, tenant_id, provider, binding, sealed, field_names, updated_by, \
          updated_at_ms) \
         SELECT $1, tenant_id, provider, binding, sealed, field_names, updated_by, \
          updated_at_ms \
         FROM user_provider_credentials WHERE user_id = $2",
    )
    .bind(&bob)
    .bind(&alice)
    .execute(store.pool())
    .await
    .unwrap();
    assert!(store
        .credentials_for(DEFAULT_TENANT_ID, "lab", &bound(), Some(&bob), true)
        .await
        .is_err());
    // Nor does one given another binding: the binding is sealed in.
    sqlx::query("UPDATE user_provider_credentials SET binding = 'definition-2' WHERE user_id = $1")
        .bind(&alice)
        .execute(store.pool())
        .await
        .unwrap();
    assert!(store
        .credentials_for(DEFAULT_TENANT_ID, "lab", &redefined, Some(&alice), true)
        .await
        .is_err());

    // A removed user's credentials go with them.
    store.delete_user(&bob).await.unwrap();
    let left: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM user_provider_credentials WHERE user_id = $1")
            .bind(&bob)
            .fetch_one(store.pool())
            .await
            .unwrap();
    assert_eq!(left, 0);
}

/// Each node write counts in the cluster's node version and stamps the row with it, so
/// a reader that saw version `v` reads only the rows written since, and learns which
/// nodes are gone from the numbers left.
async fn node_rows_changed_since_a_version_are_read_alone(backend: Backend) {
    let (_db, store) = open(backend).await;
    let cluster = store
        .create_cluster(&engine::testing::bare_cluster(DEFAULT_TENANT_ID, "c1"), 0)
        .await
        .unwrap();
    let node = |number: i64, hostname: &str| NodeRow {
        cluster_id: cluster.id.clone(),
        number,
        hostname: Some(hostname.into()),
        hardwaretype: "small".into(),
        imagetype: "debian".into(),
        services_json: "[]".into(),
        provider_json: None,
        state: NodeState::Created,
    };
    let version = || async { store.step_cluster(&cluster.id).await.unwrap().nodes_version };
    for number in 1..=3 {
        store.save_node(&node(number, "first"), 0).await.unwrap();
    }
    let seen = version().await;
    assert_eq!(seen, 3);
    let (changed, count) = store.nodes_changed_since(&cluster.id, seen).await.unwrap();
    assert!(changed.is_empty());
    assert_eq!(count, 3);

    store.save_node(&node(2, "second"), 0).await.unwrap();
    store.delete_node(&cluster.id, 3).await.unwrap();
    store.save_node(&node(4, "first"), 0).await.unwrap();
    assert_eq!(version().await, seen + 3);
    let (changed, count) = store.nodes_changed_since(&cluster.id, seen).await.unwrap();
    assert_eq!(count, 3);
    let mut changed: Vec<(i64, String)> = changed
        .into_iter()
        .map(|row| (row.number, row.hostname.unwrap()))
        .collect();
    changed.sort();
    assert_eq!(changed, [(2, "second".to_owned()), (4, "first".to_owned())]);
    assert_eq!(
        sorted(store.node_numbers(&cluster.id).await.unwrap()),
        [1, 2, 4]
    );
}

/// The migration that moved a job's plan and layouts out of its row into
/// `job_documents` carries the jobs a database already has: a job written as the
/// release before stored it reads back whole.
async fn a_jobs_documents_move_out_of_its_row_with_its_data(backend: Backend) {
    const JOB_DOCUMENTS: &str = "20261129000000";
    let db = TestDatabase::new(backend).await;
    let store = Store::connect(&db.url).await.unwrap();
    // The database as the release before left it: every migration older than this one.
    let older = tempfile::tempdir().unwrap();
    let dialect = match backend {
        Backend::Sqlite => "sqlite",
        Backend::Postgres => "postgres",
    };
    let all =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../migrations/{dialect}"));
    for entry in std::fs::read_dir(all).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.as_str() < JOB_DOCUMENTS {
            std::fs::copy(&path, older.path().join(&name)).unwrap();
        }
    }
    sqlx::migrate::Migrator::new(older.path())
        .await
        .unwrap()
        .run(store.pool())
        .await
        .unwrap();
    let cluster = store
        .create_cluster(&engine::testing::bare_cluster(DEFAULT_TENANT_ID, "old"), 0)
        .await
        .unwrap();
    let plan = serde_json::json!({"tasks": [
        {"id": 0, "node": 1, "service": null, "action": "create", "after": [], "stage": 0}
    ]});
    sqlx::query(
        "INSERT INTO jobs (id, tenant_id, cluster_id, operation, state, plan_json, tasks_total, \
         tasks_succeeded, created_at_ms, from_layout_json, to_layout_json, forced) \
         VALUES ('old-job', $1, $2, 'create', 'queued', $3, 1, 0, 0, NULL, '{\"nodes\":1}', 1)",
    )
    .bind(DEFAULT_TENANT_ID)
    .bind(&cluster.id)
    .bind(plan.to_string())
    .execute(store.pool())
    .await
    .unwrap();

    store.migrate().await.unwrap();
    assert!(store.migration_status().await.unwrap().is_current());
    let queue = engine::queue::Queue::new(store.clone());
    assert_eq!(
        queue.job_plan(&"old-job".into()).await.unwrap(),
        serde_json::from_value(plan).unwrap()
    );
    let layouts = queue.job_layouts(&"old-job".into()).await.unwrap();
    assert_eq!(layouts.from_layout_json, None);
    assert_eq!(layouts.to_layout_json.as_deref(), Some(r#"{"nodes":1}"#));
    assert!(layouts.forced);
}

fn sorted(mut numbers: Vec<i64>) -> Vec<i64> {
    numbers.sort_unstable();
    numbers
}

engine::on_both_backends!(
    a_jobs_documents_move_out_of_its_row_with_its_data,
    node_rows_changed_since_a_version_are_read_alone,
    a_node_uses_its_owners_credentials_where_allowed_else_the_tenants,
    a_stored_word_no_state_names_is_a_corrupt_column,
    migrations_are_applied_and_idempotent,
    default_tenant_exists_from_the_start,
    tenants_and_users_round_trip,
    a_user_needs_an_existing_tenant,
);
