//! `/api/v1/pool-hosts`: registration checks every field and stores nothing on bad input,
//! tenants see only their own hosts (superadmins all), and the client private key Corral
//! made for a host appears in no response, page or audit entry.

use engine::store::users::Role;
use engine::store::Backend;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{render_page, spawn_app, TestApp};
use crate::isolation::POOL_HOST_KEY;

async fn names(app: &TestApp, user: &crate::helpers::ApiUser) -> Vec<String> {
    let listed: Value = app
        .call(user, Method::GET, "/api/v1/pool-hosts", None)
        .await
        .json()
        .await
        .unwrap();
    listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|host| host["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn registration_names_the_bad_field_and_stores_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = app.user("admin", Role::TenantAdmin, "default").await;
    let cases = [
        (
            json!({"name": "h", "host": "10.0.0.1", "port": 0, "user": "u", "host_key": POOL_HOST_KEY}),
            "port",
        ),
        (
            json!({"name": "h", "host": "10.0.0.1", "port": 65536, "user": "u", "host_key": POOL_HOST_KEY}),
            "port",
        ),
        (
            json!({"name": "h", "host": "", "user": "u", "host_key": POOL_HOST_KEY}),
            "host",
        ),
        (
            json!({"name": "h", "host": "10.0.0.1", "user": "u", "host_key": "ssh-ed25519 AAAAbroken"}),
            "host_key",
        ),
        (
            json!({"name": "h", "host": "10.0.0.1", "user": "u", "host_key": ""}),
            "host_key",
        ),
        (
            json!({"name": "", "host": "10.0.0.1", "user": "u", "host_key": POOL_HOST_KEY}),
            "name",
        ),
        (
            json!({"name": "h", "host": "10.0.0.1", "user": "bad user", "host_key": POOL_HOST_KEY}),
            "user",
        ),
    ];
    for (body, field) in cases {
        let response = app
            .call(&admin, Method::POST, "/api/v1/pool-hosts", Some(&body))
            .await;
        assert_eq!(response.status(), 422, "{body}");
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["error"], "invalid", "{error}");
        assert_eq!(error["details"][0]["path"], field, "{error}");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains(&format!("{field}: ")),
            "{error}"
        );
    }
    // A port that is not a number is refused by the JSON decoder, naming the field.
    let response = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/pool-hosts",
            Some(
                &json!({"name": "h", "host": "10.0.0.1", "port": "ssh", "user": "u",
                         "host_key": POOL_HOST_KEY}),
            ),
        )
        .await;
    assert_eq!(response.status(), 422);
    let error: Value = response.json().await.unwrap();
    assert!(
        error["message"].as_str().unwrap().contains("port"),
        "{error}"
    );
    assert!(names(&app, &admin).await.is_empty(), "nothing was stored");

    let good = json!({"name": "h1", "host": "10.0.0.1", "port": 2201, "user": "corral",
                      "host_key": POOL_HOST_KEY});
    let response = app
        .call(&admin, Method::POST, "/api/v1/pool-hosts", Some(&good))
        .await;
    assert_eq!(response.status(), 201);
    let response = app
        .call(&admin, Method::POST, "/api/v1/pool-hosts", Some(&good))
        .await;
    assert_eq!(response.status(), 409, "same name and address again");
    let user = app.user("someone", Role::User, "default").await;
    let response = app
        .call(&user, Method::GET, "/api/v1/pool-hosts", None)
        .await;
    assert_eq!(response.status(), 403);
}

