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

use crate::helpers::{render_page, spawn_app, with_catalog, TestApp, PASSWORD};

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
    render_page(browser, &app.url(path)).await
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
    render_page(browser, &target).await
}

#[tokio::test]
async fn visitors_are_sent_to_sign_in_and_tenant_users_get_403() {
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
        "/admin/users/erin",
        "/admin/partials",
    ] {
        let (status, html) = page(&browser, &app, path).await;
        assert_eq!(status, 403, "{path}");
        assert!(html.contains("data-testid=\"forbidden\""), "{path}: {html}");
        assert!(!html.contains("data-testid=\"entity-table\""), "{path}");
        assert!(
            !html.contains("class=\"admin-nav\""),
            "no admin sidebar for a tenant user: {path}: {html}"
        );
    }
}

#[tokio::test]
async fn admin_pages_render_on_the_server() {
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
        ("/admin/resources", "Upload a file"),
        ("/admin/partials", "href=\"/admin/partials/new\""),
        ("/admin/partials/new", "data-testid=\"entity-form\""),
        ("/admin/users/acme-admin", "data-testid=\"user-is-me\""),
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
            ("kind", "services"),
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
            ("kind", "services"),
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
            ("kind", "services"),
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
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let (browser, csrf) = signed_in(&app, "acme-admin").await;
    let (_, html) = post_form(
        &browser,
        &app,
        "admin-delete-entity",
        "/admin/services/base",
        &[("csrf", &csrf), ("kind", "services"), ("name", "base")],
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
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let (browser, _) = signed_in(&app, "acme-admin").await;
    for (endpoint, fields) in [
        (
            "admin-delete-entity",
            vec![("csrf", "forged"), ("kind", "services"), ("name", "extra")],
        ),
        (
            "admin-save-entity",
            vec![
                ("csrf", "forged"),
                ("kind", "services"),
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
    // The switcher is in the sidebar of every admin page, showing the choice.
    for path in [
        "/admin",
        "/admin/users",
        "/admin/services/web",
        "/admin/audit",
    ] {
        let (_, html) = page(&browser, &app, path).await;
        assert!(
            html.contains("data-testid=\"tenant-switcher\""),
            "{path}: {html}"
        );
        assert!(
            html.contains(&format!("<option value=\"{acme}\" selected")),
            "{path}: {html}"
        );
    }
}

/// Posts a form as JavaScript does (JSON back): the status the refusal carries.
async fn post_json(
    browser: &reqwest::Client,
    app: &TestApp,
    endpoint: &str,
    fields: &[(&str, &str)],
) -> (u16, String) {
    let response = browser
        .post(app.url(&format!("/sfn/{endpoint}")))
        .header(header::ACCEPT, "application/json")
        .form(fields)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

#[tokio::test]
async fn an_admin_changes_a_users_role_and_password_and_deletes_them() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let erin = app.user("erin", Role::User, "acme").await;
    let zed = app.user("zed", Role::User, "other").await;
    let (browser, csrf) = signed_in(&app, "acme-admin").await;
    let (erins_browser, _) = signed_in(&app, "erin").await;

    let (status, html) = page(&browser, &app, "/admin/users").await;
    assert_eq!(status, 200);
    assert!(html.contains("href=\"/admin/users/erin\""), "{html}");
    let (status, html) = page(&browser, &app, "/admin/users/erin").await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("data-testid=\"role-form\""), "{html}");
    assert!(
        !html.contains("value=\"superadmin\""),
        "a tenant admin is not offered superadmin: {html}"
    );
    // Another tenant's user does not exist for a tenant admin.
    let (status, _) = page(&browser, &app, "/admin/users/zed").await;
    assert_eq!(status, 404);
    let (status, _) = post_json(
        &browser,
        &app,
        "admin-delete-user",
        &[("csrf", &csrf), ("id", &zed.id)],
    )
    .await;
    assert_eq!(status, 404);

    // Role: superadmin is refused to a tenant admin, one's own role too.
    let (status, body) = post_json(
        &browser,
        &app,
        "admin-set-user-role",
        &[("csrf", &csrf), ("id", &erin.id), ("role", "superadmin")],
    )
    .await;
    assert_eq!(status, 403, "{body}");
    let (status, body) = post_json(
        &browser,
        &app,
        "admin-set-user-role",
        &[("csrf", &csrf), ("id", &admin.id), ("role", "user")],
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("your own role"), "{body}");
    let (_, html) = post_form(
        &browser,
        &app,
        "admin-set-user-role",
        "/admin/users/erin",
        &[("csrf", &csrf), ("id", &erin.id), ("role", "tenant-admin")],
    )
    .await;
    assert!(html.contains("data-testid=\"user-saved\""), "{html}");
    let user = app.store.user(&erin.id).await.unwrap();
    assert_eq!(user.role, Role::TenantAdmin);
    // The role change ended erin's session.
    let (status, _) = post_json(&erins_browser, &app, "admin-users", &[]).await;
    assert_eq!(status, 401);

    // Password: too short shows next to the field; a good one works for sign-in.
    let (_, html) = post_form(
        &browser,
        &app,
        "admin-reset-user-password",
        "/admin/users/erin",
        &[("csrf", &csrf), ("id", &erin.id), ("password", "short")],
    )
    .await;
    assert!(html.contains("data-field=\"password\""), "{html}");
    let (_, html) = post_form(
        &browser,
        &app,
        "admin-reset-user-password",
        "/admin/users/erin",
        &[
            ("csrf", &csrf),
            ("id", &erin.id),
            ("password", "a brand new passphrase"),
        ],
    )
    .await;
    assert!(html.contains("Password set."), "{html}");
    assert!(
        !html.contains("a brand new passphrase"),
        "never shown back: {html}"
    );
    let login = plain_browser()
        .post(app.url("/sfn/login"))
        .header(header::ACCEPT, "application/json")
        .form(&[
            ("username", "erin"),
            ("password", "a brand new passphrase"),
            ("next", "/clusters"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 200, "{}", login.text().await.unwrap());

    // Delete: never oneself; erin goes.
    let (status, body) = post_json(
        &browser,
        &app,
        "admin-delete-user",
        &[("csrf", &csrf), ("id", &admin.id)],
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("cannot delete yourself"), "{body}");
    let (_, html) = post_form(
        &browser,
        &app,
        "admin-delete-user",
        "/admin/users/erin?confirm=delete-user",
        &[("csrf", &csrf), ("id", &erin.id)],
    )
    .await;
    assert!(html.contains("data-testid=\"user-deleted\""), "{html}");
    assert!(!html.contains("data-user=\"erin\""), "{html}");
    assert!(app.store.user(&erin.id).await.is_err());
    assert!(app.store.user(&zed.id).await.is_ok());
}

#[tokio::test]
async fn a_superadmin_deletes_an_unused_tenant_and_is_refused_a_used_one() {
    let app = spawn_app(Backend::Sqlite).await;
    let busy = with_catalog(&app, "busy").await;
    let response = app
        .call(
            &busy,
            Method::POST,
            "/api/v1/clusters",
            Some(&serde_json::json!({"name": "keep", "template": "lifecycle", "size": 2})),
        )
        .await;
    assert_eq!(response.status(), 201);
    let idle = app.user("idle-user", Role::User, "idle").await;
    app.user("root", Role::Superadmin, "default").await;
    let (browser, csrf) = signed_in(&app, "root").await;

    let (status, html) = page(&browser, &app, "/admin/tenants").await;
    assert_eq!(status, 200);
    assert!(html.contains("data-testid=\"live-clusters\""), "{html}");
    assert!(html.contains(">keep<"), "the busy tenant's cluster: {html}");

    // Posted from a confirmation that showed before the cluster was made: the page
    // it goes back to says why the tenant stays.
    let confirmation = format!("/admin/tenants?confirm=delete-tenant&id={}", busy.tenant_id);
    let (_, html) = post_form(
        &browser,
        &app,
        "admin-delete-tenant",
        &confirmation,
        &[("csrf", &csrf), ("id", &busy.tenant_id)],
    )
    .await;
    assert!(
        html.contains("data-testid=\"tenant-delete-blocked\""),
        "{html}"
    );
    assert!(html.contains("keep"), "{html}");
    let (status, _) = post_json(
        &browser,
        &app,
        "admin-delete-tenant",
        &[("csrf", &csrf), ("id", &busy.tenant_id)],
    )
    .await;
    assert_eq!(status, 409);
    assert!(app.store.tenant_by_name("busy").await.is_ok());

    let (_, html) = post_form(
        &browser,
        &app,
        "admin-delete-tenant",
        &format!("/admin/tenants?confirm=delete-tenant&id={}", idle.tenant_id),
        &[("csrf", &csrf), ("id", &idle.tenant_id)],
    )
    .await;
    assert!(html.contains("data-testid=\"tenant-deleted\""), "{html}");
    assert!(!html.contains("data-tenant=\"idle\""), "{html}");
    assert!(app.store.tenant_by_name("idle").await.is_err());

    // A tenant admin cannot delete tenants, not even their own.
    let (admin_browser, admin_csrf) = signed_in(&app, "busy-admin").await;
    let (status, _) = post_json(
        &admin_browser,
        &app,
        "admin-delete-tenant",
        &[("csrf", &admin_csrf), ("id", &busy.tenant_id)],
    )
    .await;
    assert_eq!(status, 403);
}

/// A multipart body as a browser sends a form with a file input.
fn multipart_form(fields: &[(&str, &str)], file: Option<(&str, &[u8])>) -> (String, Vec<u8>) {
    let boundary = "corral-test-boundary-7d3f";
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    if let Some((file_name, bytes)) = file {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// Posts the upload form without JavaScript and follows the redirect.
async fn upload_file(
    browser: &reqwest::Client,
    app: &TestApp,
    fields: &[(&str, &str)],
    file: Option<(&str, &[u8])>,
) -> String {
    let (content_type, body) = multipart_form(fields, file);
    let response = browser
        .post(app.url("/sfn/admin-upload-resource-file"))
        .header(header::ACCEPT, "text/html")
        .header(header::REFERER, app.url("/admin/resources"))
        .header(header::CONTENT_TYPE, content_type)
        .body(body)
        .send()
        .await
        .unwrap();
    assert!(response.status().is_redirection(), "{}", response.status());
    let location = response.headers()[header::LOCATION].to_str().unwrap();
    let target = if location.starts_with("http") {
        location.to_owned()
    } else {
        app.url(location)
    };
    browser
        .get(target)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_binary_file_uploads_as_the_next_resource_version_without_javascript() {
    use sha2::Digest;
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let (browser, csrf) = signed_in(&app, "acme-admin").await;
    let (_, html) = page(&browser, &app, "/admin/resources").await;
    assert!(
        html.contains("enctype=\"multipart/form-data\""),
        "a plain form: {html}"
    );

    // Every byte value, so nothing is read as text on the way.
    let first: Vec<u8> = (0..=255u8).cycle().take(3000).collect();
    let html = upload_file(
        &browser,
        &app,
        &[
            ("csrf", &csrf),
            ("kind", "files"),
            ("name", ""),
            ("stage", "1"),
        ],
        Some(("blob.bin", &first)),
    )
    .await;
    assert!(html.contains("data-testid=\"uploaded\""), "{html}");
    assert!(
        html.contains("blob.bin"),
        "the file's name is the default: {html}"
    );
    let mut second = first.clone();
    second.extend_from_slice(&[0, 0, 255]);
    let html = upload_file(
        &browser,
        &app,
        &[("csrf", &csrf), ("kind", "files"), ("name", "blob.bin")],
        Some(("other-name.bin", &second)),
    )
    .await;
    assert!(html.contains("data-testid=\"uploaded\""), "{html}");
    assert!(
        html.contains("title=\"3003 bytes\""),
        "the exact size: {html}"
    );

    let listed: Value = app
        .call(&admin, Method::GET, "/api/v1/resources", None)
        .await
        .json()
        .await
        .unwrap();
    let versions: Vec<(i64, String, bool)> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["name"] == "blob.bin")
        .map(|item| {
            (
                item["version"].as_i64().unwrap(),
                item["sha256"].as_str().unwrap().to_owned(),
                item["staged"].as_bool().unwrap(),
            )
        })
        .collect();
    let sha = |bytes: &[u8]| {
        sha2::Sha256::digest(bytes)
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect::<String>()
    };
    assert!(versions.contains(&(1, sha(&first), true)), "{versions:?}");
    assert!(versions.contains(&(2, sha(&second), false)), "{versions:?}");

    // Refusals: no file, an unknown kind, no CSRF token; nothing is stored.
    let refusals = [
        (
            csrf.as_str(),
            "files",
            ("", &b""[..]),
            "data-field=\"file\"",
        ),
        (&csrf, "binaries", ("x.bin", b"\x00\x01"), "binaries"),
        ("forged", "files", ("y.bin", b"\x00\x01"), "security token"),
    ];
    for (token, kind, file, says) in refusals {
        let html = upload_file(
            &browser,
            &app,
            &[("csrf", token), ("kind", kind), ("name", file.0)],
            Some(file),
        )
        .await;
        assert!(html.contains(says), "{kind} {file:?}: {html}");
    }
    let listed: Value = app
        .call(&admin, Method::GET, "/api/v1/resources", None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed["items"].as_array().unwrap().len(), 2, "{listed}");
}

#[tokio::test]
async fn a_partial_template_is_written_and_listed_like_the_other_kinds() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let (browser, csrf) = signed_in(&app, "acme-admin").await;
    let (status, html) = post_form(
        &browser,
        &app,
        "admin-save-entity",
        "/admin/partials/new",
        &[
            ("csrf", &csrf),
            ("kind", "partialtemplates"),
            ("original", ""),
            ("name", "monitoring"),
            ("description", "base everywhere"),
            ("body", "{\"immutable\": true}"),
            ("managed[]", "/defaults/services"),
            ("picks[]", "/defaults/services=base"),
        ],
    )
    .await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("Saved."), "{html}");
    assert!(html.contains("data-testid=\"history\""), "{html}");
    let stored: Value = app
        .call(
            &admin,
            Method::GET,
            "/api/v1/catalog/partialtemplates/monitoring",
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(stored["body"]["immutable"], true, "{stored}");
    assert_eq!(
        stored["body"]["defaults"]["services"],
        serde_json::json!(["base"]),
        "{stored}"
    );
    let (_, html) = page(&browser, &app, "/admin/partials").await;
    assert!(html.contains("data-entity=\"monitoring\""), "{html}");
    assert!(html.contains("immutable"), "the summary says so: {html}");
    let (status, html) = page(&browser, &app, "/admin/partials/monitoring/edit").await;
    assert_eq!(status, 200);
    assert!(html.contains("Default services"), "the pickers: {html}");
}

/// Tenant `acme` (lifecycle catalog, its admin) with erin, who owns the cluster
/// `erins` and has an API token; tenants `bravo` and `idle` each with a user; a
/// superadmin `root`. Returns erin's id.
async fn users_with_clusters(app: &TestApp) -> String {
    with_catalog(app, "acme").await;
    let erin = app.user("erin", Role::User, "acme").await;
    let created = app
        .call(
            &erin,
            Method::POST,
            "/api/v1/clusters",
            Some(&serde_json::json!({"name": "erins", "template": "lifecycle", "size": 2})),
        )
        .await;
    assert_eq!(created.status(), 201);
    app.user("bea", Role::User, "bravo").await;
    app.user("ida", Role::User, "idle").await;
    app.user("root", Role::Superadmin, "default").await;
    erin.id
}

#[tokio::test]
async fn deleting_a_user_or_a_tenant_shows_what_goes_before_it_happens() {
    let app = spawn_app(Backend::Sqlite).await;
    let erin = users_with_clusters(&app).await;
    let (browser, _) = signed_in(&app, "root").await;

    // The user's page offers a link to the confirmation, not a delete form.
    let (_, html) = page(&browser, &app, "/admin/users/erin").await;
    assert!(html.contains("href=\"?confirm=delete-user\""), "{html}");
    assert!(
        !html.contains("admin-delete-user"),
        "one click must not delete: {html}"
    );
    let (status, html) = page(&browser, &app, "/admin/users/erin?confirm=delete-user").await;
    assert_eq!(status, 200);
    assert!(
        html.contains("data-testid=\"confirm-delete-user\""),
        "{html}"
    );
    assert!(html.contains("Their API token stops working."), "{html}");
    assert!(html.contains("stays in tenant acme"), "{html}");
    assert!(html.contains(">erins<"), "her cluster is named: {html}");
    assert!(html.contains("action=\"/sfn/admin-delete-user\""), "{html}");
    assert!(
        html.contains("href=\"/admin/users/erin\""),
        "cancel: {html}"
    );
    assert!(
        app.store.user(&erin).await.is_ok(),
        "looking deletes nothing"
    );

    // Tenants: a link per row; the confirmation names the users that go with it.
    let idle = app.store.tenant_by_name("idle").await.unwrap().id;
    let acme = app.store.tenant_by_name("acme").await.unwrap().id;
    let (_, html) = page(&browser, &app, "/admin/tenants").await;
    assert!(
        html.contains(&format!("href=\"?confirm=delete-tenant&amp;id={idle}\"")),
        "{html}"
    );
    assert!(
        !html.contains("admin-delete-tenant"),
        "one click must not delete: {html}"
    );
    let (_, html) = page(
        &browser,
        &app,
        &format!("/admin/tenants?confirm=delete-tenant&id={idle}"),
    )
    .await;
    assert!(
        html.contains("data-testid=\"confirm-delete-tenant\""),
        "{html}"
    );
    assert!(
        html.contains("Its user ida can no longer sign in"),
        "{html}"
    );
    assert!(
        html.contains("action=\"/sfn/admin-delete-tenant\""),
        "{html}"
    );
    assert!(html.contains("href=\"/admin/tenants\""), "cancel: {html}");
    // A tenant with live clusters says why it cannot go, and offers no button.
    let (_, html) = page(
        &browser,
        &app,
        &format!("/admin/tenants?confirm=delete-tenant&id={acme}"),
    )
    .await;
    assert!(
        html.contains("data-testid=\"tenant-delete-blocked\""),
        "{html}"
    );
    assert!(html.contains(">erins<"), "{html}");
    assert!(!html.contains("admin-delete-tenant"), "{html}");
    // The default tenant is never offered.
    let (_, html) = page(
        &browser,
        &app,
        &format!(
            "/admin/tenants?confirm=delete-tenant&id={}",
            engine::store::tenants::DEFAULT_TENANT_ID
        ),
    )
    .await;
    assert!(!html.contains("confirm-delete-tenant"), "{html}");
}

#[tokio::test]
async fn a_superadmin_moves_a_user_after_seeing_what_the_move_does() {
    let app = spawn_app(Backend::Sqlite).await;
    let erin = users_with_clusters(&app).await;

    // A tenant admin is offered no move, and is refused one.
    let (admin_browser, admin_csrf) = signed_in(&app, "acme-admin").await;
    let (_, html) = page(&admin_browser, &app, "/admin/users/erin").await;
    assert!(!html.contains("move-user-start"), "{html}");
    let (status, body) = post_json(
        &admin_browser,
        &app,
        "admin-move-user",
        &[("csrf", &admin_csrf), ("id", &erin), ("tenant", "bravo")],
    )
    .await;
    assert_eq!(status, 403, "{body}");

    let (browser, csrf) = signed_in(&app, "root").await;
    let (_, html) = page(&browser, &app, "/admin/users/erin").await;
    assert!(html.contains("data-testid=\"move-user-start\""), "{html}");
    assert!(html.contains("<option value=\"bravo\">"), "{html}");
    assert!(
        !html.contains("<option value=\"acme\">"),
        "not her own tenant: {html}"
    );
    let confirm = "/admin/users/erin?confirm=move-user&tenant=bravo";
    let (_, html) = page(&browser, &app, confirm).await;
    assert!(html.contains("Move erin from acme to bravo?"), "{html}");
    assert!(html.contains("Their API token is revoked"), "{html}");
    assert!(html.contains("Their sessions end"), "{html}");
    assert!(html.contains("stays in tenant acme"), "{html}");
    assert!(html.contains(">erins<"), "{html}");
    assert!(html.contains("Their role stays user"), "{html}");
    assert_eq!(
        app.store.user(&erin).await.unwrap().tenant_id,
        app.store.tenant_by_name("acme").await.unwrap().id
    );
    // A tenant that is not offered gets no button.
    let (_, html) = page(
        &browser,
        &app,
        "/admin/users/erin?confirm=move-user&tenant=nope",
    )
    .await;
    assert!(!html.contains("admin-move-user"), "{html}");

    // Refusals answer with their reason; the move itself lands on the user's page.
    let (status, body) = post_json(
        &browser,
        &app,
        "admin-move-user",
        &[("csrf", &csrf), ("id", &erin), ("tenant", "nope")],
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("no tenant named"), "{body}");
    let (_, html) = post_form(
        &browser,
        &app,
        "admin-move-user",
        confirm,
        &[("csrf", &csrf), ("id", &erin), ("tenant", "bravo")],
    )
    .await;
    assert!(html.contains("data-testid=\"user-saved\""), "{html}");
    assert!(html.contains("Moved to tenant bravo."), "{html}");
    assert!(html.contains("in tenant <strong>bravo</strong>"), "{html}");
    let bravo = app.store.tenant_by_name("bravo").await.unwrap().id;
    assert_eq!(app.store.user(&erin).await.unwrap().tenant_id, bravo);
}

/// `/admin/rollouts` (issue 40) lists the tenant's rollouts for an admin: template,
/// state, who started it, each cluster with its state, and the command that starts
/// one. A tenant user gets the 403 page, with no rollout on it; another tenant's
/// admin sees none of them.
#[tokio::test]
async fn the_rollouts_page_lists_rollouts_for_admins_only() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    with_catalog(&app, "globex").await;
    app.user("erin", Role::User, "acme").await;
    let response = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/clusters",
            Some(&serde_json::json!({"name": "rolled", "template": "lifecycle", "size": 2})),
        )
        .await;
    assert_eq!(response.status(), 201);
    // The worker service changes: the cluster is behind, and a rollout starts.
    let changed = crate::helpers::lifecycle_catalog()
        .to_string()
        .replace("echo worker started", "echo worker started again");
    let changed: Value = serde_json::from_str(&changed).unwrap();
    let response = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/catalog/import",
            Some(&changed),
        )
        .await;
    assert!(response.status().is_success(), "{}", response.status());
    let response = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/catalog/rollouts",
            Some(&serde_json::json!({"template": "lifecycle", "max_parallel": 2})),
        )
        .await;
    assert_eq!(response.status(), 201);
    let started: Value = response.json().await.unwrap();
    let id = started["rollout"]["id"].as_str().unwrap().to_owned();

    let (browser, _) = signed_in(&app, "acme-admin").await;
    let (status, html) = page(&browser, &app, "/admin/rollouts").await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("data-testid=\"rollouts\""), "{html}");
    assert!(html.contains(&format!("data-rollout=\"{id}\"")), "{html}");
    assert!(html.contains("data-rollout-cluster=\"rolled\""), "{html}");
    assert!(html.contains("acme-admin"), "who started it: {html}");
    assert!(html.contains("corral catalog rollout --template"), "{html}");
    assert!(
        html.contains("href=\"/admin/rollouts\""),
        "in the admin nav: {html}"
    );

    let (browser, _) = signed_in(&app, "erin").await;
    let (status, html) = page(&browser, &app, "/admin/rollouts").await;
    assert_eq!(status, 403, "{html}");
    assert!(html.contains("data-testid=\"forbidden\""), "{html}");
    assert!(!html.contains(&id), "{html}");
    assert!(!html.contains("data-testid=\"rollouts\""), "{html}");

    let (browser, _) = signed_in(&app, "globex-admin").await;
    let (status, html) = page(&browser, &app, "/admin/rollouts").await;
    assert_eq!(status, 200, "{html}");
    assert!(!html.contains(&id), "another tenant's rollout: {html}");
    assert!(html.contains("No rollouts yet."), "{html}");
}

/// The rollouts page previews and starts a rollout as a browser without JavaScript
/// does (issue 40): the preview is a GET of the form's inputs and lists each cluster
/// behind with its owner, revisions, plan and pin, writing nothing; "Start rollout"
/// posts it and the list shows it. Refusals are named on the page: nothing behind
/// (preview and start), an unknown template, 0 or a word at once, one already
/// running, and a tenant user's post.
#[tokio::test]
async fn the_rollouts_page_previews_and_starts_a_rollout_without_javascript() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let owner = app.user("rollout-owner", Role::User, "acme").await;
    let mut ids = Vec::new();
    for name in ["rolled", "kept"] {
        let (status, created) = app
            .call_json(
                &owner,
                Method::POST,
                "/api/v1/clusters",
                Some(serde_json::json!({"name": name, "template": "lifecycle", "size": 2})),
            )
            .await;
        assert_eq!(status, 201, "{created}");
        ids.push(created["cluster"]["id"].as_str().unwrap().to_owned());
    }
    let (status, body) = app
        .call_json(
            &owner,
            Method::PUT,
            &format!("/api/v1/clusters/{}/pin", ids[1]),
            Some(serde_json::json!({"pinned": true})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (browser, csrf) = signed_in(&app, "acme-admin").await;
    let preview = "/admin/rollouts?template=lifecycle&max_parallel=1";
    // The form offers the template; nothing is behind yet: the preview says so and
    // has no start button, and a start is refused with the reason.
    let (status, html) = page(&browser, &app, "/admin/rollouts").await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("data-testid=\"rollout-form\""), "{html}");
    assert!(
        html.contains("<optgroup label=\"Nothing behind\">"),
        "{html}"
    );
    assert!(
        html.contains("lifecycle (r1: 0 of 2 cluster(s) behind)"),
        "{html}"
    );
    let (status, html) = page(&browser, &app, preview).await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("data-testid=\"rollout-nothing\""), "{html}");
    assert!(html.contains("nothing to roll out"), "{html}");
    assert!(!html.contains("data-testid=\"start-rollout\""), "{html}");
    let (status, html) = start_rollout(&browser, &app, preview, &csrf).await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("class=\"form-error\""), "{html}");
    assert!(
        html.contains("no cluster of template &quot;lifecycle&quot; is behind")
            || html.contains("no cluster of template \"lifecycle\" is behind"),
        "{html}"
    );

    // Bad input, each named near the form.
    let (status, html) = page(&browser, &app, "/admin/rollouts?template=no-such").await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("data-testid=\"rollout-refusal\""), "{html}");
    assert!(html.contains("no such template in your catalog"), "{html}");
    assert!(html.contains("no-such"), "{html}");
    let (_, html) = page(
        &browser,
        &app,
        "/admin/rollouts?template=lifecycle&max_parallel=0",
    )
    .await;
    assert!(html.contains("max_parallel must be at least 1"), "{html}");
    let (_, html) = page(
        &browser,
        &app,
        "/admin/rollouts?template=lifecycle&max_parallel=two",
    )
    .await;
    assert!(html.contains("is not a number of clusters"), "{html}");

    // The template and the worker service change: both clusters are behind.
    let mut changed = crate::helpers::lifecycle_catalog();
    changed["clustertemplates"][0]["description"] = "one web node, workers behind it".into();
    let changed: Value = serde_json::from_str(
        &changed
            .to_string()
            .replace("echo worker started", "echo worker started again"),
    )
    .unwrap();
    let (status, body) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/catalog/import",
            Some(changed),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    let (status, html) = page(&browser, &app, "/admin/rollouts").await;
    assert_eq!(status, 200, "{html}");
    assert!(
        html.contains("<optgroup label=\"Clusters behind\">"),
        "{html}"
    );
    assert!(
        html.contains("lifecycle (r2: 2 of 2 cluster(s) behind)"),
        "{html}"
    );
    let (status, html) = page(&browser, &app, preview).await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("data-testid=\"rollout-preview\""), "{html}");
    assert!(
        html.contains("data-candidate=\"rolled\" data-pinned=\"false\""),
        "{html}"
    );
    assert!(
        html.contains("data-candidate=\"kept\" data-pinned=\"true\""),
        "{html}"
    );
    assert!(html.contains("rollout-owner"), "the owner: {html}");
    assert!(html.contains("r1 → r2"), "the revisions: {html}");
    assert!(
        html.contains("worker, lifecycle changed;"),
        "the plan summary: {html}"
    );
    assert!(html.contains("pinned: skipped"), "{html}");
    assert!(html.contains("upgrades 1 cluster(s)"), "{html}");
    assert!(html.contains("data-testid=\"start-rollout\""), "{html}");
    // A preview writes nothing.
    let (_, rollouts) = app
        .call_json(&admin, Method::GET, "/api/v1/catalog/rollouts", None)
        .await;
    assert_eq!(rollouts, serde_json::json!([]), "{rollouts}");

    // A tenant user cannot start one.
    app.user("erin", Role::User, "acme").await;
    let (erin, erin_csrf) = signed_in(&app, "erin").await;
    let (_, html) = start_rollout(&erin, &app, "/admin/rollouts", &erin_csrf).await;
    assert!(html.contains("data-testid=\"forbidden\""), "{html}");
    let (_, rollouts) = app
        .call_json(&admin, Method::GET, "/api/v1/catalog/rollouts", None)
        .await;
    assert_eq!(rollouts, serde_json::json!([]), "{rollouts}");

    // Start: the list shows it first, with its clusters.
    let (status, html) = start_rollout(&browser, &app, preview, &csrf).await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("data-testid=\"rollout-started\""), "{html}");
    let (_, rollouts) = app
        .call_json(&admin, Method::GET, "/api/v1/catalog/rollouts", None)
        .await;
    let id = rollouts[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(rollouts[0]["max_parallel"], 1, "{rollouts}");
    assert!(html.contains(&format!("data-rollout=\"{id}\"")), "{html}");
    assert!(html.contains("data-rollout-cluster=\"rolled\""), "{html}");
    assert!(
        html.contains("data-rollout-cluster=\"kept\" data-state=\"skipped-pinned\""),
        "{html}"
    );

    // While it runs, the preview says a new one is refused, and a start is.
    // (No worker pool runs here, so it stays running.)
    assert_eq!(rollouts[0]["state"], "running", "{rollouts}");
    let (_, html) = page(&browser, &app, preview).await;
    assert!(html.contains("data-testid=\"rollout-running\""), "{html}");
    let (_, html) = start_rollout(&browser, &app, preview, &csrf).await;
    assert!(html.contains("wait for it to end"), "{html}");
    let (_, after) = app
        .call_json(&admin, Method::GET, "/api/v1/catalog/rollouts", None)
        .await;
    assert_eq!(after.as_array().unwrap().len(), 1, "{after}");
}

