//! Moving a user to another tenant (`PUT /api/v1/users/{id}/tenant`): what goes with
//! them (nothing of their old tenant), what ends (their sessions, their API tokens),
//! what stays (their clusters, with the tenant they leave), and every refusal, each of
//! which leaves the user exactly as they were.

use engine::store::users::Role;
use engine::store::Backend;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{spawn_app, with_catalog, ApiUser, TestApp, PASSWORD};

/// Tenant `acme` (with the lifecycle catalog and its admin), erin in it owning the
/// cluster `erins`, tenant `bravo` with its admin, and a superadmin.
struct Tenants {
    app: TestApp,
    acme_admin: ApiUser,
    erin: ApiUser,
    bravo_admin: ApiUser,
    root: ApiUser,
}

async fn tenants(backend: Backend) -> Tenants {
    let app = spawn_app(backend).await;
    let acme_admin = with_catalog(&app, "acme").await;
    let erin = app.user("erin", Role::User, "acme").await;
    let created = app
        .call(
            &erin,
            Method::POST,
            "/api/v1/clusters",
            Some(&json!({"name": "erins", "template": "lifecycle", "size": 2})),
        )
        .await;
    assert_eq!(created.status(), 201);
    let bravo_admin = app.user("bravo-admin", Role::TenantAdmin, "bravo").await;
    let root = app.user("root", Role::Superadmin, "default").await;
    Tenants {
        app,
        acme_admin,
        erin,
        bravo_admin,
        root,
    }
}