async fn tenants_see_their_own_hosts_and_superadmins_all(backend: Backend) {
    let app = spawn_app(backend).await;
    let acme = app.user("acme-admin", Role::TenantAdmin, "acme").await;
    let bravo = app.user("bravo-admin", Role::TenantAdmin, "bravo").await;
    let root = app.user("root", Role::Superadmin, "default").await;
    for (admin, name) in [(&acme, "acme-host"), (&bravo, "bravo-host")] {
        let response = app
            .call(
                admin,
                Method::POST,
                "/api/v1/pool-hosts",
                Some(&json!({"name": name, "host": "10.0.0.1", "user": "corral",
                             "host_key": POOL_HOST_KEY})),
            )
            .await;
        assert_eq!(response.status(), 201);
    }
    assert_eq!(names(&app, &acme).await, ["acme-host"]);
    assert_eq!(names(&app, &bravo).await, ["bravo-host"]);
    let mut all = names(&app, &root).await;
    all.sort();
    assert_eq!(all, ["acme-host", "bravo-host"]);
    // A tenant admin cannot register into another tenant; it looks like a missing one.
    let response = app
        .call(
            &acme,
            Method::POST,
            "/api/v1/pool-hosts",
            Some(&json!({"name": "x", "host": "10.0.0.2", "user": "corral",
                         "host_key": POOL_HOST_KEY, "tenant": "bravo"})),
        )
        .await;
    assert_eq!(response.status(), 404);
    let response = app
        .call(
            &root,
            Method::POST,
            "/api/v1/pool-hosts",
            Some(
                &json!({"name": "for-bravo", "host": "10.0.0.2", "user": "corral",
                         "host_key": POOL_HOST_KEY, "tenant": "bravo"}),
            ),
        )
        .await;
    assert_eq!(response.status(), 201);
    assert_eq!(names(&app, &bravo).await, ["bravo-host", "for-bravo"]);
}

async fn the_client_private_key_is_never_disclosed(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = app.user("admin", Role::TenantAdmin, "default").await;
    let response = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/pool-hosts",
            Some(&json!({"name": "h1", "host": "10.0.0.1", "user": "corral",
                         "host_key": POOL_HOST_KEY})),
        )
        .await;
    assert_eq!(response.status(), 201);
    let created_text = response.text().await.unwrap();
    let created: Value = serde_json::from_str(&created_text).unwrap();
    let id = created["id"].as_str().unwrap();
    assert!(created["client_public_key"]
        .as_str()
        .unwrap()
        .starts_with("ssh-ed25519 AAAA"));
    let private = app.store.pool_host_client_key(id).await.unwrap();
    assert!(private.contains("OPENSSH PRIVATE KEY"));
    // The base64 body of the private key, line by line: none may show anywhere.
    let secret_lines: Vec<&str> = private
        .lines()
        .filter(|line| !line.starts_with("-----") && line.len() > 20)
        .collect();
    assert!(!secret_lines.is_empty());

    let renamed = app
        .call(
            &admin,
            Method::PATCH,
            &format!("/api/v1/pool-hosts/{id}"),
            Some(&json!({"name": "h2"})),
        )
        .await;
    assert_eq!(renamed.status(), 200);
    let mut bodies = vec![created_text, renamed.text().await.unwrap()];
    for path in [
        "/api/v1/pool-hosts".to_owned(),
        format!("/api/v1/pool-hosts/{id}"),
        "/api/v1/audit".to_owned(),
    ] {
        let response = app.call(&admin, Method::GET, &path, None).await;
        assert_eq!(response.status(), 200, "{path}");
        bodies.push(response.text().await.unwrap());
    }
    let (browser, _) = app.browser("admin").await;
    let (status, page) = render_page(&browser, &app.url("/admin/hosts")).await;
    assert_eq!(status, 200);
    assert!(page.contains("h2"), "the page lists the host");
    bodies.push(page);
    for body in &bodies {
        assert!(!body.contains("PRIVATE KEY"), "{body}");
        for line in &secret_lines {
            assert!(!body.contains(line), "a private key line leaked: {body}");
        }
    }
    let audit = &bodies[4];
    assert!(audit.contains("pool_host.create"), "{audit}");
}

engine::on_both_backends!(
    registration_names_the_bad_field_and_stores_nothing,
    tenants_see_their_own_hosts_and_superadmins_all,
    the_client_private_key_is_never_disclosed,
);
