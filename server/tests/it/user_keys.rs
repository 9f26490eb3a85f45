//! Users' own SSH keys (issue 41, point 1): keys are checked and kept per user, a real
//! local node's sshd accepts the owner's key once the cluster is built and refuses it
//! after the key is removed (each change put on the cluster by a `sync-keys` job), a
//! colleague's key never opens it, and a tenant's admins' keys go on every cluster of
//! the tenant only while the tenant says so.

use std::sync::Arc;

use engine::ssh::ClientKeyPair;
use engine::store::users::Role;
use engine::store::Backend;
use reqwest::Method;
use russh::keys::key::PrivateKeyWithHashAlg;
use russh::keys::{PrivateKey, PublicKey};
use serde_json::{json, Value};

use crate::approvals::{plain_catalog, succeeded};
use crate::helpers::local_pool;
use crate::helpers::{spawn_app, ApiUser, TestApp};
use crate::node_shell::Pinned;

/// Where the node's sshd is, its host key and its user, from its stored record.
async fn node_record(app: &TestApp, cluster: &str) -> (String, String, String) {
    let node = app.store.list_nodes(cluster).await.unwrap().remove(0);
    let record: Value = serde_json::from_str(node.provider_json.as_deref().unwrap()).unwrap();
    (
        format!("{}:{}", record["host"].as_str().unwrap(), record["port"]),
        record["host_key"].as_str().unwrap().to_owned(),
        record["user"].as_str().unwrap().to_owned(),
    )
}

/// Whether the node's sshd lets `key` sign in as its user (plain public key auth, as
/// `ssh -i` would).
async fn key_opens(app: &TestApp, cluster: &str, key: &ClientKeyPair) -> bool {
    let (address, host_key, user) = node_record(app, cluster).await;
    let stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let handler = Pinned(PublicKey::from_openssh(&host_key).unwrap());
    let mut handle =
        russh::client::connect_stream(Arc::new(russh::client::Config::default()), stream, handler)
            .await
            .unwrap();
    let private = PrivateKey::from_openssh(&key.private_openssh).unwrap();
    let auth = handle
        .authenticate_publickey(user, PrivateKeyWithHashAlg::new(Arc::new(private), None))
        .await
        .unwrap();
    auth.success()
}

async fn add_key(app: &TestApp, user: &ApiUser, key: &str) -> (u16, Value) {
    app.call_json(
        user,
        Method::POST,
        "/api/v1/me/keys",
        Some(json!({"public_key": key})),
    )
    .await
}