async fn move_user(app: &TestApp, caller: &ApiUser, id: &str, body: Value) -> (u16, Value) {
    let response = app
        .call(
            caller,
            Method::PUT,
            &format!("/api/v1/users/{id}/tenant"),
            Some(&body),
        )
        .await;
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

async fn get(app: &TestApp, caller: &ApiUser, path: &str) -> (u16, Value) {
    let response = app.call(caller, Method::GET, path, None).await;
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The names of the clusters `caller` lists.
async fn cluster_names(app: &TestApp, caller: &ApiUser) -> Vec<String> {
    let (status, page) = get(app, caller, "/api/v1/clusters").await;
    assert_eq!(status, 200, "{page}");
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|cluster| cluster["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn a_moved_user_leaves_clusters_tokens_and_sessions_behind(backend: Backend) {
    let world = tenants(backend).await;
    let app = &world.app;
    let (erins_browser, _) = app.browser("erin").await;

    let (status, moved) =
        move_user(app, &world.root, &world.erin.id, json!({"tenant": "bravo"})).await;
    assert_eq!(status, 200, "{moved}");
    assert_eq!(moved["tenant_id"], world.bravo_admin.tenant_id.as_str());
    assert_eq!(moved["role"], "user", "the role stays");

    // Her token and her session no longer sign anything in.
    let (status, _) = get(app, &world.erin, "/api/v1/me").await;
    assert_eq!(status, 401, "the token of the old tenant is revoked");
    let session = erins_browser
        .get(app.url("/api/v1/me"))
        .send()
        .await
        .unwrap();
    assert_eq!(session.status(), 401, "her session ended");

    // Signed in again, she is in bravo and sees none of acme's clusters.
    let (browser, _) = app.browser("erin").await;
    let me: Value = browser
        .get(app.url("/api/v1/me"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(me["tenant_id"], world.bravo_admin.tenant_id.as_str());
    let clusters: Value = browser
        .get(app.url("/api/v1/clusters"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(clusters["total"], 0, "{clusters}");

    // Her cluster stays acme's, and no longer names an owner acme cannot see.
    assert_eq!(cluster_names(app, &world.acme_admin).await, ["erins"]);
    assert!(cluster_names(app, &world.bravo_admin).await.is_empty());
    let (_, users) = get(app, &world.acme_admin, "/api/v1/users").await;
    assert!(!users.to_string().contains("erin"), "acme's users: {users}");

    // Both tenants' logs have the move, from acme to bravo.
    for admin in [&world.acme_admin, &world.bravo_admin] {
        let (status, entries) = get(app, admin, "/api/v1/audit?action=user.move").await;
        assert_eq!(status, 200);
        let entries = entries.as_array().unwrap();
        assert_eq!(entries.len(), 1, "{entries:?}");
        assert_eq!(entries[0]["target"], "erin");
        assert_eq!(entries[0]["actor"], "root");
        assert!(
            entries[0]["before"].to_string().contains("acme"),
            "{entries:?}"
        );
        assert!(
            entries[0]["after"].to_string().contains("bravo"),
            "{entries:?}"
        );
    }
}

async fn a_refused_move_says_why_and_changes_nothing(backend: Backend) {
    let world = tenants(backend).await;
    let app = &world.app;
    let erin = &world.erin.id;
    let other_root = app.user("root2", Role::Superadmin, "default").await;

    let refusals = [
        // Tenant admins administer one tenant: not even their own user moves.
        (
            &world.acme_admin,
            erin.as_str(),
            json!({"tenant": "bravo"}),
            403,
            "only a superadmin",
        ),
        // Another tenant's user does not exist for a tenant admin.
        (
            &world.bravo_admin,
            erin.as_str(),
            json!({"tenant": "bravo"}),
            404,
            "not found",
        ),
        (
            &world.root,
            erin.as_str(),
            json!({"tenant": "nope"}),
            422,
            "no tenant named \"nope\"",
        ),
        (
            &world.root,
            erin.as_str(),
            json!({"tenant": ""}),
            422,
            "name the tenant",
        ),
        (
            &world.root,
            erin.as_str(),
            json!({"tenant": "acme"}),
            422,
            "already in tenant acme",
        ),
        (
            &world.root,
            erin.as_str(),
            json!({"tenant": "bravo", "role": "user"}),
            422,
            "role",
        ),
        // Superadmins belong to the default tenant: neither another one nor oneself moves.
        (
            &world.root,
            other_root.id.as_str(),
            json!({"tenant": "bravo"}),
            422,
            "superadmin",
        ),
        (
            &world.root,
            world.root.id.as_str(),
            json!({"tenant": "bravo"}),
            422,
            "superadmin",
        ),
        (
            &world.root,
            "00000000-0000-4000-8000-000000000000",
            json!({"tenant": "bravo"}),
            404,
            "not found",
        ),
    ];
    for (caller, id, body, expected, says) in refusals {
        let (status, error) = move_user(app, caller, id, body.clone()).await;
        assert_eq!(status, expected, "{body}: {error}");
        assert!(
            error["message"].as_str().unwrap().contains(says),
            "{body}: {error}"
        );
    }
    let (_, error) = move_user(app, &world.root, erin, json!({"tenant": "nope"})).await;
    assert_eq!(error["details"][0]["path"], "tenant", "{error}");

    // Nothing moved, nothing ended.
    let (status, me) = get(app, &world.erin, "/api/v1/me").await;
    assert_eq!(status, 200, "erin's token still works");
    assert_eq!(me["tenant_id"], world.erin.tenant_id.as_str());
    let root2 = app.store.user(&other_root.id).await.unwrap();
    assert_eq!(root2.tenant_id, world.root.tenant_id);
    let (_, entries) = get(app, &world.root, "/api/v1/audit?action=user.move").await;
    assert_eq!(entries.as_array().unwrap().len(), 0, "{entries}");
    // She still signs in where she was.
    let login = app
        .client
        .post(app.url("/api/v1/session"))
        .json(&json!({"username": "erin", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 200);
}

/// Lets users of `admin`'s tenant bring their own credentials for its provider `local`.
async fn allow_user_credentials(app: &TestApp, admin: &ApiUser) {
    let response = app
        .call(
            admin,
            Method::PUT,
            "/api/v1/catalog/providers/local",
            Some(&json!({
                "name": "local",
                "providertype": "local",
                "provisioner": {"user_credentials": true},
            })),
        )
        .await;
    assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
}

const MINE: &str = "/api/v1/providers/local/credentials/mine";

/// Erin set her own credentials for acme's provider `local`; moved to bravo, she sets
/// her own for bravo's provider of the same name. Before, that moved her acme row to
/// bravo (the row was keyed by user and provider): now each tenant keeps its own, and
/// bravo never shows or opens acme's.
async fn a_moved_user_neither_reads_nor_moves_her_old_tenants_credentials(backend: Backend) {
    let app = spawn_app(backend).await;
    let acme_admin = with_catalog(&app, "acme").await;
    let bravo_admin = with_catalog(&app, "bravo").await;
    let root = app.user("root", Role::Superadmin, "default").await;
    let erin = app.user("erin", Role::User, "acme").await;
    allow_user_credentials(&app, &acme_admin).await;
    allow_user_credentials(&app, &bravo_admin).await;
    let set = app
        .call(
            &erin,
            Method::PUT,
            MINE,
            Some(&json!({"token": "acme-s3cret"})),
        )
        .await;
    assert_eq!(set.status(), 200);

    let (status, moved) = move_user(&app, &root, &erin.id, json!({"tenant": "bravo"})).await;
    assert_eq!(status, 200, "{moved}");
    let (browser, csrf) = app.browser("erin").await;
    let hers: Value = browser
        .get(app.url(MINE))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(hers["set"], false, "acme's row is not bravo's: {hers}");
    let set = browser
        .put(app.url(MINE))
        .header("x-csrf-token", &csrf)
        .json(&json!({"token": "bravo-s3cret"}))
        .send()
        .await
        .unwrap();
    assert_eq!(set.status(), 200, "{}", set.text().await.unwrap());

    // Two rows, one per tenant, each opening only in its own tenant.
    let tenants: Vec<String> = sqlx::query_scalar(
        "SELECT tenant_id FROM user_provider_credentials WHERE user_id = $1 ORDER BY tenant_id",
    )
    .bind(&erin.id)
    .fetch_all(app.store.pool())
    .await
    .unwrap();
    let mut expected = vec![acme_admin.tenant_id.clone(), bravo_admin.tenant_id.clone()];
    expected.sort();
    assert_eq!(tenants, expected);
    for (tenant, token) in [
        (&acme_admin.tenant_id, "acme-s3cret"),
        (&bravo_admin.tenant_id, "bravo-s3cret"),
    ] {
        let binding = engine::provider::binding::of_catalog(
            &engine::catalog::load(&app.store, tenant).await.unwrap(),
            "local",
        )
        .unwrap();
        let opened = app
            .store
            .credentials_for(tenant, "local", &binding, Some(&erin.id), true)
            .await
            .unwrap();
        let engine::store::provider_credentials::OpenedCredentials::Open(credentials, _) = opened
        else {
            panic!("{tenant}: {opened:?}")
        };
        assert_eq!(credentials.field("token"), Some(token));
    }
    // Removing hers in bravo leaves acme's.
    let removed = browser
        .delete(app.url(MINE))
        .header("x-csrf-token", &csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(removed.status(), 200);
    assert!(app
        .store
        .stored_user_provider_credentials(&acme_admin.tenant_id, &erin.id, "local")
        .await
        .unwrap()
        .is_some());
}

engine::on_both_backends!(
    a_moved_user_leaves_clusters_tokens_and_sessions_behind,
    a_refused_move_says_why_and_changes_nothing,
    a_moved_user_neither_reads_nor_moves_her_old_tenants_credentials
);
