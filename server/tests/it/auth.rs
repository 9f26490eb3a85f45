//! Signing in and out, sessions, CSRF, tokens, and the errors bad requests get.

use engine::store::users::Role;
use engine::store::Backend;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{spawn_app, PASSWORD};

async fn error_of(response: reqwest::Response) -> (StatusCode, Value) {
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    (status, body)
}

async fn wrong_password_is_401_and_says_so(backend: Backend) {
    let app = spawn_app(backend).await;
    app.user("alice", Role::User, "default").await;
    for username in ["alice", "nobody"] {
        let response = app
            .client
            .post(app.url("/api/v1/session"))
            .json(&json!({"username": username, "password": "not the password"}))
            .send()
            .await
            .unwrap();
        let (status, body) = error_of(response).await;
        assert_eq!(status, 401);
        assert_eq!(body["error"], "unauthenticated");
        assert_eq!(body["message"], "wrong username or password");
    }
}

#[tokio::test]
async fn repeated_failures_are_throttled() {
    let app = spawn_app(Backend::Sqlite).await;
    app.user("bob", Role::User, "default").await;
    let attempt = |password: &'static str| {
        app.client
            .post(app.url("/api/v1/session"))
            .json(&json!({"username": "bob", "password": password}))
            .send()
    };
    for _ in 0..5 {
        assert_eq!(attempt("wrong password!").await.unwrap().status(), 401);
    }
    let response = attempt(PASSWORD).await.unwrap();
    assert_eq!(response.status(), 429);
    assert!(response.headers().contains_key("retry-after"));
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"], "too_many_attempts");
}

