//! `PUT /api/v1/tenants/{id}/dedicated-workers`: what it shows and what it refuses
//! (who may call it is in the authorization matrix).

use engine::store::users::Role;
use engine::store::Backend;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::spawn_app;

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

/// The attack of issue 38: `provider test --create` for a tenant served by dedicated
/// workers only ran its provider, with the tenant's credentials, in the shared server
/// process. It is refused (409) saying why, before anything runs or is made.
async fn a_provider_test_of_a_dedicated_tenant_is_refused_in_the_shared_server(backend: Backend) {
    let app = spawn_app(backend).await;
    let root = app.user("root", Role::Superadmin, "default").await;
    let admin = crate::helpers::with_catalog(&app, "acme").await;
    let marked = app
        .call(
            &root,
            Method::PUT,
            &format!("/api/v1/tenants/{}/dedicated-workers", admin.tenant_id),
            Some(&json!({"dedicated_workers": true})),
        )
        .await;
    assert_eq!(marked.status(), 200);
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
            message.contains("tenant acme is served by dedicated workers only")
                && message.contains("shared server process"),
            "{error}"
        );
    }
    let audit: Value = app
        .call(&admin, Method::GET, "/api/v1/audit", None)
        .await
        .json()
        .await
        .unwrap();
    assert!(!audit.to_string().contains("provider.test"), "{audit}");
}

engine::on_both_backends!(
    a_tenant_is_marked_for_dedicated_workers,
    a_provider_test_of_a_dedicated_tenant_is_refused_in_the_shared_server
);
