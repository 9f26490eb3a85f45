//! Per-user and per-tenant limits at the API: a user's open job event streams, and the
//! node quota a new tenant gets, which a dry run is held to before it is planned.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{spawn_app, with_catalog, ApiUser, TestApp};
use engine::store::users::Role;
use engine::store::Backend;

async fn queued_job(app: &TestApp, user: &ApiUser) -> String {
    let response = app
        .call(
            user,
            Method::POST,
            "/api/v1/clusters",
            Some(&json!({"name": "watched", "template": "lifecycle", "size": 3})),
        )
        .await;
    assert_eq!(response.status(), 201);
    let created: Value = response.json().await.unwrap();
    created["job_id"].as_str().unwrap().to_owned()
}

/// The attack: one user opens stream after stream of a job that does not end (no
/// worker runs it here), each holding a connection and a task.
#[tokio::test]
async fn a_user_past_the_stream_limit_is_refused_until_a_stream_ends() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let job = queued_job(&app, &admin).await;
    let path = format!("/api/v1/jobs/{job}/stream");
    let mut open = Vec::new();
    for _ in 0..server::api::DEFAULT_STREAMS_PER_USER {
        let stream = app.call(&admin, Method::GET, &path, None).await;
        assert_eq!(stream.status(), 200);
        open.push(stream);
    }
    let refused = app.call(&admin, Method::GET, &path, None).await;
    assert_eq!(refused.status(), 429);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"], "too_many_streams", "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("16 job event streams open") && message.contains("close"),
        "{message}"
    );

    // Another user of the tenant has places of their own.
    let other = app.user("acme-watcher", Role::User, "acme").await;
    let theirs = app.call(&other, Method::GET, &path, None).await;
    assert_eq!(theirs.status(), 200);

    // A stream whose client goes away gives its place back.
    drop(open.pop());
    let mut again = 0;
    while again < 100 {
        let stream = app.call(&admin, Method::GET, &path, None).await;
        if stream.status() == 200 {
            break;
        }
        assert_eq!(stream.status(), 429);
        again += 1;
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(again < 100, "the closed stream's place never came back");
}

/// A tenant a superadmin makes without a node quota gets the server's default, and a
/// dry run past it is refused (before it is solved or planned) with the quota's name.
#[tokio::test]
async fn a_new_tenant_has_a_node_quota_that_dry_runs_are_held_to() {
    let app = spawn_app(Backend::Sqlite).await;
    with_catalog(&app, "acme").await;
    let root = app.user("root", Role::Superadmin, "default").await;
    let created = app
        .call(
            &root,
            Method::POST,
            "/api/v1/tenants",
            Some(&json!({"name": "fresh", "seed_catalog_from": "acme", "local_nodes": true})),
        )
        .await;
    assert_eq!(created.status(), 201);
    let tenant: Value = created.json().await.unwrap();
    assert_eq!(
        tenant["max_nodes"],
        engine::operations::DEFAULT_TENANT_MAX_NODES
    );
    let admin = app.user("fresh-admin", Role::TenantAdmin, "fresh").await;
    let dry_run = |size: u32| {
        let body = json!({"name": "big", "template": "lifecycle", "size": size});
        let (app, admin) = (&app, &admin);
        async move {
            app.call(
                admin,
                Method::POST,
                "/api/v1/clusters?dry_run=true",
                Some(&body),
            )
            .await
        }
    };
    let refused = dry_run(500).await;
    assert_eq!(refused.status(), 409);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"], "quota_exceeded", "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("at most 100 node(s)"),
        "{body}"
    );
    assert_eq!(dry_run(100).await.status(), 200);

    // The superadmin can still lift it.
    let lifted = app
        .call(
            &root,
            Method::PUT,
            &format!("/api/v1/tenants/{}/quotas", tenant["id"].as_str().unwrap()),
            Some(&json!({"max_clusters": null, "max_nodes": 600})),
        )
        .await;
    assert_eq!(lifted.status(), 200, "{}", lifted.text().await.unwrap());
    assert_eq!(dry_run(500).await.status(), 200);
}
