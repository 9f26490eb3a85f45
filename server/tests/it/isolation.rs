//! Tenant isolation over the whole API, endpoint by endpoint.
//!
//! The list of endpoints comes from the OpenAPI document, and every one of them must
//! have an entry in [`EXPECTATIONS`] (and no entry may be stale), so an endpoint added
//! without deciding its access rules fails this test. For each endpoint:
//! - `Scoped`: tenant B's admin using tenant A's ids gets exactly what an id that does
//!   not exist gets (404), and the response names nothing of A's;
//! - `AdminOnly`: tenant B's plain user gets 403 (with B's own ids);
//! - `Listing`: tenant B's user gets 200 and nothing of A's in it;
//! - `Personal`: about the caller only (sign-in, own tokens, own password).

use std::collections::BTreeSet;

use engine::store::users::Role;
use engine::store::Backend;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{lifecycle_catalog, spawn_app, ApiUser, TestApp};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Scoped,
    AdminOnly,
    Listing,
    Personal,
}

use Check::*;

const EXPECTATIONS: &[(&str, &[Check])] = &[
    ("POST /api/v1/session", &[Personal]),
    ("GET /api/v1/session", &[Personal]),
    ("DELETE /api/v1/session", &[Personal]),
    ("POST /api/v1/session/logout-everywhere", &[Personal]),
    ("GET /api/v1/clusters", &[Listing]),
    ("POST /api/v1/clusters", &[Personal]),
    ("GET /api/v1/clusters/{id}", &[Scoped]),
    ("DELETE /api/v1/clusters/{id}", &[Scoped]),
    ("POST /api/v1/clusters/{id}/plan", &[Scoped]),
    ("POST /api/v1/clusters/{id}/changes", &[Scoped]),
    ("PUT /api/v1/clusters/{id}/lease", &[Scoped]),
    ("PUT /api/v1/clusters/{id}/healing", &[Scoped]),
    ("PUT /api/v1/clusters/{id}/pin", &[Scoped]),
    (
        "POST /api/v1/clusters/{id}/nodes/{number}/ssh/certificate",
        &[Scoped],
    ),
    ("GET /api/v1/clusters/{id}/nodes/{number}/ssh", &[Scoped]),
    (
        "GET /api/v1/clusters/{id}/nodes/{number}/terminal",
        &[Scoped],
    ),
    ("GET /api/v1/jobs/{id}", &[Scoped]),
    ("GET /api/v1/jobs/{id}/tasks", &[Scoped]),
    ("GET /api/v1/jobs/{id}/tasks/{task_id}/attempts", &[Scoped]),
    ("GET /api/v1/jobs/{id}/events", &[Scoped]),
    ("GET /api/v1/jobs/{id}/stream", &[Scoped]),
    ("POST /api/v1/jobs/{id}/cancel", &[Scoped]),
    ("POST /api/v1/jobs/{id}/retry", &[Scoped]),
    ("GET /api/v1/catalog", &[Listing]),
    ("POST /api/v1/catalog/import", &[AdminOnly]),
    ("GET /api/v1/catalog/{kind}", &[Listing]),
    ("POST /api/v1/catalog/rollouts", &[AdminOnly]),
    ("GET /api/v1/catalog/rollouts", &[Listing]),
    // Another tenant's rollout is tested in rollouts.rs (tenant A has none here).
    ("GET /api/v1/catalog/rollouts/{id}", &[Scoped]),
    ("GET /api/v1/catalog/{kind}/{name}", &[Scoped]),
    ("PUT /api/v1/catalog/{kind}/{name}", &[AdminOnly]),
    ("DELETE /api/v1/catalog/{kind}/{name}", &[Scoped, AdminOnly]),
    ("GET /api/v1/catalog/{kind}/{name}/history", &[Scoped]),
    ("GET /api/v1/resources", &[Listing]),
    ("POST /api/v1/resources/{kind}/{name}", &[AdminOnly]),
    (
        "POST /api/v1/resources/{kind}/{name}/versions/{version}/stage",
        &[Scoped, AdminOnly],
    ),
    ("GET /api/v1/me", &[Personal]),
    ("POST /api/v1/me/password", &[Personal]),
    ("GET /api/v1/me/keys", &[Personal]),
    ("POST /api/v1/me/keys", &[Personal]),
    ("DELETE /api/v1/me/keys/{id}", &[Scoped]),
    ("GET /api/v1/users", &[AdminOnly]),
    ("POST /api/v1/users", &[AdminOnly]),
    ("GET /api/v1/users/{id}", &[Scoped, AdminOnly]),
    ("PATCH /api/v1/users/{id}", &[Scoped, AdminOnly]),
    ("DELETE /api/v1/users/{id}", &[Scoped, AdminOnly]),
    ("PUT /api/v1/users/{id}/tenant", &[Scoped, AdminOnly]),
    ("GET /api/v1/users/{id}/tokens", &[Scoped, AdminOnly]),
    (
        "DELETE /api/v1/users/{id}/tokens/{token_id}",
        &[Scoped, AdminOnly],
    ),
    ("GET /api/v1/tenants", &[Listing]),
    ("POST /api/v1/tenants", &[AdminOnly]),
    ("GET /api/v1/tenants/{id}", &[Scoped]),
    ("DELETE /api/v1/tenants/{id}", &[Scoped, AdminOnly]),
    ("PUT /api/v1/tenants/{id}/quotas", &[Scoped, AdminOnly]),
    ("PUT /api/v1/tenants/{id}/local-nodes", &[Scoped, AdminOnly]),
    (
        "PUT /api/v1/tenants/{id}/dedicated-workers",
        &[Scoped, AdminOnly],
    ),
    (
        "PUT /api/v1/tenants/{id}/provider-types",
        &[Scoped, AdminOnly],
    ),
    ("PUT /api/v1/tenants/{id}/node-shell", &[Scoped, AdminOnly]),
    (
        "PUT /api/v1/tenants/{id}/terminal-recording",
        &[Scoped, AdminOnly],
    ),
    ("GET /api/v1/tenants/{id}/admin-keys", &[Scoped, AdminOnly]),
    ("PUT /api/v1/tenants/{id}/admin-keys", &[Scoped, AdminOnly]),
    ("GET /api/v1/audit/{id}/recording", &[Scoped]),
    ("GET /api/v1/tokens", &[Listing]),
    ("POST /api/v1/tokens", &[Personal]),
    ("DELETE /api/v1/tokens/{id}", &[Scoped]),
    ("GET /api/v1/audit", &[AdminOnly]),
    ("GET /api/v1/pool-hosts", &[AdminOnly]),
    ("POST /api/v1/pool-hosts", &[AdminOnly]),
    ("GET /api/v1/pool-hosts/{id}", &[Scoped, AdminOnly]),
    ("PATCH /api/v1/pool-hosts/{id}", &[Scoped, AdminOnly]),
    ("DELETE /api/v1/pool-hosts/{id}", &[Scoped, AdminOnly]),
    ("GET /api/v1/hooks", &[AdminOnly]),
    ("POST /api/v1/hooks", &[AdminOnly]),
    ("GET /api/v1/hooks/{id}", &[Scoped, AdminOnly]),
    ("DELETE /api/v1/hooks/{id}", &[Scoped, AdminOnly]),
    ("POST /api/v1/hooks/{id}/test", &[Scoped, AdminOnly]),
    ("GET /api/v1/hooks/{id}/deliveries", &[Scoped, AdminOnly]),
    (
        "POST /api/v1/hooks/{id}/deliveries/{delivery}/redeliver",
        &[Scoped, AdminOnly],
    ),
    // Groups by name in the caller's own tenant: B's admin naming A's group reaches
    // B's (none).
    ("GET /api/v1/groups", &[AdminOnly]),
    ("POST /api/v1/groups", &[AdminOnly]),
    ("GET /api/v1/groups/{name}", &[Scoped, AdminOnly]),
    ("DELETE /api/v1/groups/{name}", &[Scoped, AdminOnly]),
    ("POST /api/v1/groups/{name}/members", &[Scoped, AdminOnly]),
    (
        "DELETE /api/v1/groups/{name}/members/{username}",
        &[Scoped, AdminOnly],
    ),
    ("GET /api/v1/approval-rules", &[AdminOnly]),
    ("POST /api/v1/approval-rules", &[AdminOnly]),
    ("GET /api/v1/budget", &[AdminOnly]),
    ("PUT /api/v1/budget", &[AdminOnly]),
    ("GET /api/v1/showback", &[AdminOnly]),
    ("DELETE /api/v1/approval-rules/{id}", &[Scoped, AdminOnly]),
    ("GET /api/v1/approvals", &[Listing]),
    ("GET /api/v1/approvals/{id}", &[Scoped]),
    ("POST /api/v1/approvals/{id}/approve", &[Scoped]),
    ("POST /api/v1/approvals/{id}/deny", &[Scoped]),
    // By name in the caller's own catalog: B's admin naming A's provider reaches B's
    // (none), never A's credentials.
    (
        "GET /api/v1/providers/{name}/credentials",
        &[Scoped, AdminOnly],
    ),
    (
        "PUT /api/v1/providers/{name}/credentials",
        &[Scoped, AdminOnly],
    ),
    (
        "DELETE /api/v1/providers/{name}/credentials",
        &[Scoped, AdminOnly],
    ),
    ("POST /api/v1/providers/{name}/test", &[Scoped, AdminOnly]),
    // The caller's own credentials, for a provider named in the caller's own catalog:
    // B's admin naming A's provider reaches B's catalog (none), and whoever asks sees
    // only what they set themselves.
    (
        "GET /api/v1/providers/{name}/credentials/mine",
        &[Scoped, Personal],
    ),
    (
        "PUT /api/v1/providers/{name}/credentials/mine",
        &[Scoped, Personal],
    ),
    (
        "DELETE /api/v1/providers/{name}/credentials/mine",
        &[Scoped, Personal],
    ),
];

