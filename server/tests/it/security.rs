//! The escalation paths found in review, each performed as the attacker would and
//! shown to fail: superadmin takeover by a tenant admin, a request that overflows the
//! stack, concurrent password guessing, account lock-out from afar, open redirects,
//! login CSRF, `javascript:` links, injected inline scripts, tokens that outlive a
//! reset, streams that outlive a sign-out, and secrets kept readable in the database.

use std::time::Duration;

use engine::store::users::Role;
use engine::store::Backend;
use reqwest::{header, Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::{spawn_app, ApiUser, TestApp, PASSWORD};

/// A client that keeps cookies and does not follow redirects (to read `Location`).
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

async fn superadmin_of(app: &TestApp) -> (ApiUser, String) {
    let root = app.user("root", Role::Superadmin, "default").await;
    let id = root.id.clone();
    (root, id)
}

async fn password_login(app: &TestApp, username: &str, password: &str) -> StatusCode {
    app.client
        .post(app.url("/api/v1/session"))
        .json(&json!({"username": username, "password": password}))
        .send()
        .await
        .unwrap()
        .status()
}

#[tokio::test]
async fn a_tenant_admin_cannot_take_over_a_superadmin() {
    let app = spawn_app(Backend::Sqlite).await;
    let (_root, root_id) = superadmin_of(&app).await;
    let admin = app.user("mallory", Role::TenantAdmin, "default").await;
    let path = format!("/api/v1/users/{root_id}");

    let reset = app
        .call(
            &admin,
            Method::PATCH,
            &path,
            Some(&json!({"password": "mallory owns this account now"})),
        )
        .await;
    assert_eq!(reset.status(), 403);
    let body: Value = reset.json().await.unwrap();
    assert!(
        body["message"].as_str().unwrap().contains("superadmin"),
        "{body}"
    );
    for attempt in [
        app.call(&admin, Method::PATCH, &path, Some(&json!({"role": "user"})))
            .await,
        app.call(&admin, Method::DELETE, &path, None).await,
        app.call(&admin, Method::GET, &format!("{path}/tokens"), None)
            .await,
    ] {
        assert_eq!(attempt.status(), 403);
    }
    assert_eq!(
        password_login(&app, "root", PASSWORD).await,
        200,
        "the superadmin's password is unchanged"
    );
    assert_eq!(
        password_login(&app, "root", "mallory owns this account now").await,
        401
    );
}

#[tokio::test]
async fn changing_ones_own_password_as_an_admin_needs_the_current_one() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = app.user("ada", Role::TenantAdmin, "default").await;
    let path = format!("/api/v1/users/{}", admin.id);
    let new = "a brand new password here";
    for (update, problem) in [
        (json!({"password": new}), "current_password"),
        (
            json!({"password": new, "current_password": "not it at all"}),
            "current password is wrong",
        ),
    ] {
        let refused = app.call(&admin, Method::PATCH, &path, Some(&update)).await;
        assert_eq!(refused.status(), 422);
        let body: Value = refused.json().await.unwrap();
        assert!(
            body["message"].as_str().unwrap().contains(problem),
            "{body}"
        );
    }
    let changed = app
        .call(
            &admin,
            Method::PATCH,
            &path,
            Some(&json!({"password": new, "current_password": PASSWORD})),
        )
        .await;
    assert_eq!(changed.status(), 200);
    assert_eq!(password_login(&app, "ada", new).await, 200);
}

