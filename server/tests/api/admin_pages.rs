//! The admin console over HTTP, as a browser without JavaScript uses it: visitors
//! are sent to sign in, tenant users get 403, pages render on the server, forms
//! post to server functions that check the CSRF token and answer bad input with
//! the message next to its field, and deleting what is in use is refused with the
//! list of users.

use engine::store::users::Role;
use engine::store::Backend;
use reqwest::redirect::Policy;
use reqwest::{header, Method};
use serde_json::Value;

use crate::helpers::{spawn_app, with_catalog, TestApp, PAGE_RENDERING, PASSWORD};

fn plain_browser() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(Policy::none())
        // A page that never answers fails the test instead of hanging it.
        .timeout(std::time::Duration::from_secs(15))
        .build()
        .unwrap()
}

/// Signs in through the login form and returns the browser and its CSRF token.
async fn signed_in(app: &TestApp, username: &str) -> (reqwest::Client, String) {
    let browser = plain_browser();
    let response = browser
        .post(app.url("/sfn/login"))
        .header(header::ACCEPT, "text/html")
        .header(header::REFERER, app.url("/login"))
        .form(&[
            ("username", username),
            ("password", PASSWORD),
            ("next", "/admin"),
        ])
        .send()
        .await
        .unwrap();
    assert!(response.status().is_redirection(), "{}", response.status());
    let me: Value = browser
        .post(app.url("/sfn/current-user"))
        .header(header::ACCEPT, "application/json")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let csrf = me["csrf"].as_str().unwrap().to_owned();
    (browser, csrf)
}