/// The value of tenant A's provider credentials: no response may show it, A's included.
pub const PROVIDER_SECRET: &str = "acme-provider-secret-0c1d2e3f";

/// The value of tenant A's admin's own credentials for A's provider `local` (which
/// allows users' own here): no response may show it either.
pub const USER_PROVIDER_SECRET: &str = "acme-admins-own-secret-4a5b6c7d";

/// A host key for registering pool hosts (no connection is made to them here).
pub const POOL_HOST_KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMjL5g2tLCXY/mxtwGZ1QuYVzyZ8Z7reMrGN53ioWB2o";

/// The ids of one tenant's objects, to put into paths.
pub(crate) struct Ids {
    cluster: String,
    job: String,
    task: String,
    user: String,
    tenant: String,
    token: String,
    pool_host: String,
    hook: String,
    delivery: String,
    group: String,
    member: String,
    rule: String,
    approval: String,
    user_key: String,
    provider: String,
    entity: (String, String),
    resource: (String, String, i64),
    /// Strings that must not appear in another tenant's responses.
    secrets: Vec<String>,
}

impl Ids {
    pub(crate) fn fill(&self, path: &str) -> String {
        let id = if path.starts_with("/api/v1/clusters") {
            &self.cluster
        } else if path.starts_with("/api/v1/jobs") {
            &self.job
        } else if path.starts_with("/api/v1/users") {
            &self.user
        } else if path.starts_with("/api/v1/tenants") {
            &self.tenant
        } else if path.starts_with("/api/v1/pool-hosts") {
            &self.pool_host
        } else if path.starts_with("/api/v1/hooks") {
            &self.hook
        } else if path.starts_with("/api/v1/approval-rules") {
            &self.rule
        } else if path.starts_with("/api/v1/approvals") {
            &self.approval
        } else if path.starts_with("/api/v1/me/keys") {
            &self.user_key
        } else {
            &self.token
        };
        let (kind, name) = if path.starts_with("/api/v1/resources") {
            (&self.resource.0, &self.resource.1)
        } else if path.starts_with("/api/v1/providers") {
            (&self.entity.0, &self.provider)
        } else if path.starts_with("/api/v1/groups") {
            (&self.entity.0, &self.group)
        } else {
            (&self.entity.0, &self.entity.1)
        };
        path.replace("{id}", id)
            .replace("{task_id}", &self.task)
            .replace("{token_id}", &self.token)
            .replace("{kind}", kind)
            .replace("{name}", name)
            .replace("{version}", &self.resource.2.to_string())
            .replace("{number}", "1000")
            .replace("{delivery}", &self.delivery)
            .replace("{username}", &self.member)
    }

