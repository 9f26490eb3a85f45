//! Groups, template visibility and approvals through the API (issue 44, points 2 and
//! 3), on SQLite and PostgreSQL: a template limited to a group is invisible to users
//! outside it (lists, reads, the create form, creates) and usable by its members; a
//! rule holds a create with nothing queued, the requester cannot approve it, an admin
//! can (its job is then queued), a denial's reason reaches the requester, an
//! undecided request expires; and bad input gets the right status.

use engine::store::users::Role;
use engine::store::Backend;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{
    lifecycle_catalog, local_pool, render_page, spawn_app, ApiUser, TestApp, PASSWORD,
};

/// The lifecycle catalog plus `team-stack`, the same template limited to `data-team`.
fn catalog_with_limited_template() -> Value {
    let mut catalog = lifecycle_catalog();
    let templates = catalog["clustertemplates"].as_array_mut().unwrap();
    let mut limited = templates[0].clone();
    limited["name"] = json!("team-stack");
    limited["groups"] = json!(["data-team"]);
    templates.push(limited);
    catalog
}

/// A signed-in browser (session cookie) for server-rendered pages.
async fn signed_in_browser(app: &TestApp, username: &str) -> reqwest::Client {
    let browser = reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let response = browser
        .post(app.url("/api/v1/session"))
        .json(&json!({"username": username, "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    browser
}

fn template_names(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn a_template_limited_to_a_group_is_seen_and_used_by_its_members_only(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = app.user("team-admin", Role::TenantAdmin, "team").await;
    let (status, _) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/catalog/import",
            Some(catalog_with_limited_template()),
        )
        .await;
    assert_eq!(status, 200);
    let outsider = app.user("outsider", Role::User, "team").await;
    let member = app.user("member", Role::User, "team").await;
    let (status, group) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/groups",
            Some(json!({"name": "data-team"})),
        )
        .await;
    assert_eq!(status, 201, "{group}");
    let (status, group) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/groups/data-team/members",
            Some(json!({"username": "member"})),
        )
        .await;
    assert_eq!(status, 200, "{group}");
    assert_eq!(group["members"], json!(["member"]));

    // Outside the group: not listed, not readable, not creatable, as if it did not exist.
    let (_, listed) = app
        .call_json(
            &outsider,
            Method::GET,
            "/api/v1/catalog/clustertemplates",
            None,
        )
        .await;
    assert_eq!(template_names(&listed), vec!["lifecycle"]);
    assert_eq!(listed["total"], 1);
    let (status, _) = app
        .call_json(
            &outsider,
            Method::GET,
            "/api/v1/catalog/clustertemplates/team-stack",
            None,
        )
        .await;
    assert_eq!(status, 404);
    let (status, _) = app
        .call_json(
            &outsider,
            Method::GET,
            "/api/v1/catalog/clustertemplates/team-stack/history",
            None,
        )
        .await;
    assert_eq!(status, 404);
    let (_, bundle) = app
        .call_json(&outsider, Method::GET, "/api/v1/catalog", None)
        .await;
    assert!(!bundle.to_string().contains("team-stack"), "{bundle}");
    let (hidden_status, hidden) = app
        .call_json(
            &outsider,
            Method::POST,
            "/api/v1/clusters",
            Some(json!({"name": "x", "template": "team-stack", "size": 2})),
        )
        .await;
    let (missing_status, missing) = app
        .call_json(
            &outsider,
            Method::POST,
            "/api/v1/clusters",
            Some(json!({"name": "x", "template": "no-such-stack", "size": 2})),
        )
        .await;
    assert_eq!(hidden_status, 422, "{hidden}");
    assert_eq!(hidden_status, missing_status);
    assert_eq!(
        hidden["message"]
            .as_str()
            .unwrap()
            .replace("team-stack", "T"),
        missing["message"]
            .as_str()
            .unwrap()
            .replace("no-such-stack", "T"),
        "a hidden template is refused exactly as a missing one"
    );
    let (status, _) = app
        .call_json(
            &outsider,
            Method::POST,
            "/api/v1/clusters?dry_run=true",
            Some(json!({"name": "x", "template": "team-stack", "size": 2})),
        )
        .await;
    assert_eq!(status, 422);
    // The portal's create form offers only what the caller may use.
    let browser = signed_in_browser(&app, "outsider").await;
    let (status, page) = render_page(&browser, &app.url("/clusters/new")).await;
    assert_eq!(status, 200);
    assert!(
        page.contains("lifecycle") && !page.contains("team-stack"),
        "the form offers team-stack to an outsider"
    );

    // A member sees and uses it; the admin sees everything.
    let (_, listed) = app
        .call_json(
            &member,
            Method::GET,
            "/api/v1/catalog/clustertemplates",
            None,
        )
        .await;
    assert_eq!(template_names(&listed), vec!["lifecycle", "team-stack"]);
    let (status, _) = app
        .call_json(
            &member,
            Method::GET,
            "/api/v1/catalog/clustertemplates/team-stack",
            None,
        )
        .await;
    assert_eq!(status, 200);
    let browser = signed_in_browser(&app, "member").await;
    let (_, page) = render_page(&browser, &app.url("/clusters/new")).await;
    assert!(
        page.contains("team-stack"),
        "the form offers team-stack to a member"
    );
    let (status, created) = app
        .call_json(
            &member,
            Method::POST,
            "/api/v1/clusters",
            Some(json!({"name": "analytics", "template": "team-stack", "size": 2})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["cluster"]["state"], "creating");
    let (_, listed) = app
        .call_json(
            &admin,
            Method::GET,
            "/api/v1/catalog/clustertemplates",
            None,
        )
        .await;
    assert_eq!(template_names(&listed), vec!["lifecycle", "team-stack"]);

    // Out of the group again: hidden again.
    let (status, _) = app
        .call_json(
            &admin,
            Method::DELETE,
            "/api/v1/groups/data-team/members/member",
            None,
        )
        .await;
    assert_eq!(status, 200);
    let (status, _) = app
        .call_json(
            &member,
            Method::GET,
            "/api/v1/catalog/clustertemplates/team-stack",
            None,
        )
        .await;
    assert_eq!(status, 404);

    // Groups refuse bad input, and are for tenant admins.
    let (status, body) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/groups",
            Some(json!({"name": "data-team"})),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    let (status, body) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/groups",
            Some(json!({"name": "Bad Name!"})),
        )
        .await;
    assert_eq!(
        (status, body["details"][0]["path"].as_str()),
        (422, Some("name")),
        "{body}"
    );
    let (status, _) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/groups/data-team/members",
            Some(json!({"username": "nobody"})),
        )
        .await;
    assert_eq!(status, 404);
    let (status, _) = app
        .call_json(&member, Method::GET, "/api/v1/groups", None)
        .await;
    assert_eq!(status, 403);
    let (_, audit) = app
        .call_json(&admin, Method::GET, "/api/v1/audit?limit=500", None)
        .await;
    let audit = audit.to_string();
    for action in ["group.add", "group.member-add", "group.member-remove"] {
        assert!(audit.contains(action), "{action} audited");
    }
}