async fn page(browser: &reqwest::Client, app: &TestApp, path: &str) -> (u16, String) {
    let response = browser.get(app.url(path)).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

/// Posts a form as a browser without JavaScript does, and follows the redirect
/// back to the page that shows the outcome.
async fn post_form(
    browser: &reqwest::Client,
    app: &TestApp,
    endpoint: &str,
    from: &str,
    fields: &[(&str, &str)],
) -> (u16, String) {
    let response = browser
        .post(app.url(&format!("/sfn/{endpoint}")))
        .header(header::ACCEPT, "text/html")
        .header(header::REFERER, app.url(from))
        .form(fields)
        .send()
        .await
        .unwrap();
    assert!(
        response.status().is_redirection(),
        "{}: {}",
        response.status(),
        response.text().await.unwrap()
    );
    let location = response.headers()[header::LOCATION]
        .to_str()
        .unwrap()
        .to_owned();
    let target = if location.starts_with("http") {
        location
    } else {
        app.url(&location)
    };
    let response = browser.get(target).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

#[tokio::test]
async fn visitors_are_sent_to_sign_in_and_tenant_users_get_403() {
    let _serial = PAGE_RENDERING.lock().await;
    let app = spawn_app(Backend::Sqlite).await;
    with_catalog(&app, "acme").await;
    app.user("erin", Role::User, "acme").await;

    let response = plain_browser()
        .get(app.url("/admin/services?x=1"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 303);
    assert_eq!(
        response.headers()[header::LOCATION],
        "/login?next=/admin/services%3Fx%3D1"
    );

    let (browser, _) = signed_in(&app, "erin").await;
    for path in [
        "/admin",
        "/admin/services",
        "/admin/templates/lifecycle",
        "/admin/users",
    ] {
        let (status, html) = page(&browser, &app, path).await;
        assert_eq!(status, 403, "{path}");
        assert!(html.contains("data-testid=\"forbidden\""), "{path}: {html}");
        assert!(!html.contains("data-testid=\"entity-table\""), "{path}");
    }
}

#[tokio::test]
async fn admin_pages_render_on_the_server() {
    let _serial = PAGE_RENDERING.lock().await;
    let app = spawn_app(Backend::Sqlite).await;
    with_catalog(&app, "acme").await;
    let (browser, _) = signed_in(&app, "acme-admin").await;
    let checks = [
        ("/admin", "data-testid=\"overview\""),
        ("/admin", "tasks running on"),
        ("/admin/providers", "data-entity=\"local\""),
        ("/admin/hardware", "data-entity=\"small\""),
        ("/admin/images", "data-entity=\"debian\""),
        ("/admin/services", "data-entity=\"web\""),
        ("/admin/templates", "data-entity=\"lifecycle\""),
        ("/admin/services/web", "data-testid=\"history\""),
        ("/admin/services/new", "data-testid=\"entity-form\""),
        ("/admin/services/web/edit", "data-testid=\"entity-form\""),
        ("/admin/catalog", "data-testid=\"import-form\""),
        ("/admin/resources", "Upload a version"),
        ("/admin/tenants", "data-tenant=\"acme\""),
        ("/admin/users", "data-user=\"acme-admin\""),
        ("/admin/tokens", "New token"),
        ("/admin/hosts", "Register a host"),
        ("/admin/audit", "catalog.import"),
    ];
    for (path, needle) in checks {
        let (status, html) = page(&browser, &app, path).await;
        assert_eq!(status, 200, "{path}: {html}");
        assert!(html.contains(needle), "{path} lacks {needle}: {html}");
    }
    // The try-it panel solves on the server from the query string.
    let (_, html) = page(&browser, &app, "/admin/templates/lifecycle?size=3").await;
    assert!(html.contains("data-testid=\"plan-preview\""), "{html}");
    let (_, html) = page(&browser, &app, "/admin/templates/lifecycle?size=1").await;
    assert!(html.contains("data-testid=\"unsatisfiable\""), "{html}");
}

#[tokio::test]
async fn a_bad_form_shows_the_error_next_to_its_field_and_saves_nothing() {
    let _serial = PAGE_RENDERING.lock().await;
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let (browser, csrf) = signed_in(&app, "acme-admin").await;
    let (_, html) = post_form(
        &browser,
        &app,
        "admin-save-entity",
        "/admin/services/new",
        &[
            ("csrf", &csrf),
            ("kind", "Services"),
            ("original", ""),
            ("name", "cache"),
            ("description", ""),
            (
                "body",
                "{\"dependencies\": {\"runtime\": {\"requires\": [\"nosuch\"]}}}",
            ),
        ],
    )
    .await;
    assert!(html.contains("data-field=\"body\""), "{html}");
    assert!(html.contains("nosuch"), "{html}");
    let (_, html) = post_form(
        &browser,
        &app,
        "admin-save-entity",
        "/admin/services/new",
        &[
            ("csrf", &csrf),
            ("kind", "Services"),
            ("original", ""),
            ("name", "bad name!"),
            ("description", ""),
            ("body", "{}"),
        ],
    )
    .await;
    assert!(html.contains("data-field=\"name\""), "{html}");
    let response = app
        .call(&admin, Method::GET, "/api/v1/catalog/services/cache", None)
        .await;
    assert_eq!(response.status(), 404);

    // A good one is saved and shown.
    let (status, html) = post_form(
        &browser,
        &app,
        "admin-save-entity",
        "/admin/services/new",
        &[
            ("csrf", &csrf),
            ("kind", "Services"),
            ("original", ""),
            ("name", "cache"),
            ("description", "a cache"),
            (
                "body",
                "{\"dependencies\": {\"runtime\": {\"requires\": [\"base\"]}}}",
            ),
        ],
    )
    .await;
    assert_eq!(status, 200);
    assert!(html.contains("Saved."), "{html}");
    assert!(html.contains("a cache"), "{html}");
}

#[tokio::test]
async fn deleting_what_is_in_use_is_refused_with_the_list() {
    let _serial = PAGE_RENDERING.lock().await;
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let (browser, csrf) = signed_in(&app, "acme-admin").await;
    let (_, html) = post_form(
        &browser,
        &app,
        "admin-delete-entity",
        "/admin/services/base",
        &[("csrf", &csrf), ("kind", "Services"), ("name", "base")],
    )
    .await;
    assert!(html.contains("data-testid=\"delete-refused\""), "{html}");
    assert!(
        html.contains("lifecycle"),
        "the template using it is named: {html}"
    );
    let response = app
        .call(&admin, Method::GET, "/api/v1/catalog/services/base", None)
        .await;
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn admin_forms_without_the_csrf_token_change_nothing() {
    let _serial = PAGE_RENDERING.lock().await;
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let (browser, _) = signed_in(&app, "acme-admin").await;
    for (endpoint, fields) in [
        (
            "admin-delete-entity",
            vec![("csrf", "forged"), ("kind", "Services"), ("name", "extra")],
        ),
        (
            "admin-save-entity",
            vec![
                ("csrf", "forged"),
                ("kind", "Services"),
                ("original", ""),
                ("name", "sneaky"),
                ("description", ""),
                ("body", "{}"),
            ],
        ),
    ] {
        let body = browser
            .post(app.url(&format!("/sfn/{endpoint}")))
            .header(header::ACCEPT, "application/json")
            .form(&fields)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(body.contains("security token"), "{endpoint}: {body}");
    }
    for name in ["extra", "sneaky"] {
        let status = app
            .call(
                &admin,
                Method::GET,
                &format!("/api/v1/catalog/services/{name}"),
                None,
            )
            .await
            .status();
        assert_eq!(status, if name == "extra" { 200 } else { 404 });
    }
}

#[tokio::test]
async fn an_import_with_errors_lists_them_and_saves_nothing() {
    let _serial = PAGE_RENDERING.lock().await;
    let app = spawn_app(Backend::Sqlite).await;
    with_catalog(&app, "acme").await;
    let (browser, csrf) = signed_in(&app, "acme-admin").await;
    let bundle = serde_json::json!({
        "providers": [{"name": "local", "providertype": "local"}],
        "services": [{"name": "a", "dependencies": {"runtime": {"requires": ["ghost"]}}}],
        "clustertemplates": [{"name": "t", "defaults": {"services": ["a", "phantom"], "provider": "local"}}]
    })
    .to_string();
    let (_, html) = post_form(
        &browser,
        &app,
        "admin-import-catalog",
        "/admin/catalog",
        &[("csrf", &csrf), ("bundle", &bundle)],
    )
    .await;
    assert!(html.contains("data-testid=\"import-report\""), "{html}");
    assert!(html.contains("ghost") && html.contains("phantom"), "{html}");
    let (_, html) = page(&browser, &app, "/admin/services").await;
    assert!(
        html.contains("data-entity=\"web\""),
        "the old catalog stays: {html}"
    );
}

#[tokio::test]
async fn a_superadmin_switches_the_administered_tenant() {
    let _serial = PAGE_RENDERING.lock().await;
    let app = spawn_app(Backend::Sqlite).await;
    with_catalog(&app, "acme").await;
    app.user("root", Role::Superadmin, "default").await;
    let (browser, csrf) = signed_in(&app, "root").await;
    let (_, html) = page(&browser, &app, "/admin/services").await;
    assert!(!html.contains("data-entity=\"web\""), "{html}");
    let acme = app.store.tenant_by_name("acme").await.unwrap().id;
    let (_, html) = post_form(
        &browser,
        &app,
        "admin-switch-tenant",
        "/admin/services",
        &[
            ("csrf", &csrf),
            ("tenant", &acme),
            ("next", "/admin/services"),
        ],
    )
    .await;
    assert!(html.contains("data-entity=\"web\""), "{html}");
}