    fn nonexistent() -> Self {
        let none = "00000000-0000-4000-8000-000000000000".to_owned();
        Ids {
            cluster: none.clone(),
            job: none.clone(),
            task: none.clone(),
            user: none.clone(),
            tenant: none.clone(),
            token: none.clone(),
            pool_host: none.clone(),
            hook: none.clone(),
            delivery: none.clone(),
            group: "no-such-group".into(),
            member: "nobody".into(),
            rule: none.clone(),
            approval: none.clone(),
            user_key: none,
            provider: "no-such-provider".into(),
            entity: ("services".into(), "no-such-service".into()),
            resource: ("scripts".into(), "no-such-script.sh".into(), 1),
            secrets: Vec::new(),
        }
    }
}

pub(crate) fn body_for(operation: &str) -> Option<Value> {
    let (method, path) = operation.split_once(' ').unwrap();
    if method == "GET" || method == "DELETE" {
        return None;
    }
    Some(match path {
        "/api/v1/session" => json!({"username": "nobody", "password": "nothing at all"}),
        "/api/v1/clusters" => json!({"name": "probe", "template": "lifecycle", "size": 2}),
        p if p.ends_with("/plan") || p.ends_with("/changes") => json!({"operation": "restart"}),
        p if p.ends_with("/lease") => json!({"seconds": 3600}),
        p if p.ends_with("/healing") => json!({"enabled": true}),
        p if p.ends_with("/pin") => json!({"pinned": true}),
        p if p.ends_with("/rollouts") => json!({"template": "lifecycle", "dry_run": true}),
        p if p.ends_with("/quotas") => json!({"max_clusters": 1}),
        p if p.ends_with("/local-nodes") => json!({"local_nodes": true}),
        p if p.ends_with("/dedicated-workers") => json!({"dedicated_workers": true}),
        p if p.ends_with("/node-shell") => json!({"node_shell": true}),
        p if p.ends_with("/terminal-recording") => json!({"terminal_recording": false}),
        p if p.ends_with("/admin-keys") => json!({"admin_keys_on_all_clusters": false}),
        "/api/v1/me/keys" => json!({"public_key": "ssh-ed25519 AAAA"}),
        p if p.ends_with("/ssh/certificate") => json!({"public_key": "ssh-ed25519 AAAA"}),
        p if p.ends_with("/provider-types") => json!({"provider_types": ["docker"]}),
        "/api/v1/users" => {
            json!({"username": "probe", "password": "a long enough password", "role": "user"})
        }
        p if p.starts_with("/api/v1/users/") && p.ends_with("/tenant") => {
            json!({"tenant": "bravo"})
        }
        p if p.starts_with("/api/v1/users/") => json!({"role": "user"}),
        "/api/v1/tenants" => json!({"name": "probe"}),
        "/api/v1/tokens" => json!({"name": "probe"}),
        "/api/v1/pool-hosts" => json!({"name": "probe", "host": "10.9.9.9", "user": "corral",
                                      "host_key": POOL_HOST_KEY}),
        p if p.starts_with("/api/v1/pool-hosts/") => json!({"name": "probe"}),
        // A public address that is never called: no delivery loop runs here.
        "/api/v1/hooks" => json!({"url": "http://8.8.8.8/probe", "events": ["test"]}),
        "/api/v1/groups" => json!({"name": "probe"}),
        p if p.starts_with("/api/v1/groups/") => json!({"username": "acme-admin"}),
        "/api/v1/approval-rules" => json!({"kind": "size-above", "value": "10"}),
        "/api/v1/budget" => json!({"monthly_budget": 1000}),
        p if p.ends_with("/deny") => json!({"reason": "probe"}),
        "/api/v1/me/password" => {
            json!({"current_password": "wrong", "new_password": "another long password"})
        }
        "/api/v1/catalog/import" => json!({}),
        p if p.starts_with("/api/v1/catalog/") => json!({"description": "probe"}),
        _ => json!({}),
    })
}

