//! Server-side rendering: pages come back as complete HTML with the hydration scripts.

use engine::store::Backend;

use crate::helpers::spawn_app;

#[tokio::test]
async fn home_page_renders_on_the_server() {
    let app = spawn_app(Backend::Sqlite).await;
    let response = app.get("/").await;
    assert_eq!(response.status(), 200);
    let html = response.text().await.unwrap();
    assert!(html.contains("Self-service clusters"), "{html}");
    assert!(html.contains("/pkg/corral.js"), "hydration script missing");
    assert!(html.contains("/pkg/corral.css"), "stylesheet missing");
    assert!(html.contains("data-testid=\"hydration-counter\""));
}

#[tokio::test]
async fn unknown_pages_are_404_with_a_way_back() {
    let app = spawn_app(Backend::Sqlite).await;
    let response = app.get("/no/such/page").await;
    assert_eq!(response.status(), 404);
    let html = response.text().await.unwrap();
    assert!(html.contains("Page not found"));
    assert!(html.contains("href=\"/\""));
}

#[tokio::test]
async fn the_api_reference_lists_every_documented_path() {
    let app = spawn_app(Backend::Sqlite).await;
    let doc: serde_json::Value = app.get("/api/v1/openapi.json").await.json().await.unwrap();
    let response = app.get("/api/v1/docs").await;
    assert_eq!(response.status(), 200);
    let html = response.text().await.unwrap();
    for path in doc["paths"].as_object().unwrap().keys() {
        assert!(
            html.contains(&format!("<code>{path}</code>")),
            "{path} missing"
        );
    }
    assert!(html.contains("list of AuditView"));
}