/// The cluster's state, its jobs and its approval requests, as its requester sees them.
async fn cluster_of(app: &TestApp, user: &ApiUser, id: &str) -> Value {
    let (status, detail) = app
        .call_json(user, Method::GET, &format!("/api/v1/clusters/{id}"), None)
        .await;
    assert_eq!(status, 200, "{detail}");
    detail
}

async fn a_rule_holds_a_create_until_an_approver_decides(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = app.user("ops-admin", Role::TenantAdmin, "ops").await;
    let (status, _) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/catalog/import",
            Some(lifecycle_catalog()),
        )
        .await;
    assert_eq!(status, 200);
    let user = app.user("ops-user", Role::User, "ops").await;
    let (status, rule) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/approval-rules",
            Some(json!({"kind": "size-above", "value": "3"})),
        )
        .await;
    assert_eq!(status, 201, "{rule}");
    assert_eq!(rule["description"], "size above 3");
    assert_eq!(rule["window_secs"], 86_400);
    // A hook that hears approval.needed (a public address never called: no delivery
    // loop runs in this test server).
    let (status, hook) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/hooks",
            Some(json!({"url": "http://8.8.8.8/approvals", "events": ["approval.needed"]})),
        )
        .await;
    assert_eq!(status, 201, "{hook}");
    let hook = hook["hook"]["id"].as_str().unwrap().to_owned();

    // At the limit: not held.
    let (status, small) = app
        .call_json(
            &user,
            Method::POST,
            "/api/v1/clusters",
            Some(json!({"name": "small", "template": "lifecycle", "size": 3})),
        )
        .await;
    assert_eq!(status, 201);
    assert!(small["approval"].is_null() && !small["job_id"].as_str().unwrap().is_empty());

    // Above it: held, nothing queued, no node.
    let (status, held) = app
        .call_json(
            &user,
            Method::POST,
            "/api/v1/clusters",
            Some(json!({"name": "big", "template": "lifecycle", "size": 5})),
        )
        .await;
    assert_eq!(status, 201, "{held}");
    assert_eq!(held["cluster"]["state"], "awaiting-approval");
    assert_eq!(held["job_id"], "");
    let request = held["approval"]["id"].as_str().unwrap().to_owned();
    assert_eq!(held["approval"]["state"], "pending");
    assert_eq!(held["approval"]["rule"], "size above 3");
    assert_eq!(held["approval"]["size"], 5);
    assert!(
        held["approval"]["tasks"].as_u64().unwrap() > 0,
        "the request shows its plan"
    );
    let cluster = held["cluster"]["id"].as_str().unwrap().to_owned();
    let (_, deliveries) = app
        .call_json(
            &admin,
            Method::GET,
            &format!("/api/v1/hooks/{hook}/deliveries"),
            None,
        )
        .await;
    assert_eq!(
        deliveries["total"], 1,
        "one approval.needed for the held create"
    );
    assert_eq!(deliveries["items"][0]["event"], "approval.needed");
    let detail = cluster_of(&app, &user, &cluster).await;
    assert_eq!(detail["jobs"], json!([]), "no job while it waits");
    assert_eq!(detail["nodes"], json!([]));
    assert_eq!(detail["approvals"][0]["state"], "pending");
    // A held cluster takes no change but is decided first.
    let (status, body) = app
        .call_json(
            &user,
            Method::POST,
            &format!("/api/v1/clusters/{cluster}/changes"),
            Some(json!({"operation": "restart"})),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("approver decides"),
        "{body}"
    );

    // The requester sees it, but may not approve it.
    let (_, mine) = app
        .call_json(&user, Method::GET, "/api/v1/approvals", None)
        .await;
    assert_eq!(mine.as_array().unwrap().len(), 1);
    let (status, refused) = app
        .call_json(
            &user,
            Method::POST,
            &format!("/api/v1/approvals/{request}/approve"),
            None,
        )
        .await;
    assert_eq!(status, 403, "{refused}");
    assert_eq!(
        refused["message"],
        "you asked for this yourself; another approver must decide it"
    );
    let another = app.user("ops-other", Role::User, "ops").await;
    let (status, refused) = app
        .call_json(
            &another,
            Method::POST,
            &format!("/api/v1/approvals/{request}/approve"),
            None,
        )
        .await;
    assert_eq!(status, 403);
    assert_eq!(
        refused["message"],
        "only a tenant admin may decide this request"
    );
    assert_eq!(cluster_of(&app, &user, &cluster).await["jobs"], json!([]));

    // Another tenant's admin does not find it.
    let stranger = app.user("else-admin", Role::TenantAdmin, "elsewhere").await;
    for path in [
        format!("/api/v1/approvals/{request}"),
        format!("/api/v1/approvals/{request}/approve"),
    ] {
        let method = if path.ends_with("approve") {
            Method::POST
        } else {
            Method::GET
        };
        let (status, _) = app.call_json(&stranger, method, &path, None).await;
        assert_eq!(status, 404, "{path}");
    }
    let (status, _) = app
        .call_json(
            &stranger,
            Method::POST,
            &format!("/api/v1/approvals/{request}/deny"),
            Some(json!({"reason": "no"})),
        )
        .await;
    assert_eq!(status, 404);
    let (_, theirs) = app
        .call_json(&stranger, Method::GET, "/api/v1/approvals", None)
        .await;
    assert_eq!(theirs, json!([]));

    // The admin approves: the create job is queued, once.
    let (status, approved) = app
        .call_json(
            &admin,
            Method::POST,
            &format!("/api/v1/approvals/{request}/approve"),
            None,
        )
        .await;
    assert_eq!(status, 202, "{approved}");
    let job = approved["job_id"].as_str().unwrap().to_owned();
    assert!(!job.is_empty());
    assert_eq!(approved["cluster"]["state"], "creating");
    assert_eq!(approved["approval"]["state"], "approved");
    assert_eq!(approved["approval"]["decided_by"], "ops-admin");
    let detail = cluster_of(&app, &user, &cluster).await;
    assert_eq!(detail["jobs"][0]["id"], job.as_str());
    let (status, tasks) = app
        .call_json(
            &user,
            Method::GET,
            &format!("/api/v1/jobs/{job}/tasks?limit=500"),
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        tasks["total"], held["approval"]["tasks"],
        "the job runs the plan the request showed"
    );
    let (status, again) = app
        .call_json(
            &admin,
            Method::POST,
            &format!("/api/v1/approvals/{request}/approve"),
            None,
        )
        .await;
    assert_eq!(status, 409, "{again}");
    assert!(
        again["message"]
            .as_str()
            .unwrap()
            .contains("already approved"),
        "{again}"
    );

    // Denied with a reason the requester sees; the name is free again.
    let (_, held) = app
        .call_json(
            &user,
            Method::POST,
            "/api/v1/clusters",
            Some(json!({"name": "huge", "template": "lifecycle", "size": 6})),
        )
        .await;
    let denied_id = held["approval"]["id"].as_str().unwrap().to_owned();
    let denied_cluster = held["cluster"]["id"].as_str().unwrap().to_owned();
    for body in [json!({}), json!({"reason": "  "})] {
        let (status, refused) = app
            .call_json(
                &admin,
                Method::POST,
                &format!("/api/v1/approvals/{denied_id}/deny"),
                Some(body),
            )
            .await;
        assert_eq!(status, 400, "{refused}");
        assert!(
            refused["message"].as_str().unwrap().contains("reason"),
            "{refused}"
        );
    }
    let (status, denied) = app
        .call_json(
            &admin,
            Method::POST,
            &format!("/api/v1/approvals/{denied_id}/deny"),
            Some(json!({"reason": "six nodes is more than this project needs"})),
        )
        .await;
    assert_eq!(status, 200, "{denied}");
    assert_eq!(denied["state"], "denied");
    let detail = cluster_of(&app, &user, &denied_cluster).await;
    assert_eq!(detail["state"], "deleted");
    assert_eq!(detail["jobs"], json!([]));
    assert_eq!(
        detail["approvals"][0]["reason"],
        "six nodes is more than this project needs"
    );
    assert_eq!(detail["approvals"][0]["decided_by"], "ops-admin");
    let (status, _) = app
        .call_json(
            &admin,
            Method::POST,
            &format!("/api/v1/approvals/{denied_id}/deny"),
            Some(json!({"reason": "again"})),
        )
        .await;
    assert_eq!(status, 409);

    // An undecided request expires at the end of its rule's window.
    let (status, _) = app
        .call_json(
            &admin,
            Method::DELETE,
            &format!("/api/v1/approval-rules/{}", rule["id"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(status, 204);
    let (status, _) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/approval-rules",
            Some(json!({"kind": "template", "value": "lifecycle", "window_secs": 1})),
        )
        .await;
    assert_eq!(status, 201);
    let (_, held) = app
        .call_json(
            &user,
            Method::POST,
            "/api/v1/clusters",
            Some(json!({"name": "late", "template": "lifecycle", "size": 2})),
        )
        .await;
    let late = held["approval"]["id"].as_str().unwrap().to_owned();
    let late_cluster = held["cluster"]["id"].as_str().unwrap().to_owned();
    assert_eq!(held["approval"]["rule"], "template lifecycle");
    assert_eq!(
        engine::service::expire_due_approvals(&app.store, engine::store::now_ms())
            .await
            .unwrap(),
        0,
        "not yet"
    );
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    // What the janitor's round does.
    assert_eq!(
        engine::service::expire_due_approvals(&app.store, engine::store::now_ms())
            .await
            .unwrap(),
        1
    );
    let detail = cluster_of(&app, &user, &late_cluster).await;
    assert_eq!(detail["state"], "deleted");
    assert_eq!(detail["approvals"][0]["state"], "expired");
    assert_eq!(
        detail["approvals"][0]["reason"],
        "not decided within the rule's window"
    );
    let (status, _) = app
        .call_json(
            &admin,
            Method::POST,
            &format!("/api/v1/approvals/{late}/approve"),
            None,
        )
        .await;
    assert_eq!(status, 409);

    // Bad rules are refused naming the problem.
    let (status, body) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/approval-rules",
            Some(json!({"kind": "cost-below", "value": "10"})),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["details"][0]["path"], "kind");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("unknown rule kind \"cost-below\""),
        "{body}"
    );
    let (status, body) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/approval-rules",
            Some(json!({"kind": "size-above", "value": "lots"})),
        )
        .await;
    assert_eq!(
        (status, body["details"][0]["path"].as_str()),
        (422, Some("value")),
        "{body}"
    );
    let (status, body) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/approval-rules",
            Some(json!({"kind": "provider", "value": "local", "approvers": "no-such-group"})),
        )
        .await;
    assert_eq!(
        (status, body["details"][0]["path"].as_str()),
        (422, Some("approvers")),
        "{body}"
    );
    let (status, _) = app
        .call_json(
            &user,
            Method::POST,
            "/api/v1/approval-rules",
            Some(json!({"kind": "size-above", "value": "1"})),
        )
        .await;
    assert_eq!(status, 403);

    // Every step is audited.
    let (_, audit) = app
        .call_json(&admin, Method::GET, "/api/v1/audit?limit=500", None)
        .await;
    let audit = audit.to_string();
    for action in [
        "approval-rule.add",
        "approval-rule.remove",
        "approval.request",
        "approval.approve",
        "approval.deny",
    ] {
        assert!(audit.contains(action), "{action} audited");
    }
}

