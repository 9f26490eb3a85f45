//! Cluster requests through the API: dry runs, refusals (unsatisfiable, duplicate
//! name, quota) with clear errors and nothing stored, and the audit trail.

use engine::store::users::Role;
use engine::store::Backend;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{json_of, spawn_app, with_catalog, ApiUser, TestApp};

async fn create(app: &TestApp, user: &ApiUser, body: Value) -> (u16, Value) {
    json_of(
        app.call(user, Method::POST, "/api/v1/clusters", Some(&body))
            .await,
    )
    .await
}

async fn live_clusters(app: &TestApp, user: &ApiUser) -> u64 {
    let (_, page) = json_of(app.call(user, Method::GET, "/api/v1/clusters", None).await).await;
    page["total"].as_u64().unwrap()
}

async fn refusals_name_the_problem_and_store_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = with_catalog(&app, "acme").await;

    let (status, plan) = json_of(
        app.call(
            &admin,
            Method::POST,
            "/api/v1/clusters?dry_run=true",
            Some(&json!({"name": "web", "template": "lifecycle", "size": 3})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200);
    assert!(plan["tasks"].as_u64().unwrap() > 0);
    assert_eq!(
        live_clusters(&app, &admin).await,
        0,
        "a dry run stores nothing"
    );

    let (status, body) = create(
        &app,
        &admin,
        json!({"name": "web", "template": "lifecycle", "size": 1}),
    )
    .await;
    assert_eq!(status, 422);
    assert!(
        body["message"].as_str().unwrap().contains("size 1"),
        "{body}"
    );
    assert!(!body["details"].as_array().unwrap().is_empty());

    let (status, body) = create(
        &app,
        &admin,
        json!({"name": "Bad Name!", "template": "lifecycle", "size": 2}),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(body["details"][0]["path"], "name", "{body}");

    let (status, body) = create(
        &app,
        &admin,
        json!({"name": "web", "template": "nope", "size": 2}),
    )
    .await;
    assert_eq!(status, 422);
    assert!(body["message"].as_str().unwrap().contains("nope"), "{body}");
    assert_eq!(live_clusters(&app, &admin).await, 0);

    let (status, created) = create(
        &app,
        &admin,
        json!({"name": "web", "template": "lifecycle", "size": 2}),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["cluster"]["state"], "creating");
    let (status, body) = create(
        &app,
        &admin,
        json!({"name": "web", "template": "lifecycle", "size": 2}),
    )
    .await;
    assert_eq!(status, 409);
    assert!(
        body["message"].as_str().unwrap().contains("already exists"),
        "{body}"
    );
    assert_eq!(live_clusters(&app, &admin).await, 1);

    let id = created["cluster"]["id"].as_str().unwrap();
    let (status, body) = json_of(
        app.call(
            &admin,
            Method::POST,
            &format!("/api/v1/clusters/{id}/changes"),
            Some(&json!({"operation": "restart"})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 409, "one job at a time: {body}");
}

async fn quotas_stop_growth_with_a_clear_message(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = with_catalog(&app, "small").await;
    let tenant = app.store.tenant_by_name("small").await.unwrap();
    app.store
        .set_tenant_quotas(&tenant.id, Some(1), Some(4))
        .await
        .unwrap();

    let sized =
        |name: &str, size: u32| json!({"name": name, "template": "lifecycle", "size": size});
    let (status, body) = create(&app, &admin, sized("big", 5)).await;
    assert_eq!(status, 409);
    assert_eq!(body["error"], "quota_exceeded");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("at most 4 node(s)"),
        "{body}"
    );

    let (status, _) = create(&app, &admin, sized("first", 3)).await;
    assert_eq!(status, 201);
    // Still being created, the cluster counts at its planned 3 nodes.
    app.store
        .set_tenant_quotas(&tenant.id, Some(2), Some(4))
        .await
        .unwrap();
    let (status, body) = create(&app, &admin, sized("second", 2)).await;
    assert_eq!(status, 409);
    assert!(
        body["message"].as_str().unwrap().contains("it has 3"),
        "{body}"
    );
    app.store
        .set_tenant_quotas(&tenant.id, Some(1), Some(4))
        .await
        .unwrap();
    let (status, body) = create(&app, &admin, sized("second", 2)).await;
    assert_eq!(status, 409);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("at most 1 cluster(s)"),
        "{body}"
    );
    assert_eq!(
        live_clusters(&app, &admin).await,
        1,
        "the refused create left nothing"
    );

    let (_, audit) = json_of(
        app.call(&admin, Method::GET, "/api/v1/audit?action=cluster.", None)
            .await,
    )
    .await;
    let actions: Vec<&str> = audit
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["cluster.create"], "only what happened is audited");
    assert_eq!(audit[0]["actor"], "small-admin");
}

async fn a_tenant_goes_only_when_its_clusters_are_gone(backend: Backend) {
    let app = spawn_app(backend).await;
    let root = app.user("root", Role::Superadmin, "default").await;
    let busy = with_catalog(&app, "busy").await;
    let (status, _) = create(
        &app,
        &busy,
        json!({"name": "keep", "template": "lifecycle", "size": 2}),
    )
    .await;
    assert_eq!(status, 201);
    let idle = app.user("idle-user", Role::User, "idle").await;

    let delete = |id: &str| {
        let path = format!("/api/v1/tenants/{id}");
        let (app, root) = (&app, &root);
        async move { app.call(root, Method::DELETE, &path, None).await }
    };
    let (status, body) = json_of(delete(&busy.tenant_id).await).await;
    assert_eq!(status, 409);
    assert!(
        body["message"].as_str().unwrap().contains("keep"),
        "names the cluster: {body}"
    );
    let (status, body) = json_of(delete(&root.tenant_id).await).await;
    assert_eq!(status, 422, "{body}");

    assert_eq!(delete(&idle.tenant_id).await.status(), 204);
    let gone = app.call(&idle, Method::GET, "/api/v1/me", None).await;
    assert_eq!(gone.status(), 401, "its users and tokens went with it");
    assert_eq!(delete(&idle.tenant_id).await.status(), 404);
}

async fn concurrent_creates_cannot_both_slip_under_the_quota(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = with_catalog(&app, "race").await;
    let tenant = app.store.tenant_by_name("race").await.unwrap();
    app.store
        .set_tenant_quotas(&tenant.id, Some(1), None)
        .await
        .unwrap();
    let body = |name: &str| json!({"name": name, "template": "lifecycle", "size": 2});
    let (one, two) = tokio::join!(
        create(&app, &admin, body("one")),
        create(&app, &admin, body("two"))
    );
    let mut statuses = [one.0, two.0];
    statuses.sort_unstable();
    assert_eq!(statuses, [201, 409], "{one:?} {two:?}");
    assert_eq!(live_clusters(&app, &admin).await, 1);
}

/// `corral apply` and scripts know clusters by name: every cluster path takes one, in
/// the caller's tenant only.
async fn clusters_are_found_by_name_in_their_tenant(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = with_catalog(&app, "acme").await;
    let other = with_catalog(&app, "globex").await;
    let (status, submitted) = create(
        &app,
        &admin,
        json!({"name": "web", "template": "lifecycle", "size": 3}),
    )
    .await;
    assert_eq!(status, 201, "{submitted}");
    let (status, by_name) = json_of(
        app.call(&admin, Method::GET, "/api/v1/clusters/web", None)
            .await,
    )
    .await;
    assert_eq!(status, 200, "{by_name}");
    assert_eq!(by_name["id"], submitted["cluster"]["id"]);
    assert_eq!(
        by_name["links"],
        json!([]),
        "no links before the nodes have addresses"
    );
    let (status, _) = json_of(
        app.call(&other, Method::GET, "/api/v1/clusters/web", None)
            .await,
    )
    .await;
    assert_eq!(status, 404, "another tenant's name is not found");
    let (status, body) = json_of(
        app.call(&admin, Method::GET, "/api/v1/clusters/nope", None)
            .await,
    )
    .await;
    assert_eq!(status, 404);
    assert!(
        body["message"].as_str().unwrap().contains("\"nope\""),
        "{body}"
    );
}

async fn a_delete_may_be_forced_and_says_so(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = with_catalog(&app, "acme").await;
    let (status, submitted) = create(
        &app,
        &admin,
        json!({"name": "stuck", "template": "lifecycle", "size": 2}),
    )
    .await;
    assert_eq!(status, 201, "{submitted}");
    // No workers run here: the create waits in the queue until it is cancelled.
    let create_job = submitted["job_id"].as_str().unwrap();
    let cancel = format!("/api/v1/jobs/{create_job}/cancel");
    let (status, body) = json_of(app.call(&admin, Method::POST, &cancel, None).await).await;
    assert!(status < 300, "{status} {body}");

    let (status, body) = json_of(
        app.call(
            &admin,
            Method::DELETE,
            "/api/v1/clusters/stuck?force=maybe",
            None,
        )
        .await,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("force"),
        "{body}"
    );
    let (status, body) = json_of(
        app.call(
            &admin,
            Method::DELETE,
            "/api/v1/clusters/stuck?force=true",
            None,
        )
        .await,
    )
    .await;
    assert_eq!(status, 202, "{body}");
    let job = format!("/api/v1/jobs/{}", body["job_id"].as_str().unwrap());
    let (status, job) = json_of(app.call(&admin, Method::GET, &job, None).await).await;
    assert_eq!(status, 200, "{job}");
    assert_eq!(
        (job["operation"].as_str(), job["forced"].as_bool()),
        (Some("delete"), Some(true))
    );
}

/// An upgrade's preview says what changed since the cluster's snapshot; one with
/// nothing to do, a bad batch size, or a template the catalog lost is refused naming
/// the problem, and a preview stores nothing.
async fn upgrades_say_what_changed_and_refuse_what_they_cannot_do(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = with_catalog(&app, "acme").await;
    let (status, created) = create(
        &app,
        &admin,
        json!({"name": "web", "template": "lifecycle", "size": 2}),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["cluster"]["id"].as_str().unwrap().to_owned();
    let plan = |body: Value| {
        let (app, admin, path) = (&app, &admin, format!("/api/v1/clusters/{id}/plan"));
        async move { json_of(app.call(admin, Method::POST, &path, Some(&body)).await).await }
    };
    let cluster = || {
        let (app, admin, path) = (&app, &admin, format!("/api/v1/clusters/{id}"));
        async move {
            json_of(app.call(admin, Method::GET, &path, None).await)
                .await
                .1
        }
    };
    assert_eq!(cluster().await["catalog_behind"], json!([]));

    let (status, body) = plan(json!({"operation": "upgrade"})).await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("already runs the catalog's current definitions"),
        "{body}"
    );
    let (status, body) = plan(json!({"operation": "upgrade", "max_unavailable": 0})).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["details"][0]["path"], "max_unavailable", "{body}");

    // The admin changes web's start.
    let mut catalog = crate::helpers::lifecycle_catalog();
    let web = catalog["services"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|service| service["name"] == "web")
        .unwrap();
    web["provisioner"]["actions"]["start"]["fields"]["args"] = json!("start --fast");
    let response = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/catalog/import",
            Some(&catalog),
        )
        .await;
    assert_eq!(response.status(), 200);
    let view = cluster().await;
    assert_eq!(
        view["catalog_behind"],
        json!([{"kind": "services", "name": "web", "change": "changed"}]),
        "{view}"
    );
    let (status, body) = plan(json!({"operation": "upgrade", "max_unavailable": 2})).await;
    assert_eq!(status, 200, "{body}");
    let change = &body["upgrade"]["changes"][0];
    assert_eq!(
        (&change["kind"], &change["name"]),
        (&json!("services"), &json!("web"))
    );
    assert_eq!(
        change["after"]["provisioner"]["actions"]["start"]["fields"]["args"],
        "start --fast"
    );
    assert_eq!(
        change["before"]["provisioner"]["actions"]["start"]["fields"]["args"],
        "start"
    );
    assert_eq!(
        cluster().await["catalog_behind"],
        view["catalog_behind"],
        "a preview changes nothing"
    );

    // A catalog without the cluster's template leaves nothing to upgrade to.
    // (Renamed: the catalog keeps a template, which it must have.)
    for template in catalog["clustertemplates"].as_array_mut().unwrap() {
        if template["name"] == "lifecycle" {
            template["name"] = json!("renamed");
        }
    }
    let response = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/catalog/import",
            Some(&catalog),
        )
        .await;
    assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
    let (status, body) = plan(json!({"operation": "upgrade"})).await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("template lifecycle is no longer in the catalog"),
        "{body}"
    );
}