/// Posts the admin form's save-entity server function with one structured field whose
/// pointer is `/a` repeated `depth` times.
async fn post_deep_pointer(
    app: &TestApp,
    client: &reqwest::Client,
    csrf: &str,
    depth: usize,
) -> reqwest::Response {
    let pointer = "/a".repeat(depth);
    client
        .post(app.url("/sfn/admin-save-entity"))
        .header(header::ACCEPT, "application/json")
        .header(header::REFERER, app.url("/admin/services/new"))
        .form(&[
            ("csrf", csrf),
            ("kind", "services"),
            ("original", ""),
            ("name", "deep"),
            ("description", ""),
            ("body", "{}"),
            ("text_at[]", pointer.as_str()),
            ("text[]", "x"),
        ])
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn one_deep_form_post_cannot_stop_the_server() {
    let app = spawn_app(Backend::Sqlite).await;
    app.user("plain", Role::User, "default").await;
    app.user("boss", Role::TenantAdmin, "default").await;

    let (user, csrf) = app.browser("plain").await;
    let refused = post_deep_pointer(&app, &user, &csrf, 100_000).await;
    let status = refused.status();
    assert_eq!(
        status,
        403,
        "a plain user is refused before parsing: {}",
        refused.text().await.unwrap()
    );

    let (admin, csrf) = app.browser("boss").await;
    let refused = post_deep_pointer(&app, &admin, &csrf, 100_000).await;
    assert_eq!(refused.status(), 422);
    let body = refused.text().await.unwrap();
    assert!(body.contains("pointer may be at most"), "{body}");

    // Still serving.
    let health = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
}

#[tokio::test]
async fn concurrent_guesses_cannot_slip_past_the_throttle() {
    let app = spawn_app(Backend::Sqlite).await;
    app.user("target", Role::User, "default").await;
    let guesses = (0..40).map(|n| {
        let client = app.client.clone();
        let url = app.url("/api/v1/session");
        async move {
            client
                .post(url)
                .json(&json!({"username": "target", "password": format!("guess number {n}")}))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    });
    let statuses = futures::future::join_all(guesses).await;
    let checked = statuses.iter().filter(|status| **status == 401).count();
    let throttled = statuses.iter().filter(|status| **status == 429).count();
    assert_eq!(checked + throttled, 40, "{statuses:?}");
    assert!(
        checked <= 5,
        "at most the limit of guesses reach the password check: {statuses:?}"
    );
}

#[tokio::test]
async fn failing_on_purpose_from_elsewhere_does_not_lock_the_owner_out() {
    let app = crate::helpers::spawn_app_behind_proxy(Backend::Sqlite).await;
    app.user("owner", Role::User, "default").await;
    let login = |from: &'static str, password: &'static str| {
        app.client
            .post(app.url("/api/v1/session"))
            .header("x-forwarded-for", from)
            .json(&json!({"username": "owner", "password": password}))
            .send()
    };
    for _ in 0..5 {
        assert_eq!(
            login("203.0.113.66", "wrong wrong wrong")
                .await
                .unwrap()
                .status(),
            401
        );
    }
    assert_eq!(
        login("203.0.113.66", "wrong wrong wrong")
            .await
            .unwrap()
            .status(),
        429,
        "the guesser is stopped"
    );
    assert_eq!(
        login("198.51.100.7", PASSWORD).await.unwrap().status(),
        200,
        "the owner, elsewhere, signs in"
    );
}

async fn form_login(app: &TestApp, client: &reqwest::Client, next: &str) -> reqwest::Response {
    app.user("visitor", Role::User, "default").await;
    client
        .post(app.url("/sfn/login"))
        .header(header::ACCEPT, "text/html")
        .header(header::REFERER, app.url("/login"))
        .form(&[
            ("username", "visitor"),
            ("password", PASSWORD),
            ("next", next),
        ])
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn next_cannot_send_a_signed_in_visitor_elsewhere() {
    for hostile in [
        "/\t/evil.example/",
        "/\n/evil.example/",
        "/clusters\r\nX: y",
    ] {
        let app = spawn_app(Backend::Sqlite).await;
        let response = form_login(&app, &browser(), hostile).await;
        assert!(
            response.status().is_redirection(),
            "{hostile:?}: {}",
            response.status()
        );
        let location = response.headers()[header::LOCATION].to_str().unwrap();
        assert_eq!(location, "/clusters", "{hostile:?}");
    }
}

#[tokio::test]
async fn another_site_cannot_sign_a_visitor_in() {
    let app = spawn_app(Backend::Sqlite).await;
    app.user("attacker", Role::User, "default").await;
    let client = browser();
    let response = client
        .post(app.url("/sfn/login"))
        .header(header::ACCEPT, "text/html")
        .header(header::ORIGIN, "http://evil.example")
        .form(&[("username", "attacker"), ("password", PASSWORD)])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    assert!(
        response.headers().get(header::SET_COOKIE).is_none(),
        "no session was made"
    );
    let body = response.text().await.unwrap();
    assert!(body.contains("cross-site"), "{body}");
    // The same post from the site itself works.
    let own = client
        .post(app.url("/sfn/login"))
        .header(header::ACCEPT, "text/html")
        .header(header::ORIGIN, app.address.clone())
        .form(&[("username", "attacker"), ("password", PASSWORD)])
        .send()
        .await
        .unwrap();
    assert!(own.status().is_redirection(), "{}", own.status());
}

#[tokio::test]
async fn javascript_links_are_refused_when_saved() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = crate::helpers::with_catalog(&app, "default").await;
    let template: Value = app
        .call(
            &admin,
            Method::GET,
            "/api/v1/catalog/clustertemplates/lifecycle",
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    let mut hostile = template.clone();
    hostile["links"] = json!([{"label": "docs", "url": "javascript:fetch('/api/v1/me')"}]);
    let refused = app
        .call(
            &admin,
            Method::PUT,
            "/api/v1/catalog/clustertemplates/lifecycle",
            Some(&hostile),
        )
        .await;
    assert_eq!(refused.status(), 422);
    let body = refused.text().await.unwrap();
    assert!(body.contains("links[0].url"), "{body}");
    assert!(body.contains("http://"), "{body}");
}

#[tokio::test]
async fn tokens_end_with_a_password_reset_and_a_sign_out_everywhere() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = app.user("keeper", Role::TenantAdmin, "default").await;
    let victim = app.user("victim", Role::User, "default").await;
    let stolen = app.call(&victim, Method::GET, "/api/v1/me", None).await;
    assert_eq!(stolen.status(), 200);
    let reset = app
        .call(
            &admin,
            Method::PATCH,
            &format!("/api/v1/users/{}", victim.id),
            Some(&json!({"password": "reset by the admin today"})),
        )
        .await;
    assert_eq!(reset.status(), 200);
    let after = app.call(&victim, Method::GET, "/api/v1/me", None).await;
    assert_eq!(after.status(), 401, "the old token died with the reset");

    let other = app.user("other", Role::User, "default").await;
    let everywhere = app
        .call(
            &other,
            Method::POST,
            "/api/v1/session/logout-everywhere",
            None,
        )
        .await;
    assert_eq!(everywhere.status(), 204);
    let after = app.call(&other, Method::GET, "/api/v1/me", None).await;
    assert_eq!(after.status(), 401);
}

#[tokio::test]
async fn admins_see_and_revoke_their_users_tokens_and_read_only_tokens_only_read() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = app.user("lead", Role::TenantAdmin, "default").await;
    let member = app.user("member", Role::User, "default").await;
    let created: Value = app
        .call(
            &member,
            Method::POST,
            "/api/v1/tokens",
            Some(&json!({"name": "dashboard", "scope": "read-only"})),
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(created["scope"], "read-only");
    let read_only = ApiUser {
        id: member.id.clone(),
        tenant_id: member.tenant_id.clone(),
        token: created["secret"].as_str().unwrap().to_owned(),
    };
    assert_eq!(
        app.call(&read_only, Method::GET, "/api/v1/clusters", None)
            .await
            .status(),
        200
    );
    let write = app
        .call(
            &read_only,
            Method::POST,
            "/api/v1/tokens",
            Some(&json!({"name": "escalate"})),
        )
        .await;
    assert_eq!(write.status(), 403);
    assert!(write.text().await.unwrap().contains("read-only"));

    let listed: Value = app
        .call(
            &admin,
            Method::GET,
            &format!("/api/v1/users/{}/tokens", member.id),
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    let names: Vec<&str> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|token| token["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["tests", "dashboard"]);
    assert!(!listed.to_string().contains(&read_only.token));
    let revoked = app
        .call(
            &admin,
            Method::DELETE,
            &format!(
                "/api/v1/users/{}/tokens/{}",
                member.id,
                created["id"].as_str().unwrap()
            ),
            None,
        )
        .await;
    assert_eq!(revoked.status(), 200);
    assert_eq!(
        app.call(&read_only, Method::GET, "/api/v1/clusters", None)
            .await
            .status(),
        401
    );
}

#[tokio::test]
async fn cli_tokens_expire_unless_used() {
    let app = spawn_app(Backend::Sqlite).await;
    let user = app.user("cli", Role::User, "default").await;
    let refused = app
        .call(
            &user,
            Method::POST,
            "/api/v1/tokens",
            Some(&json!({"name": "forever", "renew_on_use": true})),
        )
        .await;
    assert_eq!(refused.status(), 422, "renewing needs a lifetime");
    let forever = app
        .call(
            &user,
            Method::POST,
            "/api/v1/tokens",
            Some(&json!({"name": "aeons", "expires_in_seconds": u64::MAX, "renew_on_use": true})),
        )
        .await;
    assert_eq!(forever.status(), 422, "lifetimes are bounded");
    let created: Value = app
        .call(
            &user,
            Method::POST,
            "/api/v1/tokens",
            Some(&json!({"name": "laptop", "expires_in_seconds": 3600, "renew_on_use": true})),
        )
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(created["renews_on_use"], true);
    let first_expiry = created["expires_at_ms"].as_i64().unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let token = ApiUser {
        id: user.id.clone(),
        tenant_id: user.tenant_id.clone(),
        token: created["secret"].as_str().unwrap().to_owned(),
    };
    assert_eq!(
        app.call(&token, Method::GET, "/api/v1/me", None)
            .await
            .status(),
        200
    );
    let listed: Value = app
        .call(&user, Method::GET, "/api/v1/tokens", None)
        .await
        .json()
        .await
        .unwrap();
    let laptop = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|token| token["name"] == "laptop")
        .unwrap();
    assert!(
        laptop["expires_at_ms"].as_i64().unwrap() > first_expiry,
        "using it moved the expiry: {laptop}"
    );
}

#[tokio::test]
async fn a_stream_stops_when_its_user_signs_out_everywhere() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = crate::helpers::with_catalog(&app, "default").await;
    let created: Value = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/clusters",
            Some(&json!({"name": "watched", "template": "lifecycle", "size": 2})),
        )
        .await
        .json()
        .await
        .unwrap();
    let job = created["job_id"].as_str().unwrap();
    // Watch a job whose events never end: `after` far in the future keeps it quiet.
    let mut stream = app
        .client
        .get(app.url(&format!("/api/v1/jobs/{job}/stream?after=999999999")))
        .bearer_auth(&admin.token)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let everywhere = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/session/logout-everywhere",
            None,
        )
        .await;
    assert_eq!(everywhere.status(), 204);
    let mut seen = String::new();
    let ended = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(chunk) = stream.chunk().await.unwrap() {
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if seen.contains("signed out") {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(ended, Ok(true), "{seen}");
}

/// The nonce a page's policy allows scripts by, after checking that the policy allows
/// no other inline script.
fn script_nonce(response: &reqwest::Response) -> String {
    let csp = response.headers()[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert!(csp.contains("object-src 'none'"), "{csp}");
    let directive = |name: &str| {
        csp.split(';')
            .map(str::trim)
            .find(|directive| directive.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} in {csp}"))
            .to_owned()
    };
    let scripts = directive("script-src");
    assert!(!scripts.contains("'unsafe-inline'"), "{csp}");
    assert!(!scripts.contains("'unsafe-eval'"), "{csp}");
    assert!(!directive("style-src").contains("'unsafe-inline'"), "{csp}");
    let nonces: Vec<&str> = scripts
        .split_whitespace()
        .filter_map(|source| source.strip_prefix("'nonce-")?.strip_suffix('\''))
        .collect();
    let [nonce] = nonces.as_slice() else {
        panic!("one nonce expected in {scripts}");
    };
    assert!(nonce.len() >= 22, "a nonce of 128 bits or more: {nonce}");
    (*nonce).to_owned()
}

/// Every `<tag` of `html`, asserting each carries `nonce`; how many there are.
fn assert_tags_carry(html: &str, tag: &str, nonce: &str, page: &str) -> usize {
    let found: Vec<&str> = html
        .match_indices(&format!("<{tag}"))
        .map(|(at, _)| {
            let rest = &html[at..];
            &rest[..rest.find('>').expect("a closed tag")]
        })
        .collect();
    for opening in &found {
        assert!(
            opening.contains(&format!("nonce=\"{nonce}\"")),
            "{page}: {opening}> does not carry the response's nonce {nonce}"
        );
    }
    found.len()
}

/// An injected inline script (stored text rendered into a page, a reflected parameter)
/// ran under the old policy, which allowed every inline script for the hydration
/// bootstrap. Pages now allow inline scripts only by a nonce new in every response,
/// which every script Corral writes carries: an injected script cannot know it.
#[tokio::test]
async fn pages_run_only_the_inline_scripts_carrying_their_own_nonce() {
    let app = spawn_app(Backend::Sqlite).await;
    app.user("nonce-user", Role::User, "default").await;
    let (signed_in, _) = app.browser("nonce-user").await;
    let visitor = browser();
    let mut seen = std::collections::HashSet::new();
    for (client, page) in [
        (&visitor, "/login"),
        (&visitor, "/login"),
        (&signed_in, "/clusters"),
        (&signed_in, "/clusters/new"),
        (&signed_in, "/clusters/no-such-cluster"),
        (&visitor, "/no-such-page"),
    ] {
        let response = client.get(app.url(page)).send().await.unwrap();
        let nonce = script_nonce(&response);
        assert!(
            seen.insert(nonce.clone()),
            "{page}: nonce {nonce} used twice"
        );
        let html = response.text().await.unwrap();
        let scripts = assert_tags_carry(&html, "script", &nonce, page);
        assert!(
            scripts >= 1,
            "{page} has no script at all (the hydration bootstrap): {html}"
        );
        assert_tags_carry(&html, "style", &nonce, page);
    }
    // The API reference's inline style is allowed by the nonce too.
    let reference = app.get("/api/v1/docs").await;
    let nonce = script_nonce(&reference);
    assert!(seen.insert(nonce.clone()));
    let html = reference.text().await.unwrap();
    assert_eq!(assert_tags_carry(&html, "style", &nonce, "/api/v1/docs"), 1);
    assert_eq!(
        assert_tags_carry(&html, "script", &nonce, "/api/v1/docs"),
        0
    );

    // What is not a page runs nothing, whatever it holds; scripts carry no policy.
    let answer = app.get("/api/v1/session").await;
    assert_eq!(
        answer.headers()[header::CONTENT_SECURITY_POLICY],
        server::http::csp::NON_PAGE_POLICY
    );
    let headers = answer.headers();
    assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    assert_eq!(headers[header::X_FRAME_OPTIONS], "DENY");
}

#[tokio::test]
async fn the_database_holds_no_session_id_and_no_private_key_in_clear() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = app.user("hoster", Role::TenantAdmin, "default").await;
    let (browser, _csrf) = app.browser("hoster").await;
    let cookie_id = {
        // The session cookie as the browser holds it.
        let response = browser
            .get(app.url("/api/v1/session"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let store_rows: Vec<(String,)> = sqlx::query_as("SELECT id FROM tower_sessions")
            .fetch_all(app.store.pool())
            .await
            .unwrap();
        assert_eq!(store_rows.len(), 1);
        store_rows[0].0.clone()
    };
    let login = app
        .client
        .post(app.url("/api/v1/session"))
        .json(&json!({"username": "hoster", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    let set_cookie = login.headers()[header::SET_COOKIE]
        .to_str()
        .unwrap()
        .to_owned();
    let sent_id = set_cookie
        .split(';')
        .next()
        .unwrap()
        .split_once('=')
        .unwrap()
        .1
        .to_owned();
    let stored: Vec<(String,)> = sqlx::query_as("SELECT id FROM tower_sessions")
        .fetch_all(app.store.pool())
        .await
        .unwrap();
    assert!(stored.iter().all(|(id,)| *id != sent_id), "{stored:?}");
    assert!(stored.iter().any(|(id,)| *id == cookie_id));

    let registered = app
        .call(
            &admin,
            Method::POST,
            "/api/v1/pool-hosts",
            Some(
                &json!({"name": "rack", "host": "127.0.0.1", "port": 2222, "user": "corral",
                         "host_key": crate::isolation::POOL_HOST_KEY}),
            ),
        )
        .await;
    assert_eq!(registered.status(), 201);
    let keys: Vec<(String,)> = sqlx::query_as("SELECT client_key FROM pool_hosts")
        .fetch_all(app.store.pool())
        .await
        .unwrap();
    assert_eq!(keys.len(), 1);
    assert!(!keys[0].0.contains("PRIVATE KEY"), "sealed at rest");
    assert!(keys[0].0.starts_with("sealed:v1:"));
}