/// A rule's approver group decides too; an admin's own create is not held.
async fn a_rules_group_decides_and_admins_are_not_held(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = app.user("lab-admin", Role::TenantAdmin, "lab").await;
    let (status, _) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/catalog/import",
            Some(lifecycle_catalog()),
        )
        .await;
    assert_eq!(status, 200);
    let user = app.user("lab-user", Role::User, "lab").await;
    let lead = app.user("lab-lead", Role::User, "lab").await;
    app.call_json(
        &admin,
        Method::POST,
        "/api/v1/groups",
        Some(json!({"name": "leads"})),
    )
    .await;
    app.call_json(
        &admin,
        Method::POST,
        "/api/v1/groups/leads/members",
        Some(json!({"username": "lab-lead"})),
    )
    .await;
    let (status, _) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/approval-rules",
            Some(json!({"kind": "provider", "value": "local", "approvers": "leads"})),
        )
        .await;
    assert_eq!(status, 201);
    let (_, own) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/clusters",
            Some(json!({"name": "admins", "template": "lifecycle", "size": 2})),
        )
        .await;
    assert!(own["approval"].is_null(), "{own}");
    let (_, held) = app
        .call_json(
            &user,
            Method::POST,
            "/api/v1/clusters",
            Some(json!({"name": "users", "template": "lifecycle", "size": 2})),
        )
        .await;
    let request = held["approval"]["id"].as_str().unwrap().to_owned();
    assert_eq!(held["approval"]["approvers"], "leads");
    let (_, seen) = app
        .call_json(&lead, Method::GET, "/api/v1/approvals?pending=true", None)
        .await;
    assert_eq!(
        seen[0]["id"],
        request.as_str(),
        "the group's members see what they decide"
    );
    let (status, denied) = app
        .call_json(
            &lead,
            Method::POST,
            &format!("/api/v1/approvals/{request}/deny"),
            Some(json!({"reason": "use the shared cluster"})),
        )
        .await;
    assert_eq!(status, 200, "{denied}");
    assert_eq!(denied["decided_by"], "lab-lead");
}

