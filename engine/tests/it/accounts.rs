//! Accounts on both backends: the first-run superadmin and user creation rules.

use engine::accounts::{
    create_user, ensure_first_admin, verify_password, AccountError, Password, FIRST_ADMIN_USERNAME,
};
use engine::store::tenants::NewTenant;
use engine::store::users::Role;
use engine::store::{Backend, Store};
use engine::testing::TestDatabase;

async fn open(backend: Backend) -> (TestDatabase, Store) {
    let db = TestDatabase::new(backend).await;
    let store = Store::open(&db.url).await.unwrap();
    (db, store)
}

async fn first_admin_is_created_once(backend: Backend) {
    let (_db, store) = open(backend).await;
    let password = ensure_first_admin(&store).await.unwrap().expect("created");
    let admin = store.user_by_username(FIRST_ADMIN_USERNAME).await.unwrap();
    assert_eq!(admin.role, Role::Superadmin);
    assert!(verify_password(&password, &admin.password_hash));
    assert!(!admin.password_hash.contains(password.expose()));
    // Every later start finds users and creates nobody.
    assert!(ensure_first_admin(&store).await.unwrap().is_none());
    assert_eq!(store.count_users().await.unwrap(), 1);
}

async fn user_creation_checks_its_input(backend: Backend) {
    let (_db, store) = open(backend).await;
    let good = Password::new("a long enough password");
    store
        .create_tenant(&NewTenant {
            name: "acme".into(),
            max_clusters: None,
            max_nodes: None,
            provider_types: NewTenant::all_provider_types(),
        })
        .await
        .unwrap();

    let user = create_user(&store, "bob", Role::User, Some("acme"), &good)
        .await
        .unwrap();
    assert!(verify_password(&good, &user.password_hash));

    let err = create_user(&store, "Bad Name", Role::User, None, &good)
        .await
        .unwrap_err();
    assert!(matches!(err, AccountError::InvalidUsername(_)), "{err}");
    let err = create_user(&store, "carol", Role::User, None, &Password::new("short"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("too short"), "{err}");
    let err = create_user(&store, "dave", Role::User, Some("nope"), &good)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("\"nope\""), "{err}");
    let err = create_user(&store, "root2", Role::Superadmin, Some("acme"), &good)
        .await
        .unwrap_err();
    assert!(matches!(err, AccountError::SuperadminTenant(_)), "{err}");
    let err = create_user(&store, "bob", Role::User, Some("acme"), &good)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
    // Only the first, valid request left a row behind.
    assert_eq!(store.count_users().await.unwrap(), 1);
}

/// Owners' names are looked up per page, within the tenant: another tenant's user and
/// an id of nobody are left out, on both backends' `IN` lists.
async fn usernames_are_read_by_id_within_one_tenant(backend: Backend) {
    let (_db, store) = open(backend).await;
    let good = Password::new("a long enough password");
    for name in ["acme", "globex"] {
        store
            .create_tenant(&NewTenant {
                name: name.into(),
                max_clusters: None,
                max_nodes: None,
                provider_types: NewTenant::all_provider_types(),
            })
            .await
            .unwrap();
    }
    let bob = create_user(&store, "bob", Role::User, Some("acme"), &good)
        .await
        .unwrap();
    let eve = create_user(&store, "eve", Role::TenantAdmin, Some("acme"), &good)
        .await
        .unwrap();
    let mallory = create_user(&store, "mallory", Role::User, Some("globex"), &good)
        .await
        .unwrap();
    let ids = [
        bob.id.as_str(),
        eve.id.as_str(),
        mallory.id.as_str(),
        "nobody",
    ];
    let names = store.usernames_in(&bob.tenant_id, &ids).await.unwrap();
    assert_eq!(names.len(), 2, "{names:?}");
    assert_eq!(names[&bob.id], "bob");
    assert_eq!(names[&eve.id], "eve");
    assert!(store
        .usernames_in(&bob.tenant_id, &[])
        .await
        .unwrap()
        .is_empty());
    assert_eq!(store.count_tenant_users(&bob.tenant_id).await.unwrap(), 2);
    assert_eq!(
        store.count_tenant_users(&mallory.tenant_id).await.unwrap(),
        1
    );
    // The superadmin's switcher: every tenant's id and name, by name, as the whole
    // rows have them.
    let switchable = store.tenant_names().await.unwrap();
    let whole: Vec<(String, String)> = store
        .list_tenants()
        .await
        .unwrap()
        .into_iter()
        .map(|tenant| (tenant.id, tenant.name))
        .collect();
    assert_eq!(switchable, whole);
    let names: Vec<&str> = switchable.iter().map(|(_, name)| name.as_str()).collect();
    assert!(
        names.contains(&"acme") && names.contains(&"globex"),
        "{names:?}"
    );
    assert!(names.windows(2).all(|pair| pair[0] <= pair[1]), "{names:?}");
}

engine::on_both_backends!(
    first_admin_is_created_once,
    user_creation_checks_its_input,
    usernames_are_read_by_id_within_one_tenant
);