/// Waits for each sync-keys job a key change started, checking it names `cluster`.
async fn synced(app: &TestApp, user: &ApiUser, change: &Value, cluster: &str) {
    let clusters = change["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 1, "{change}");
    assert_eq!(clusters[0]["cluster_id"], cluster, "{change}");
    let job = clusters[0]["job_id"].as_str().expect("a sync-keys job");
    succeeded(app, user, job).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_users_key_opens_their_nodes_until_it_is_removed() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = app.user("keys-admin", Role::TenantAdmin, "keys").await;
    let (status, _) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/catalog/import",
            Some(plain_catalog()),
        )
        .await;
    assert_eq!(status, 200);
    let owner = app.user("keys-owner", Role::User, "keys").await;
    let colleague = app.user("keys-colleague", Role::User, "keys").await;
    let nodes = tempfile::tempdir().unwrap();
    let _pool = local_pool(&app, nodes.path()).await;
    let owner_key = ClientKeyPair::generate("owner@laptop").unwrap();
    let colleague_key = ClientKeyPair::generate("colleague@laptop").unwrap();
    let admin_key = ClientKeyPair::generate("admin@laptop").unwrap();

    // Kept before any cluster: nothing to sync yet.
    let (status, added) = add_key(&app, &owner, &owner_key.public_openssh).await;
    assert_eq!(status, 201, "{added}");
    assert_eq!(added["clusters"], json!([]));
    assert_eq!(added["key"]["comment"], "owner@laptop");
    let (status, _) = add_key(&app, &colleague, &colleague_key.public_openssh).await;
    assert_eq!(status, 201);
    let (status, _) = add_key(&app, &admin, &admin_key.public_openssh).await;
    assert_eq!(status, 201);

    // The build puts the owner's key on the node; nobody else's.
    let (status, created) = app
        .call_json(
            &owner,
            Method::POST,
            "/api/v1/clusters",
            Some(json!({"name": "keyed", "template": "plain", "size": 1})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let cluster = created["cluster"]["id"].as_str().unwrap().to_owned();
    succeeded(&app, &owner, created["job_id"].as_str().unwrap()).await;
    assert!(key_opens(&app, &cluster, &owner_key).await);
    assert!(!key_opens(&app, &cluster, &colleague_key).await);
    assert!(!key_opens(&app, &cluster, &admin_key).await);

    // The preview of a sync lists the keys the nodes will have.
    let (status, plan) = app
        .call_json(
            &owner,
            Method::POST,
            &format!("/api/v1/clusters/{cluster}/plan"),
            Some(json!({"operation": "sync-keys"})),
        )
        .await;
    assert_eq!(status, 200, "{plan}");
    assert_eq!(plan["keys"].as_array().unwrap().len(), 1, "{plan}");
    assert_eq!(plan["keys"][0]["username"], "keys-owner");
    assert_eq!(
        plan["step_counts"],
        json!([{"step": "bootstrap", "tasks": 1}])
    );

    // The tenant puts its admins' keys everywhere: every active cluster is synced.
    let tenant = &admin.tenant_id;
    let setting = format!("/api/v1/tenants/{tenant}/admin-keys");
    let (status, refused) = app
        .call_json(
            &owner,
            Method::PUT,
            &setting,
            Some(json!({"admin_keys_on_all_clusters": true})),
        )
        .await;
    assert_eq!(status, 403, "{refused}");
    let (status, jobs) = app
        .call_json(
            &admin,
            Method::PUT,
            &setting,
            Some(json!({"admin_keys_on_all_clusters": true})),
        )
        .await;
    assert_eq!(status, 200, "{jobs}");
    synced(&app, &admin, &json!({"clusters": jobs}), &cluster).await;
    assert!(key_opens(&app, &cluster, &admin_key).await);
    assert!(key_opens(&app, &cluster, &owner_key).await);
    assert!(!key_opens(&app, &cluster, &colleague_key).await);

    // Removed: off the node after the sync the removal starts.
    let (_, keys) = app
        .call_json(&owner, Method::GET, "/api/v1/me/keys", None)
        .await;
    let id = keys[0]["id"].as_str().unwrap();
    let (status, _) = app
        .call_json(
            &colleague,
            Method::DELETE,
            &format!("/api/v1/me/keys/{id}"),
            None,
        )
        .await;
    assert_eq!(status, 404, "another user's key is not found");
    let (status, removed) = app
        .call_json(
            &owner,
            Method::DELETE,
            &format!("/api/v1/me/keys/{id}"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{removed}");
    synced(&app, &owner, &removed, &cluster).await;
    assert!(!key_opens(&app, &cluster, &owner_key).await);
    assert!(
        key_opens(&app, &cluster, &admin_key).await,
        "the admin's stays"
    );
}

async fn bad_keys_are_refused_naming_the_problem(backend: Backend) {
    let app = spawn_app(backend).await;
    let user = app.user("picky", Role::User, "picky").await;
    let other = app.user("other", Role::User, "elsewhere").await;
    let key = ClientKeyPair::generate("picky@laptop").unwrap();
    let private_body = key.private_openssh.lines().nth(1).unwrap().to_owned();
    for (text, says) in [
        ("hello".to_owned(), "not an OpenSSH public key"),
        (key.private_openssh.clone(), "private key"),
        (
            format!("{}\n{}", key.public_openssh, key.public_openssh),
            "one key at a time",
        ),
        (format!("command=\"id\" {}", key.public_openssh), "options"),
        (String::new(), "no key"),
    ] {
        let (status, body) = add_key(&app, &user, &text).await;
        assert_eq!(status, 422, "{text:?}: {body}");
        assert_eq!(body["details"][0]["path"], "public_key", "{body}");
        assert!(
            body["message"].as_str().unwrap().contains(says),
            "{says}: {body}"
        );
        assert!(!body.to_string().contains(&private_body), "{body}");
    }
    let (status, body) = app
        .call_json(
            &user,
            Method::POST,
            "/api/v1/me/keys",
            Some(json!({"public_key": key.public_openssh, "options": "x"})),
        )
        .await;
    assert_eq!(status, 422, "unknown fields are refused: {body}");
    let (_, listed) = app
        .call_json(&user, Method::GET, "/api/v1/me/keys", None)
        .await;
    assert_eq!(listed, json!([]), "nothing kept");

    // The same key twice is a conflict naming it; so is a 21st key.
    let (status, first) = add_key(&app, &user, &key.public_openssh).await;
    assert_eq!(status, 201, "{first}");
    let (status, twice) = add_key(&app, &user, &key.public_openssh).await;
    assert_eq!(status, 409, "{twice}");
    let fingerprint = first["key"]["fingerprint"].as_str().unwrap();
    assert!(twice["message"].as_str().unwrap().contains(fingerprint));
    for n in 1..20 {
        let more = ClientKeyPair::generate(&format!("key-{n}")).unwrap();
        let (status, body) = add_key(&app, &user, &more.public_openssh).await;
        assert_eq!(status, 201, "{n}: {body}");
    }
    let last = ClientKeyPair::generate("one too many").unwrap();
    let (status, full) = add_key(&app, &user, &last.public_openssh).await;
    assert_eq!(status, 409, "{full}");
    assert!(
        full["message"].as_str().unwrap().contains("20 keys"),
        "{full}"
    );

    // Keys are each user's own: another user sees none and removes none; unknown ids
    // are 404; without a session nothing is answered.
    let (_, theirs) = app
        .call_json(&other, Method::GET, "/api/v1/me/keys", None)
        .await;
    assert_eq!(theirs, json!([]));
    let id = first["key"]["id"].as_str().unwrap();
    let (status, _) = app
        .call_json(
            &other,
            Method::DELETE,
            &format!("/api/v1/me/keys/{id}"),
            None,
        )
        .await;
    assert_eq!(status, 404);
    let (status, _) = app
        .call_json(&user, Method::DELETE, "/api/v1/me/keys/no-such-key", None)
        .await;
    assert_eq!(status, 404);
    let response = app
        .client
        .get(format!("{}/api/v1/me/keys", app.address))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);

    // The tenant setting: a plain user may not read it; another tenant's is not found.
    let (status, _) = app
        .call_json(
            &user,
            Method::GET,
            &format!("/api/v1/tenants/{}/admin-keys", user.tenant_id),
            None,
        )
        .await;
    assert_eq!(status, 403);
    let admin = app.user("picky-admin", Role::TenantAdmin, "picky").await;
    let (status, _) = app
        .call_json(
            &admin,
            Method::GET,
            &format!("/api/v1/tenants/{}/admin-keys", other.tenant_id),
            None,
        )
        .await;
    assert_eq!(status, 404);
    let (status, setting) = app
        .call_json(
            &admin,
            Method::GET,
            &format!("/api/v1/tenants/{}/admin-keys", admin.tenant_id),
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(setting, json!({"admin_keys_on_all_clusters": false}));
}

#[tokio::test]
async fn bad_keys_are_refused_naming_the_problem_sqlite() {
    bad_keys_are_refused_naming_the_problem(Backend::Sqlite).await;
}

#[tokio::test]
async fn bad_keys_are_refused_naming_the_problem_postgres() {
    bad_keys_are_refused_naming_the_problem(Backend::Postgres).await;
}