engine::on_both_backends!(
    upgrades_say_what_changed_and_refuse_what_they_cannot_do,
    a_delete_may_be_forced_and_says_so,
    clusters_are_found_by_name_in_their_tenant,
    concurrent_creates_cannot_both_slip_under_the_quota,
    a_tenant_goes_only_when_its_clusters_are_gone,
    refusals_name_the_problem_and_store_nothing,
    quotas_stop_growth_with_a_clear_message,
);

#[tokio::test]
async fn leases_extend_by_the_templates_step_up_to_its_maximum() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = app.user("lease-admin", Role::TenantAdmin, "leases").await;
    let mut catalog = crate::helpers::lifecycle_catalog();
    catalog["clustertemplates"][0]["administration"] =
        json!({"leaseduration": {"initial": "1h", "max": "10h", "step": "2h"}});
    let response = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/catalog/import",
            Some(&catalog),
        )
        .await;
    assert_eq!(response.status(), 200);
    let (status, created) = create(
        &app,
        &admin,
        json!({"name": "leased", "template": "lifecycle", "size": 2}),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let lease = format!(
        "/api/v1/clusters/{}/lease",
        created["cluster"]["id"].as_str().unwrap()
    );
    let extend = |hours: u64| {
        let body = json!({"seconds": hours * 3600});
        let app = &app;
        let admin = &admin;
        let lease = lease.clone();
        async move { json_of(app.call(admin, Method::PUT, &lease, Some(&body)).await).await }
    };
    let (status, body) = extend(11).await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("maximum lease"),
        "{body}"
    );
    // The lease ends in 1 h; 4 h from now adds 3 h, more than the 2 h step.
    let (status, body) = extend(4).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["message"].as_str().unwrap().contains("step"), "{body}");
    let (status, body) = extend(2).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = extend(3).await;
    assert_eq!(status, 200, "one more step: {body}");
}
