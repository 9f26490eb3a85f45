//! `/api/v1/providers/{name}/credentials`: a tenant admin sets a provider's credentials,
//! which are sealed at rest and come back as field names only; bad input is refused
//! without quoting it and stores nothing; plain users and other tenants get nothing.
//! The secret is looked for in every response, the admin page, the audit log, the
//! catalog export and the database's own bytes. Under `.../credentials/mine`, any user
//! keeps their own, where the provider allows it (`"user_credentials": true`), seen by
//! nobody else.

use engine::store::users::Role;
use engine::store::Backend;
use reqwest::Method;
use serde_json::Value;

use crate::helpers::{render_page, spawn_app, with_catalog, ApiUser, TestApp};

const SECRET: &str = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY";
const CREDENTIALS_PATH: &str = "/api/v1/providers/local/credentials";

async fn put_text(app: &TestApp, user: &ApiUser, path: &str, body: &str) -> reqwest::Response {
    app.client
        .put(app.url(path))
        .bearer_auth(&user.token)
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .unwrap()
}

async fn credentials_are_sealed_and_shown_by_field_name_only(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = with_catalog(&app, "default").await;
    let body = format!(r#"{{"access_key_id": "AKIDEXAMPLE", "secret_access_key": "{SECRET}"}}"#);
    let set = put_text(&app, &admin, CREDENTIALS_PATH, &body).await;
    assert_eq!(set.status(), 200);
    let set_text = set.text().await.unwrap();
    let view: Value = serde_json::from_str(&set_text).unwrap();
    assert_eq!(view["set"], true);
    assert_eq!(
        view["fields"],
        serde_json::json!(["access_key_id", "secret_access_key"])
    );

    // The provider that signs with them gets them back whole.
    let opened = app
        .store
        .provider_credentials(&admin.tenant_id, "local")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(opened.field("secret_access_key"), Some(SECRET));

    let mut bodies = vec![set_text];
    for path in [CREDENTIALS_PATH, "/api/v1/audit", "/api/v1/catalog"] {
        let response = app.call(&admin, Method::GET, path, None).await;
        assert_eq!(response.status(), 200, "{path}");
        bodies.push(response.text().await.unwrap());
    }
    let (browser, _) = app.browser("default-admin").await;
    let (status, page) = render_page(&browser, &app.url("/admin/providers/local")).await;
    assert_eq!(status, 200);
    assert!(
        page.contains("secret_access_key"),
        "the page names the fields"
    );
    bodies.push(page);
    for body in &bodies {
        assert!(!body.contains(SECRET), "the secret leaked: {body}");
    }
    assert!(bodies[2].contains("provider.credentials.set"), "audited");

    // At rest: the stored column holds no trace of the secret.
    let stored: Vec<String> = sqlx::query_scalar("SELECT sealed FROM provider_credentials")
        .fetch_all(app.store.pool())
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert!(stored[0].starts_with("sealed:v1:") && !stored[0].contains(SECRET));

    let removed = app
        .call(&admin, Method::DELETE, CREDENTIALS_PATH, None)
        .await;
    assert_eq!(removed.status(), 200);
    let again = app
        .call(&admin, Method::DELETE, CREDENTIALS_PATH, None)
        .await;
    assert_eq!(again.status(), 404);
}

async fn bad_credentials_are_refused_without_quoting_them(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = with_catalog(&app, "default").await;
    let cases = [
        format!("{{\"secret_access_key\": \"{SECRET}\""),
        format!("\"{SECRET}\""),
        format!("[\"{SECRET}\"]"),
        "{}".to_owned(),
        format!("{{\"secret access key\": \"{SECRET}\"}}"),
        format!("{{\"key\": {{\"nested\": \"{SECRET}\"}}}}"),
    ];
    for body in &cases {
        let response = put_text(&app, &admin, CREDENTIALS_PATH, body).await;
        assert_eq!(response.status(), 422, "{body}");
        let text = response.text().await.unwrap();
        assert!(text.contains("credentials"), "{text}");
        assert!(
            !text.contains(SECRET),
            "the refusal quotes the secret: {text}"
        );
    }
    let unknown = put_text(
        &app,
        &admin,
        "/api/v1/providers/nope/credentials",
        r#"{"token": "x"}"#,
    )
    .await;
    assert_eq!(unknown.status(), 404);
    assert!(unknown.text().await.unwrap().contains("\\\"nope\\\""));
    let view: Value = app
        .call(&admin, Method::GET, CREDENTIALS_PATH, None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(view["set"], false, "nothing was stored: {view}");
}

async fn only_the_tenants_admins_reach_its_credentials(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = with_catalog(&app, "default").await;
    let other = with_catalog(&app, "other").await;
    let user = app.user("plain", Role::User, "default").await;
    let set = put_text(&app, &admin, CREDENTIALS_PATH, r#"{"token": "tenant-a"}"#).await;
    assert_eq!(set.status(), 200);

    for (method, body) in [(Method::GET, None), (Method::DELETE, None)] {
        let response = app
            .call(&user, method.clone(), CREDENTIALS_PATH, body)
            .await;
        assert_eq!(response.status(), 403, "{method}");
    }
    let refused = put_text(&app, &user, CREDENTIALS_PATH, r#"{"token": "mine"}"#).await;
    assert_eq!(refused.status(), 403);
    let test = app
        .call(
            &user,
            Method::POST,
            "/api/v1/providers/local/test",
            Some(&serde_json::json!({})),
        )
        .await;
    assert_eq!(test.status(), 403);

    // The other tenant has a provider of the same name and none of these credentials.
    let theirs: Value = app
        .call(&other, Method::GET, CREDENTIALS_PATH, None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(theirs["set"], false);
    let mine = app
        .store
        .provider_credentials(&admin.tenant_id, "local")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(mine.field("token"), Some("tenant-a"));
}

async fn superadmins_choose_the_provider_types_a_tenant_builds_on(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = with_catalog(&app, "acme").await;
    let root = app.user("root", Role::Superadmin, "default").await;
    let path = format!("/api/v1/tenants/{}/provider-types", admin.tenant_id);
    let body = serde_json::json!({"provider_types": ["docker", "vmware", "ec2"]});
    let refused = app.call(&root, Method::PUT, &path, Some(&body)).await;
    assert_eq!(refused.status(), 422);
    let text = refused.text().await.unwrap();
    assert!(
        text.contains("provider_types[1]") && text.contains("vmware"),
        "{text}"
    );
    let by_admin = serde_json::json!({"provider_types": ["local"]});
    let forbidden = app.call(&admin, Method::PUT, &path, Some(&by_admin)).await;
    assert_eq!(
        forbidden.status(),
        403,
        "a tenant admin cannot widen their own tenant"
    );

    // Without `local` the lifecycle catalog's provider is refused, naming the type.
    let only_docker = serde_json::json!({"provider_types": ["docker"]});
    let set = app
        .call(&root, Method::PUT, &path, Some(&only_docker))
        .await;
    assert_eq!(set.status(), 200);
    let tenant: Value = set.json().await.unwrap();
    assert_eq!(tenant["provider_types"], serde_json::json!(["docker"]));
    assert_eq!(tenant["local_nodes"], false);
    let create = serde_json::json!({"name": "probe", "template": "lifecycle", "size": 2});
    let denied = app
        .call(&admin, Method::POST, "/api/v1/clusters", Some(&create))
        .await;
    assert_eq!(denied.status(), 403);
    assert!(denied.text().await.unwrap().contains("type local"));
    let view: Value = app
        .call(&admin, Method::GET, CREDENTIALS_PATH, None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(view["usable"], false, "the provider page says so: {view}");

    let local = serde_json::json!({"local_nodes": true});
    let allowed = app
        .call(
            &root,
            Method::PUT,
            &format!("/api/v1/tenants/{}/local-nodes", admin.tenant_id),
            Some(&local),
        )
        .await;
    let tenant: Value = allowed.json().await.unwrap();
    assert_eq!(
        tenant["provider_types"],
        serde_json::json!(["local", "docker"])
    );
    let created = app
        .call(&admin, Method::POST, "/api/v1/clusters", Some(&create))
        .await;
    assert_eq!(created.status(), 201);

    // A new tenant may use every type but local.
    let fresh: Value = app
        .call(
            &root,
            Method::POST,
            "/api/v1/tenants",
            Some(&serde_json::json!({"name": "fresh"})),
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        fresh["provider_types"],
        serde_json::json!(["ssh-pool", "docker", "ec2", "exec"])
    );
}

const MINE_PATH: &str = "/api/v1/providers/local/credentials/mine";

/// Lets users of `admin`'s tenant bring their own credentials for its provider `local`.
async fn allow_user_credentials(app: &TestApp, admin: &ApiUser) {
    let response = app
        .call(
            admin,
            Method::PUT,
            "/api/v1/catalog/providers/local",
            Some(&serde_json::json!({
                "name": "local",
                "providertype": "local",
                "provisioner": {"user_credentials": true},
            })),
        )
        .await;
    assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
}

async fn users_keep_their_own_credentials_where_the_provider_allows(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = with_catalog(&app, "default").await;
    let other = with_catalog(&app, "other").await;
    let user = app.user("plain", Role::User, "default").await;
    let neighbour = app.user("neighbour", Role::User, "default").await;

    // Not allowed yet: refused, saying who can allow it; nothing stored.
    let body = format!(r#"{{"access_key_id": "AKIDMINE", "secret_access_key": "{SECRET}"}}"#);
    let refused = put_text(&app, &user, MINE_PATH, &body).await;
    assert_eq!(refused.status(), 403);
    let text = refused.text().await.unwrap();
    assert!(
        text.contains("provider local does not take users' own credentials")
            && text.contains("`user_credentials`")
            && !text.contains(SECRET),
        "{text}"
    );
    for method in [Method::GET, Method::DELETE] {
        let response = app.call(&user, method.clone(), MINE_PATH, None).await;
        assert_eq!(response.status(), 403, "{method}");
    }
    let unknown = put_text(
        &app,
        &user,
        "/api/v1/providers/nope/credentials/mine",
        r#"{"token": "x"}"#,
    )
    .await;
    assert_eq!(unknown.status(), 404);

    allow_user_credentials(&app, &admin).await;
    let bad = put_text(&app, &user, MINE_PATH, &format!(r#"{{"k": "{SECRET}""#)).await;
    assert_eq!(bad.status(), 422);
    assert!(!bad.text().await.unwrap().contains(SECRET));

    let set = put_text(&app, &user, MINE_PATH, &body).await;
    assert_eq!(set.status(), 200);
    let set_text = set.text().await.unwrap();
    let view: Value = serde_json::from_str(&set_text).unwrap();
    assert_eq!(view["set"], true);
    assert_eq!(view["updated_by"], "plain");
    assert_eq!(
        view["fields"],
        serde_json::json!(["access_key_id", "secret_access_key"])
    );
    let mut bodies = vec![set_text];
    for (who, path) in [
        (&user, MINE_PATH),
        (&admin, "/api/v1/audit"),
        (&admin, CREDENTIALS_PATH),
        (&admin, "/api/v1/catalog"),
    ] {
        let response = app.call(who, Method::GET, path, None).await;
        assert_eq!(response.status(), 200, "{path}");
        bodies.push(response.text().await.unwrap());
    }
    let (browser, _) = app.browser("default-admin").await;
    let (status, page) = render_page(&browser, &app.url("/admin/providers/local")).await;
    assert_eq!(status, 200);
    bodies.push(page);
    for body in &bodies {
        assert!(!body.contains(SECRET), "the secret leaked: {body}");
    }
    assert!(
        bodies[2].contains("provider.credentials.set-mine")
            && bodies[2].contains("secret_access_key"),
        "audited by field name: {}",
        bodies[2]
    );
    // The tenant's own credentials are untouched: the user's are apart.
    let tenants: Value = serde_json::from_str(&bodies[3]).unwrap();
    assert_eq!(tenants["set"], false);
    let stored: Vec<String> = sqlx::query_scalar("SELECT sealed FROM user_provider_credentials")
        .fetch_all(app.store.pool())
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert!(stored[0].starts_with("sealed:v1:") && !stored[0].contains(SECRET));

    // Another user of the tenant, its admin included, sees only their own (none).
    for who in [&neighbour, &admin] {
        let theirs: Value = app
            .call(who, Method::GET, MINE_PATH, None)
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(theirs["set"], false, "{theirs}");
        let removed = app.call(who, Method::DELETE, MINE_PATH, None).await;
        assert_eq!(removed.status(), 404, "deletes nothing of the user's");
    }
    // Tenant B's provider of the same name does not take users' own; its admin
    // reaches nothing of A's either way.
    let theirs = app.call(&other, Method::GET, MINE_PATH, None).await;
    assert_eq!(theirs.status(), 403);
    allow_user_credentials(&app, &other).await;
    let theirs: Value = app
        .call(&other, Method::GET, MINE_PATH, None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(theirs["set"], false);

    let removed = app.call(&user, Method::DELETE, MINE_PATH, None).await;
    assert_eq!(removed.status(), 200);
    let view: Value = removed.json().await.unwrap();
    assert_eq!(view["set"], false);
    let again = app.call(&user, Method::DELETE, MINE_PATH, None).await;
    assert_eq!(again.status(), 404);
}

engine::on_both_backends!(
    users_keep_their_own_credentials_where_the_provider_allows,
    superadmins_choose_the_provider_types_a_tenant_builds_on,
    credentials_are_sealed_and_shown_by_field_name_only,
    bad_credentials_are_refused_without_quoting_them,
    only_the_tenants_admins_reach_its_credentials,
);