/// Waits (at most 3 minutes) for a job to succeed.
pub(crate) async fn succeeded(app: &TestApp, user: &ApiUser, job: &str) {
    for _ in 0..1800 {
        let (_, view) = app
            .call_json(user, Method::GET, &format!("/api/v1/jobs/{job}"), None)
            .await;
        match view["state"].as_str() {
            Some("succeeded") => return,
            Some("failed" | "cancelled") => panic!("job {job} ended: {view}"),
            _ => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
        }
    }
    panic!("job {job} did not end in 3 minutes");
}

/// The lifecycle catalog plus `plain`: nodes whose one service installs with `true`.
pub(crate) fn plain_catalog() -> Value {
    let mut catalog = lifecycle_catalog();
    catalog["services"].as_array_mut().unwrap().push(json!({
        "name": "noop",
        "dependencies": {},
        "provisioner": {"actions": {"install": {"type": "shell", "fields": {"run": "true"}}}}
    }));
    catalog["clustertemplates"]
        .as_array_mut()
        .unwrap()
        .push(json!({
            "name": "plain",
            "compatibility": {"services": ["noop"]},
            "defaults": {"services": ["noop"], "provider": "local", "hardwaretype": "small",
                         "imagetype": "debian", "config": {}},
        }));
    catalog
}

