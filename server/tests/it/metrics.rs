//! `/metrics` on the main listener: who may read it, that it parses as Prometheus's
//! text format, that requests are counted by route pattern (never by path), and that
//! no tenant's name leaks into it.
//!
//! Values read from the database are checked against a `corral serve` of their own
//! (`operations`): here every test shares this process's one recorder, so a gauge
//! another test set a moment ago may show.

use engine::store::users::Role;
use engine::store::Backend;
use reqwest::Method;
use serde_json::json;

use crate::helpers::{spawn_app, with_catalog, ApiUser, TestApp};
use crate::support::prometheus::{self, Page};

/// The page as the scraper sees it, and parsed.
async fn scrape(app: &TestApp, user: &ApiUser) -> (String, Page) {
    let response = app.call(user, Method::GET, "/metrics", None).await;
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    let text = response.text().await.unwrap();
    let page = prometheus::parse(&text);
    (text, page)
}

async fn only_superadmins_read_metrics(backend: Backend) {
    let app = spawn_app(backend).await;
    let anonymous = app.get("/metrics").await;
    assert_eq!(anonymous.status(), 401);
    let body: serde_json::Value = anonymous.json().await.unwrap();
    assert_eq!(body["error"], "unauthenticated", "{body}");

    let tenant_admin = with_catalog(&app, "acme-hidden").await;
    let refused = app.call(&tenant_admin, Method::GET, "/metrics", None).await;
    assert_eq!(refused.status(), 403);
    let body: serde_json::Value = refused.json().await.unwrap();
    assert!(
        body["message"].as_str().unwrap().contains("superadmins"),
        "{body}"
    );

    // A queued job of that tenant shows in the counts, never by name.
    let created = app
        .call(
            &tenant_admin,
            Method::POST,
            "/api/v1/clusters",
            Some(&json!({"name": "secret-cluster", "template": "lifecycle", "size": 2})),
        )
        .await;
    assert_eq!(created.status(), 201);
    let root = app.user("root", Role::Superadmin, "default").await;
    let (text, parsed) = scrape(&app, &root).await;
    for private in [
        "acme-hidden",
        "secret-cluster",
        &tenant_admin.tenant_id,
        &tenant_admin.token,
    ] {
        assert!(!text.contains(private), "{private} leaked into /metrics");
    }
    assert!(
        parsed.has("corral_database_up", &[]),
        "corral_database_up is shown"
    );
    for state in [
        "queued",
        "running",
        "succeeded",
        "failed",
        "cancelling",
        "cancelled",
    ] {
        assert!(
            parsed.has("corral_jobs", &[("state", state)]),
            "corral_jobs has state {state}"
        );
    }
    assert!(
        parsed.has("corral_nodes", &[("provider", "local")]),
        "nodes are counted by provider type"
    );
    assert!(parsed.has("corral_build_info", &[]));
}

async fn requests_are_counted_by_route_pattern(backend: Backend) {
    let app = spawn_app(backend).await;
    let root = app.user("root", Role::Superadmin, "default").await;
    let unknown = uuid::Uuid::new_v4().to_string();
    for _ in 0..2 {
        let missing = app
            .call(
                &root,
                Method::GET,
                &format!("/api/v1/clusters/{unknown}"),
                None,
            )
            .await;
        assert_eq!(missing.status(), 404);
    }
    let (text, parsed) = scrape(&app, &root).await;
    assert!(!text.contains(&unknown), "a path's id became a label");
    let route = ("route", "/api/v1/clusters/{id}");
    let counted = parsed.total(
        "corral_http_requests_total",
        &[route, ("status", "404"), ("method", "GET")],
    );
    // Other tests of this process count too: at least ours.
    assert!(
        counted >= 2.0,
        "404s on /api/v1/clusters/{{id}}: {counted}; counted: {:?}",
        parsed.label_sets("corral_http_requests_total")
    );
    assert!(
        parsed.total("corral_http_request_duration_seconds", &[route]) >= 2.0,
        "the route's latency histogram is shown"
    );
}

engine::on_both_backends!(
    only_superadmins_read_metrics,
    requests_are_counted_by_route_pattern,
);