async fn call(app: &TestApp, user: &ApiUser, operation: &str, ids: &Ids) -> (u16, String) {
    let (method, path) = operation.split_once(' ').unwrap();
    let method = Method::from_bytes(method.as_bytes()).unwrap();
    let response = app
        .call(user, method, &ids.fill(path), body_for(operation).as_ref())
        .await;
    (response.status().as_u16(), response.text().await.unwrap())
}

pub(crate) fn documented_operations(doc: &Value) -> BTreeSet<String> {
    let mut operations = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            operations.insert(format!("{} {path}", method.to_ascii_uppercase()));
        }
    }
    operations
}

/// Tenant A with a catalog, a cluster and its job, a resource, users and a token.
/// Also returns tenant A's admin, who made all of it.
pub(crate) async fn populate_tenant_a(app: &TestApp) -> (Ids, ApiUser) {
    let admin = app.user("acme-admin", Role::TenantAdmin, "acme").await;
    let mut catalog = lifecycle_catalog();
    // Provider `local` takes users' own credentials here, so the `.../credentials/mine`
    // operations reach their success paths (the fixture file stays as Coopr's would).
    for provider in catalog["providers"].as_array_mut().unwrap() {
        if provider["name"] == "local" {
            provider["provisioner"]["user_credentials"] = json!(true);
        }
    }
    let imported = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/catalog/import",
            Some(&catalog),
        )
        .await;
    assert_eq!(imported.status(), 200, "{}", imported.text().await.unwrap());
    let created: Value = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/clusters",
            Some(&json!({"name": "acme-secret-cluster", "template": "lifecycle", "size": 2})),
        )
        .await
        .json()
        .await
        .unwrap();
    let cluster = created["cluster"]["id"].as_str().unwrap().to_owned();
    let job = created["job_id"].as_str().unwrap().to_owned();
    let tasks: Value = app
        .call(
            &admin,
            Method::GET,
            &format!("/api/v1/jobs/{job}/tasks"),
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    let task = tasks["items"][0]["id"].as_str().unwrap().to_owned();
    let uploaded = app
        .client
        .post(app.url("/api/v1/resources/scripts/acme-setup.sh"))
        .bearer_auth(&admin.token)
        .body("echo acme\n")
        .send()
        .await
        .unwrap();
    assert_eq!(uploaded.status(), 201);
    let tokens: Value = app
        .call(&admin, Method::GET, "/api/v1/tokens", None)
        .await
        .json()
        .await
        .unwrap();
    let token = tokens["items"][0]["id"].as_str().unwrap().to_owned();
    let registered = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/pool-hosts",
            Some(
                &json!({"name": "acme-secret-host", "host": "10.1.2.3", "port": 2201,
                         "user": "acme", "host_key": POOL_HOST_KEY}),
            ),
        )
        .await;
    assert_eq!(registered.status(), 201);
    let registered: Value = registered.json().await.unwrap();
    let pool_host = registered["id"].as_str().unwrap().to_owned();
    let public_key = registered["client_public_key"].as_str().unwrap().to_owned();
    let credentials = app
        .client
        .put(app.url("/api/v1/providers/local/credentials"))
        .bearer_auth(&admin.token)
        .body(format!("{{\"token\": \"{PROVIDER_SECRET}\"}}"))
        .send()
        .await
        .unwrap();
    assert_eq!(credentials.status(), 200);
    let own = app
        .client
        .put(app.url("/api/v1/providers/local/credentials/mine"))
        .bearer_auth(&admin.token)
        .body(format!("{{\"token\": \"{USER_PROVIDER_SECRET}\"}}"))
        .send()
        .await
        .unwrap();
    assert_eq!(own.status(), 200, "{}", own.text().await.unwrap());
    // A hook and a delivery queued to it (never sent: no delivery loop runs here).
    let hook: Value = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/hooks",
            Some(&json!({"url": "http://8.8.8.8/acme-secret-hook", "events": ["job.failed"]})),
        )
        .await
        .json()
        .await
        .unwrap();
    let hook_secret = hook["secret"].as_str().unwrap().to_owned();
    let hook = hook["hook"]["id"].as_str().unwrap().to_owned();
    let delivery: Value = app
        .call(
            &admin,
            Method::POST,
            &format!("/api/v1/hooks/{hook}/test"),
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    let delivery = delivery["id"].as_str().unwrap().to_owned();
    // A group with A's admin in it, a rule, and a create it holds (asked by a user of
    // A's: admins' own requests are not held).
    let group = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/groups",
            Some(&json!({"name": "acme-secret-group"})),
        )
        .await;
    assert_eq!(group.status(), 201);
    let member = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/groups/acme-secret-group/members",
            Some(&json!({"username": "acme-admin"})),
        )
        .await;
    assert_eq!(member.status(), 200);
    let rule: Value = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/approval-rules",
            Some(&json!({"kind": "size-above", "value": "5", "approvers": "acme-secret-group"})),
        )
        .await
        .json()
        .await
        .unwrap();
    let rule = rule["id"].as_str().unwrap().to_owned();
    let requester = app.user("acme-requester", Role::User, "acme").await;
    let held: Value = app
        .call(
            &requester,
            Method::POST,
            "/api/v1/clusters",
            Some(&json!({"name": "acme-secret-held", "template": "lifecycle", "size": 6})),
        )
        .await
        .json()
        .await
        .unwrap();
    let approval = held["approval"]["id"].as_str().unwrap().to_owned();
    // A key on A's admin's profile.
    let key_line = engine::ssh::ClientKeyPair::generate("acme-secret-key")
        .unwrap()
        .public_openssh;
    let key: Value = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/me/keys",
            Some(&json!({"public_key": key_line})),
        )
        .await
        .json()
        .await
        .unwrap();
    let user_key = key["key"]["id"].as_str().unwrap().to_owned();
    let ids = Ids {
        secrets: vec![
            PROVIDER_SECRET.into(),
            USER_PROVIDER_SECRET.into(),
            "acme-secret-host".into(),
            public_key,
            cluster.clone(),
            job.clone(),
            "acme-secret-cluster".into(),
            "acme-admin".into(),
            admin.tenant_id.clone(),
            "acme-secret-hook".into(),
            hook_secret,
            "acme-secret-group".into(),
            "acme-secret-held".into(),
            rule.clone(),
            approval.clone(),
            "acme-secret-key".into(),
            key_line,
        ],
        cluster,
        job,
        task,
        user: admin.id.clone(),
        tenant: admin.tenant_id.clone(),
        token,
        pool_host,
        hook,
        delivery,
        group: "acme-secret-group".into(),
        member: "acme-admin".into(),
        rule,
        approval,
        user_key,
        provider: "local".into(),
        entity: ("services".into(), "web".into()),
        resource: ("scripts".into(), "acme-setup.sh".into(), 1),
    };
    (ids, admin)
}