async fn a_session_needs_its_csrf_token_to_change_anything(backend: Backend) {
    let app = spawn_app(backend).await;
    app.user("carol", Role::User, "default").await;
    let (browser, csrf) = app.browser("carol").await;

    let session: Value = browser
        .get(app.url("/api/v1/session"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(session["user"]["username"], "carol");
    assert!(session["user"].get("password_hash").is_none());

    let create = json!({"name": "ci"});
    let refused = browser
        .post(app.url("/api/v1/tokens"))
        .json(&create)
        .send()
        .await
        .unwrap();
    let (status, body) = error_of(refused).await;
    assert_eq!(status, 403);
    assert!(body["message"].as_str().unwrap().contains("CSRF"));

    let created = browser
        .post(app.url("/api/v1/tokens"))
        .header("x-csrf-token", &csrf)
        .json(&create)
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);

    let logout = browser
        .delete(app.url("/api/v1/session"))
        .header("x-csrf-token", &csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(logout.status(), 204);
    let after = browser.get(app.url("/api/v1/me")).send().await.unwrap();
    assert_eq!(after.status(), 401);
}

async fn logging_out_everywhere_ends_every_session(backend: Backend) {
    let app = spawn_app(backend).await;
    app.user("dave", Role::User, "default").await;
    let (laptop, laptop_csrf) = app.browser("dave").await;
    let (phone, _) = app.browser("dave").await;
    assert_eq!(
        phone
            .get(app.url("/api/v1/me"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let done = laptop
        .post(app.url("/api/v1/session/logout-everywhere"))
        .header("x-csrf-token", &laptop_csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(done.status(), 204);
    let (status, body) = error_of(phone.get(app.url("/api/v1/me")).send().await.unwrap()).await;
    assert_eq!(status, 401);
    assert!(
        body["message"].as_str().unwrap().contains("sign in again"),
        "{body}"
    );
}

async fn tokens_are_shown_once_and_revocable(backend: Backend) {
    let app = spawn_app(backend).await;
    let erin = app.user("erin", Role::User, "default").await;
    let created: Value = app
        .call(
            &erin,
            Method::POST,
            "/api/v1/tokens",
            Some(&json!({"name": "laptop"})),
        )
        .await
        .json()
        .await
        .unwrap();
    let secret = created["secret"].as_str().unwrap().to_owned();
    let id = created["id"].as_str().unwrap().to_owned();

    let listed = app
        .call(&erin, Method::GET, "/api/v1/tokens", None)
        .await
        .text()
        .await
        .unwrap();
    assert!(listed.contains("laptop"));
    assert!(!listed.contains(&secret), "the secret is never shown again");

    let with_new = app
        .client
        .get(app.url("/api/v1/me"))
        .bearer_auth(&secret)
        .send()
        .await
        .unwrap();
    assert_eq!(with_new.status(), 200);
    let revoked = app
        .call(&erin, Method::DELETE, &format!("/api/v1/tokens/{id}"), None)
        .await;
    assert_eq!(revoked.status(), 200);
    let again = app
        .call(&erin, Method::DELETE, &format!("/api/v1/tokens/{id}"), None)
        .await;
    assert_eq!(again.status(), 200, "revoking twice is fine");
    let response = app
        .client
        .get(app.url("/api/v1/me"))
        .bearer_auth(&secret)
        .send()
        .await
        .unwrap();
    let (status, body) = error_of(response).await;
    assert_eq!(status, 401);
    assert_eq!(body["message"], "the token is unknown, expired or revoked");

    let garbage = app
        .client
        .get(app.url("/api/v1/me"))
        .bearer_auth("corral_nope")
        .send()
        .await
        .unwrap();
    assert_eq!(garbage.status(), 401);
    let no_auth = app.client.get(app.url("/api/v1/me")).send().await.unwrap();
    assert_eq!(no_auth.status(), 401);
    assert_eq!(no_auth.headers()["www-authenticate"], "Bearer");
}

async fn malformed_requests_get_clear_json_errors(backend: Backend) {
    let app = spawn_app(backend).await;
    let frank = app.user("frank", Role::TenantAdmin, "default").await;
    let post = |path: &str, body: String, content_type: &str| {
        app.client
            .post(app.url(path))
            .bearer_auth(&frank.token)
            .header("content-type", content_type.to_owned())
            .body(body)
            .send()
    };

    let (status, body) = error_of(
        post("/api/v1/clusters", "{not json".into(), "application/json")
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(body["error"], "bad_request");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .starts_with("malformed JSON"),
        "{body}"
    );

    let (status, body) = error_of(
        post("/api/v1/clusters", "{}".into(), "text/plain")
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 415);
    assert_eq!(body["error"], "unsupported_media_type");

    let (status, body) = error_of(
        post(
            "/api/v1/clusters",
            r#"{"name": 5}"#.into(),
            "application/json",
        )
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, 422);
    assert!(body["message"].as_str().unwrap().contains("name"), "{body}");

    let huge = format!(
        "{{\"pad\": \"{}\"}}",
        "x".repeat(server::api::MAX_JSON_BYTES + 1)
    );
    let (status, body) = error_of(
        post("/api/v1/catalog/import", huge, "application/json")
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 413);
    assert_eq!(body["error"], "payload_too_large");

    for path in [
        "/api/v1/clusters/no-such-id",
        "/api/v1/jobs/00000000-0000-0000-0000-00000000dead",
        "/api/v1/users/nobody",
        "/api/v1/catalog/services/none",
        "/api/v1/catalog/widgets",
        "/api/v1/no/such/endpoint",
    ] {
        let (status, body) = error_of(app.call(&frank, Method::GET, path, None).await).await;
        assert_eq!(status, 404, "{path}");
        assert_eq!(body["error"], "not_found", "{path}");
        assert!(
            body["message"].as_str().unwrap().contains("not found") || path.contains("no/such"),
            "{path}: {body}"
        );
    }
    let (status, body) = error_of(
        app.call(
            &frank,
            Method::POST,
            "/api/v1/resources/scripts/run.sh/versions/seven/stage",
            None,
        )
        .await,
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        body["message"].as_str().unwrap().contains("path parameter"),
        "{body}"
    );
    let (status, _) = error_of(
        app.call(&frank, Method::GET, "/api/v1/clusters?limit=0", None)
            .await,
    )
    .await;
    assert_eq!(status, 422);
    let (status, _) = error_of(
        app.call(&frank, Method::GET, "/api/v1/clusters?limit=lots", None)
            .await,
    )
    .await;
    assert_eq!(status, 400);
}

engine::on_both_backends!(
    wrong_password_is_401_and_says_so,
    a_session_needs_its_csrf_token_to_change_anything,
    logging_out_everywhere_ends_every_session,
    tokens_are_shown_once_and_revocable,
    malformed_requests_get_clear_json_errors,
);

#[tokio::test]
async fn a_session_past_its_absolute_age_is_refused() {
    let db = engine::testing::TestDatabase::new(Backend::Sqlite).await;
    let store = engine::store::Store::open(&db.url).await.unwrap();
    let app = crate::helpers::spawn_with_session_age(db, store, 1_000).await;
    app.user("gina", Role::User, "default").await;
    let (browser, _) = app.browser("gina").await;
    assert_eq!(
        browser
            .get(app.url("/api/v1/me"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    // Real time: the absolute limit is checked against the wall clock at each request.
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    let (status, body) = error_of(browser.get(app.url("/api/v1/me")).send().await.unwrap()).await;
    assert_eq!(status, 401);
    assert_eq!(body["message"], "the session has expired; sign in again");
}