/// Posts the rollouts page's "Start rollout" form for the lifecycle template, one
/// at a time, from the page `from`.
async fn start_rollout(
    browser: &reqwest::Client,
    app: &TestApp,
    from: &str,
    csrf: &str,
) -> (u16, String) {
    let fields = [
        ("csrf", csrf),
        ("template", "lifecycle"),
        ("max_parallel", "1"),
    ];
    post_form(browser, app, "admin-start-rollout", from, &fields).await
}

/// `/admin/hooks` (issue 43) as a browser without JavaScript uses it: an admin adds
/// an events hook and a gate through the form (bad input named: no event, no
/// operation, a bad URL), sends a test event, sees the delivery's status and the
/// receiver's answer once it is sent, redelivers it, and removes a hook. A tenant user
/// gets the 403 page.
#[tokio::test]
async fn the_hooks_page_adds_tests_redelivers_and_removes_hooks_without_javascript() {
    use engine::hooks::{Deliverer, DeliverySettings, HookNetwork};
    let db = engine::testing::TestDatabase::new(Backend::Sqlite).await;
    let store = engine::store::Store::open(&db.url)
        .await
        .unwrap()
        .with_secret_key(engine::testing::test_secret_key())
        .with_hook_network(HookNetwork::allowing(vec!["127.0.0.0/8".parse().unwrap()]));
    let app = crate::helpers::spawn_with_store(db, store).await;
    let admin = with_catalog(&app, "acme").await;
    app.user("erin", Role::User, "acme").await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/corral", listener.local_addr().unwrap());
    let receiver = axum::Router::new().fallback(|| async { "thanks from the receiver" });
    tokio::spawn(async move { axum::serve(listener, receiver).await.unwrap() });

    let (browser, csrf) = signed_in(&app, "acme-admin").await;
    let (status, html) = page(&browser, &app, "/admin/hooks").await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("No hooks yet."), "{html}");
    assert!(
        html.contains("href=\"/admin/hooks\""),
        "in the admin nav: {html}"
    );
    for event in api_types::HookEvent::ALL {
        assert!(
            html.contains(&format!("name=\"events[]\" value=\"{event}\"")),
            "{event}: {html}"
        );
    }

    // Bad input, each named.
    let add = |fields: Vec<(&'static str, String)>| {
        let mut all = vec![("csrf", csrf.clone())];
        all.extend(fields);
        all
    };
    let post = |fields: Vec<(&'static str, String)>| {
        let (browser, app) = (&browser, &app);
        async move {
            let fields: Vec<(&str, &str)> = fields
                .iter()
                .map(|(key, value)| (*key, value.as_str()))
                .collect();
            post_form(browser, app, "admin-add-hook", "/admin/hooks", &fields).await
        }
    };
    let common = |kind: &str| {
        vec![
            ("url", url.clone()),
            ("kind", kind.to_owned()),
            ("timeout_secs", String::new()),
            ("on_failure", "refuse".to_owned()),
            ("format", "json".to_owned()),
        ]
    };
    let (_, html) = post(add(common("events"))).await;
    assert!(html.contains("name at least one event"), "{html}");
    let (_, html) = post(add(common("gate"))).await;
    assert!(html.contains("tick at least one operation"), "{html}");
    let mut bad_url = common("events");
    bad_url[0].1 = "ftp://example.com/x".to_owned();
    bad_url.push(("events[]", "test".to_owned()));
    let (_, html) = post(add(bad_url)).await;
    assert!(html.contains("data-field=\"url\""), "{html}");
    let (_, hooks) = app
        .call_json(&admin, Method::GET, "/api/v1/hooks", None)
        .await;
    assert_eq!(hooks["items"], serde_json::json!([]), "{hooks}");

    // An events hook and a gate.
    let mut events = common("events");
    events.push(("events[]", "job.failed".to_owned()));
    events.push(("events[]", "test".to_owned()));
    let (status, html) = post(add(events)).await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("job.failed, test"), "{html}");
    let mut gate = common("gate");
    gate.push(("gates[]", "create".to_owned()));
    gate[2].1 = "5".to_owned();
    gate[3].1 = "allow".to_owned();
    let (_, html) = post(add(gate)).await;
    assert!(
        html.contains("gate for create (5 s, allow when unreachable)"),
        "{html}"
    );
    let (_, hooks) = app
        .call_json(&admin, Method::GET, "/api/v1/hooks", None)
        .await;
    let hooks = hooks["items"].as_array().unwrap().clone();
    assert_eq!(hooks.len(), 2, "{hooks:?}");
    let events_hook = hooks
        .iter()
        .find(|hook| hook["gates"] == serde_json::json!([]))
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let gate_hook = hooks
        .iter()
        .find(|hook| hook["gates"] != serde_json::json!([]))
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();

    // A test event: queued, then sent; its status and the answer show, and it can be
    // sent again.
    let (_, html) = post_form(
        &browser,
        &app,
        "admin-test-hook",
        "/admin/hooks",
        &[("csrf", &csrf), ("id", &events_hook)],
    )
    .await;
    assert!(html.contains("data-testid=\"hook-sent\""), "{html}");
    let deliverer = Deliverer::new(app.store.clone(), DeliverySettings::default());
    deliverer.run_once().await.unwrap();
    let (_, html) = page(&browser, &app, "/admin/hooks").await;
    assert!(html.contains("data-state=\"delivered\""), "{html}");
    assert!(html.contains("thanks from the receiver"), "{html}");
    assert!(html.contains(">200<"), "the status code: {html}");
    assert!(html.contains("Redeliver"), "{html}");
    let (_, deliveries) = app
        .call_json(
            &admin,
            Method::GET,
            &format!("/api/v1/hooks/{events_hook}/deliveries"),
            None,
        )
        .await;
    let delivery = deliveries["items"][0]["id"].as_str().unwrap().to_owned();
    let (_, html) = post_form(
        &browser,
        &app,
        "admin-redeliver",
        "/admin/hooks",
        &[
            ("csrf", &csrf),
            ("hook", &events_hook),
            ("delivery", &delivery),
        ],
    )
    .await;
    assert!(html.contains("data-testid=\"hook-sent\""), "{html}");
    assert!(
        html.contains(&format!(
            "data-delivery=\"{delivery}\" data-state=\"pending\""
        )),
        "{html}"
    );

    // Remove the gate.
    let (_, html) = post_form(
        &browser,
        &app,
        "admin-remove-hook",
        "/admin/hooks",
        &[("csrf", &csrf), ("id", &gate_hook)],
    )
    .await;
    assert!(html.contains("data-testid=\"hook-removed\""), "{html}");
    assert!(
        !html.contains(&format!("data-hook=\"{gate_hook}\"")),
        "{html}"
    );
    assert!(
        html.contains(&format!("data-hook=\"{events_hook}\"")),
        "{html}"
    );

    let (erin, _) = signed_in(&app, "erin").await;
    let (status, html) = page(&erin, &app, "/admin/hooks").await;
    assert_eq!(status, 403, "{html}");
    assert!(!html.contains(&events_hook), "{html}");
}