/// A grow above the rule waits with the cluster unchanged (real local nodes), an
/// approval adds the nodes, a denial puts the cluster back as it was.
async fn a_grow_waits_for_approval_and_then_adds_nodes(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = app.user("grow-admin", Role::TenantAdmin, "grow").await;
    let (status, _) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/catalog/import",
            Some(plain_catalog()),
        )
        .await;
    assert_eq!(status, 200);
    let user = app.user("grow-user", Role::User, "grow").await;
    let nodes = tempfile::tempdir().unwrap();
    let _pool = local_pool(&app, nodes.path()).await;
    let (_, created) = app
        .call_json(
            &user,
            Method::POST,
            "/api/v1/clusters",
            Some(json!({"name": "grower", "template": "plain", "size": 2})),
        )
        .await;
    let id = created["cluster"]["id"].as_str().unwrap().to_owned();
    succeeded(&app, &user, created["job_id"].as_str().unwrap()).await;
    let (status, _) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/approval-rules",
            Some(json!({"kind": "size-above", "value": "3"})),
        )
        .await;
    assert_eq!(status, 201);

    let grow = json!({"operation": "add-nodes", "count": 2});
    let path = format!("/api/v1/clusters/{id}/changes");
    let (status, held) = app
        .call_json(&user, Method::POST, &path, Some(grow.clone()))
        .await;
    assert_eq!(status, 202, "{held}");
    assert_eq!(held["cluster"]["state"], "awaiting-approval");
    assert_eq!(held["approval"]["operation"], "grow");
    assert_eq!(
        (
            held["approval"]["size"].as_u64(),
            held["approval"]["growth"].as_u64()
        ),
        (Some(4), Some(2))
    );
    let detail = cluster_of(&app, &user, &id).await;
    assert_eq!(
        detail["nodes"].as_array().unwrap().len(),
        2,
        "nothing added while it waits"
    );
    assert_eq!(detail["jobs"].as_array().unwrap().len(), 1, "no job queued");
    // Denied: back to active, as it was.
    let request = held["approval"]["id"].as_str().unwrap();
    let (status, _) = app
        .call_json(
            &admin,
            Method::POST,
            &format!("/api/v1/approvals/{request}/deny"),
            Some(json!({"reason": "not this week"})),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(cluster_of(&app, &user, &id).await["state"], "active");

    // Asked again and approved: the nodes are added.
    let (_, held) = app.call_json(&user, Method::POST, &path, Some(grow)).await;
    let request = held["approval"]["id"].as_str().unwrap();
    let (status, approved) = app
        .call_json(
            &admin,
            Method::POST,
            &format!("/api/v1/approvals/{request}/approve"),
            None,
        )
        .await;
    assert_eq!(status, 202, "{approved}");
    succeeded(&app, &user, approved["job_id"].as_str().unwrap()).await;
    let detail = cluster_of(&app, &user, &id).await;
    assert_eq!(detail["state"], "active");
    assert_eq!(detail["nodes"].as_array().unwrap().len(), 4);
    // A grow within the rule is not held; removing nodes never is.
    let (_, removed) = app
        .call_json(
            &user,
            Method::POST,
            &path,
            Some(json!({"operation": "remove-nodes", "count": 2})),
        )
        .await;
    assert!(removed["approval"].is_null(), "{removed}");
    succeeded(&app, &user, removed["job_id"].as_str().unwrap()).await;
    let (_, deleted) = app
        .call_json(
            &user,
            Method::DELETE,
            &format!("/api/v1/clusters/{id}"),
            None,
        )
        .await;
    succeeded(&app, &user, deleted["job_id"].as_str().unwrap()).await;
}

engine::on_both_backends!(
    a_grow_waits_for_approval_and_then_adds_nodes,
    a_template_limited_to_a_group_is_seen_and_used_by_its_members_only,
    a_rule_holds_a_create_until_an_approver_decides,
    a_rules_group_decides_and_admins_are_not_held,
);