async fn every_endpoint_keeps_tenants_apart(backend: Backend) {
    let app = spawn_app(backend).await;
    let doc: Value = app.get("/api/v1/openapi.json").await.json().await.unwrap();
    let documented = documented_operations(&doc);
    let expected: BTreeSet<String> = EXPECTATIONS
        .iter()
        .map(|(op, _)| (*op).to_owned())
        .collect();
    assert_eq!(
        documented.difference(&expected).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "endpoints without isolation expectations"
    );
    assert_eq!(
        expected.difference(&documented).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "expectations for endpoints that no longer exist"
    );

    let (a, _) = populate_tenant_a(&app).await;
    let b_admin = app.user("bravo-admin", Role::TenantAdmin, "bravo").await;
    let b_user = app.user("bravo-user", Role::User, "bravo").await;
    let b_own = Ids {
        user: b_admin.id.clone(),
        tenant: b_admin.tenant_id.clone(),
        ..Ids::nonexistent()
    };
    let missing = Ids::nonexistent();

    for (operation, checks) in EXPECTATIONS {
        for check in *checks {
            match check {
                Scoped => {
                    let (status, body) = call(&app, &b_admin, operation, &a).await;
                    let (missing_status, _) = call(&app, &b_admin, operation, &missing).await;
                    assert_eq!(status, 404, "{operation} with tenant A's ids: {body}");
                    assert_eq!(
                        status, missing_status,
                        "{operation}: foreign and missing ids differ"
                    );
                    let sent = a.fill(operation.split_once(' ').unwrap().1);
                    // The id the caller sent may be echoed back; nothing else of A's.
                    for secret in a
                        .secrets
                        .iter()
                        .filter(|secret| !sent.contains(secret.as_str()))
                    {
                        assert!(
                            !body.contains(secret.as_str()),
                            "{operation} leaks {secret}: {body}"
                        );
                    }
                }
                AdminOnly => {
                    let (status, body) = call(&app, &b_user, operation, &b_own).await;
                    assert_eq!(status, 403, "{operation} as a plain user: {body}");
                }
                Listing => {
                    let (status, body) = call(&app, &b_user, operation, &b_own).await;
                    assert_eq!(status, 200, "{operation}: {body}");
                    for secret in &a.secrets {
                        assert!(
                            !body.contains(secret.as_str()),
                            "{operation} leaks {secret}: {body}"
                        );
                    }
                }
                Personal => {
                    // Its own user: signing out everywhere revokes the caller's tokens.
                    let n = EXPECTATIONS.iter().position(|(op, _)| op == operation);
                    let fresh = app
                        .user(
                            &format!("bravo-personal-{}", n.unwrap_or(0)),
                            Role::User,
                            "bravo",
                        )
                        .await;
                    let (status, body) = call(&app, &fresh, operation, &b_own).await;
                    assert!(status < 500, "{operation}: {status} {body}");
                    for secret in &a.secrets {
                        assert!(
                            !body.contains(secret.as_str()),
                            "{operation} leaks {secret}: {body}"
                        );
                    }
                }
            }
        }
    }
}

engine::on_both_backends!(every_endpoint_keeps_tenants_apart);
