//! The store against both real backends: a SQLite file and a fresh PostgreSQL database.

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
            local_nodes: true,
        })
        .await
        .unwrap();
    let duplicate = store
        .create_tenant(&NewTenant {
            name: "acme".into(),
            max_clusters: None,
            max_nodes: None,
            local_nodes: true,
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

engine::on_both_backends!(
    migrations_are_applied_and_idempotent,
    default_tenant_exists_from_the_start,
    tenants_and_users_round_trip,
    a_user_needs_an_existing_tenant,
);
