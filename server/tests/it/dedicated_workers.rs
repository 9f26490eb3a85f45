//! `PUT /api/v1/tenants/{id}/dedicated-workers`: what it shows and what it refuses
//! (who may call it is in the authorization matrix), and where a marked tenant's
//! provider test runs (on its own workers, never on the shared ones).

use engine::queue::WorkerScope;
use engine::store::users::Role;
use engine::store::Backend;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{scoped_local_pool, spawn_app, TestApp};

async fn a_tenant_is_marked_for_dedicated_workers(backend: Backend) {
    let app = spawn_app(backend).await;
    let root = app.user("root", Role::Superadmin, "default").await;
    let member = app.user("member", Role::TenantAdmin, "acme").await;
    let path = format!("/api/v1/tenants/{}/dedicated-workers", member.tenant_id);

    let marked = app
        .call(
            &root,
            Method::PUT,
            &path,
            Some(&json!({"dedicated_workers": true})),
        )
        .await;
    assert_eq!(marked.status(), 200);
    let view: Value = marked.json().await.unwrap();
    assert_eq!(view["dedicated_workers"], true, "{view}");
    let shown: Value = app
        .call(
            &member,
            Method::GET,
            &format!("/api/v1/tenants/{}", member.tenant_id),
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(shown["dedicated_workers"], true, "{shown}");

    for bad in [
        json!({"dedicated_workers": "yes"}),
        json!({}),
        json!({"dedicated": true}),
    ] {
        let refused = app.call(&root, Method::PUT, &path, Some(&bad)).await;
        assert_eq!(refused.status(), 422, "{bad}");
        let body: Value = refused.json().await.unwrap();
        assert_eq!(body["error"], "invalid", "{body}");
    }
    let unknown = app
        .call(
            &root,
            Method::PUT,
            "/api/v1/tenants/no-such-tenant/dedicated-workers",
            Some(&json!({"dedicated_workers": true})),
        )
        .await;
    assert_eq!(unknown.status(), 404);

    let cleared: Value = app
        .call(
            &root,
            Method::PUT,
            &path,
            Some(&json!({"dedicated_workers": false})),
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(cleared["dedicated_workers"], false);
}

/// (state, claimed_by) of every provider test request of `tenant_id`, oldest first.
async fn requests(app: &TestApp, tenant_id: &str) -> Vec<(String, Option<String>)> {
    sqlx::query_as(
        "SELECT state, claimed_by FROM provider_tests WHERE tenant_id = $1 \
         ORDER BY created_at_ms, id",
    )
    .bind(tenant_id)
    .fetch_all(app.store.pool())
    .await
    .unwrap()
}

/// The attack of issue 38: `provider test --create` for a tenant served by dedicated
/// workers only ran its provider, with the tenant's credentials, in the shared server
/// process. The test now runs where the tenant's tasks run. With only a shared pool
/// running, nobody takes it: the answer (409) says no worker serving the tenant took
/// it and how to start one, and the request is marked so that no worker ever runs it.
/// The tenant's dedicated pool then runs its next test, and the request and the audit
/// log say which pool that was; a shared tenant's test is run by the shared pool.
async fn a_provider_test_of_a_dedicated_tenant_runs_on_its_dedicated_worker(backend: Backend) {
    let app = spawn_app(backend).await;
    let root = app.user("root", Role::Superadmin, "default").await;
    let admin = crate::helpers::with_catalog(&app, "acme").await;
    let shared_admin = crate::helpers::with_catalog(&app, "default").await;
    let marked = app
        .call(
            &root,
            Method::PUT,
            &format!("/api/v1/tenants/{}/dedicated-workers", admin.tenant_id),
            Some(&json!({"dedicated_workers": true})),
        )
        .await;
    assert_eq!(marked.status(), 200);
    let nodes = tempfile::tempdir().unwrap();
    let shared = scoped_local_pool(&app, nodes.path(), WorkerScope::Shared).await;

    for body in [json!({"create": true}), json!({})] {
        let refused = app
            .call(
                &admin,
                Method::POST,
                "/api/v1/providers/local/test",
                Some(&body),
            )
            .await;
        assert_eq!(refused.status(), 409, "{body}");
        let error: Value = refused.json().await.unwrap();
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("no worker serving tenant acme took the provider test")
                && message.contains("corral worker --tenant acme"),
            "{error}"
        );
    }
    let abandoned = vec![("abandoned".to_owned(), None); 2];
    assert_eq!(requests(&app, &admin.tenant_id).await, abandoned);

    let ran = app
        .call(
            &shared_admin,
            Method::POST,
            "/api/v1/providers/local/test",
            Some(&json!({})),
        )
        .await;
    assert_eq!(
        ran.status(),
        200,
        "a shared tenant's test runs on the shared pool"
    );
    assert_eq!(
        requests(&app, &shared_admin.tenant_id).await,
        vec![("done".to_owned(), Some(shared.id().to_owned()))]
    );

    let dedicated = scoped_local_pool(
        &app,
        nodes.path(),
        WorkerScope::Tenants(vec![admin.tenant_id.clone()]),
    )
    .await;
    let ran = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/providers/local/test",
            Some(&json!({})),
        )
        .await;
    assert_eq!(ran.status(), 200);
    let report: Value = ran.json().await.unwrap();
    assert_eq!(report["passed"], true, "{report}");
    assert_eq!(report["phases"][0]["phase"], "check", "{report}");
    let mut expected = abandoned;
    expected.push(("done".to_owned(), Some(dedicated.id().to_owned())));
    assert_eq!(
        requests(&app, &admin.tenant_id).await,
        expected,
        "the dedicated pool ran the new request and left the abandoned ones alone"
    );
    let audit: Value = app
        .call(
            &admin,
            Method::GET,
            "/api/v1/audit?action=provider.test",
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    let entries = audit.as_array().unwrap();
    assert_eq!(entries.len(), 1, "{audit}");
    assert!(
        entries[0].to_string().contains(dedicated.id()),
        "the audit entry names the pool: {audit}"
    );
    dedicated.shutdown().await;
    shared.shutdown().await;
}

engine::on_both_backends!(
    a_tenant_is_marked_for_dedicated_workers,
    a_provider_test_of_a_dedicated_tenant_runs_on_its_dedicated_worker
);
