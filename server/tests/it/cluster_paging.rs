//! The cluster list in pages (issue 42, thousands of clusters): `GET /api/v1/clusters`
//! follows `next` as `cursor` through the whole list, expiring first, with filters; bad
//! limits, cursors and offsets are 422s naming the parameter; a cursor from another
//! tenant's list shows nothing of theirs. The portal's `/clusters` shows a page with a
//! plain "Next" link that works without JavaScript.

use std::collections::HashSet;

use api_types::ClusterState;
use engine::store::users::Role;
use engine::store::Backend;
use reqwest::Method;
use serde_json::Value;

use crate::helpers::{json_of, spawn_app, ApiUser, TestApp, PASSWORD};

const HOUR: i64 = 3_600_000;

/// `count` active clusters of `user`'s tenant named `{prefix}{index:02}`, owned by
/// `user`; every third has a lease, ending later the higher its index.
async fn seed(app: &TestApp, user: &ApiUser, prefix: &str, count: usize) {
    let now = engine::store::now_ms();
    for index in 0..count {
        let mut new =
            engine::testing::bare_cluster(&user.tenant_id, &format!("{prefix}{index:02}"));
        new.state = ClusterState::Active;
        new.owner_id = Some(user.id.clone());
        new.lease_expires_ms = (index % 3 == 0).then(|| now + (index as i64 + 1) * HOUR);
        app.store.create_cluster(&new, now).await.unwrap();
    }
}

async fn get(app: &TestApp, user: &ApiUser, path: &str) -> (u16, Value) {
    json_of(app.call(user, Method::GET, path, None).await).await
}

fn names(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|cluster| cluster["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Every page of `path` (which has a query string), following `next`.
async fn every_page(app: &TestApp, user: &ApiUser, path: &str) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let (status, mut page) = get(app, user, path).await;
    assert_eq!(status, 200, "{page}");
    loop {
        pages.push(names(&page));
        let Some(next) = page["next"].as_str() else {
            return pages;
        };
        assert!(pages.len() < 50, "the cursor does not move on");
        let (status, body) = get(app, user, &format!("{path}&cursor={next}")).await;
        assert_eq!(status, 200, "{body}");
        page = body;
    }
}

fn problem_path(body: &Value) -> &str {
    body["details"][0]["path"].as_str().unwrap_or_default()
}

async fn the_api_pages_by_cursor_with_filters(backend: Backend) {
    let app = spawn_app(backend).await;
    let ann = app.user("ann", Role::User, "acme").await;
    let carl = app.user("carl", Role::User, "acme").await;
    seed(&app, &ann, "a", 8).await;
    seed(&app, &carl, "c", 3).await;

    let pages = every_page(&app, &ann, "/api/v1/clusters?limit=4").await;
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [4, 4, 3]);
    let listed: Vec<String> = pages.concat();
    assert_eq!(
        listed.iter().collect::<HashSet<_>>().len(),
        11,
        "{listed:?}"
    );
    // Expiring first: the leased ones (a00, c00, a03, a06 by their ends), then by name.
    assert_eq!(
        listed,
        ["a00", "c00", "a03", "a06", "a01", "a02", "a04", "a05", "a07", "c01", "c02"]
    );
    let (_, first) = get(&app, &ann, "/api/v1/clusters?limit=4").await;
    assert_eq!(first["total"], 11);
    assert_eq!(first["limit"], 4);
    assert_eq!(first["templates"], serde_json::json!(["bare"]));
    assert_eq!(first["states"], serde_json::json!(["active"]));
    // Without a limit: the default page (50) holds them all, and says there is no more.
    let (_, all) = get(&app, &ann, "/api/v1/clusters").await;
    assert_eq!(names(&all), listed);
    assert!(all.get("next").is_none(), "{all}");
    // Each row names its owner (looked up for the page's owners alone).
    for cluster in all["items"].as_array().unwrap() {
        let name = cluster["name"].as_str().unwrap();
        let owner = if name.starts_with('a') { "ann" } else { "carl" };
        assert_eq!(cluster["owner"], owner, "{cluster}");
    }
    let (_, one) = get(&app, &carl, &format!("/api/v1/clusters/{}", "c01")).await;
    assert_eq!(one["owner"], "carl", "{one}");

    // Filters: the caller's own, part of a name; the total is the filtered list's.
    let mine = every_page(&app, &carl, "/api/v1/clusters?limit=2&mine=true").await;
    assert_eq!(mine.concat(), ["c00", "c01", "c02"]);
    let (_, named) = get(&app, &ann, "/api/v1/clusters?q=A0&limit=50").await;
    assert_eq!(named["total"], 8);
    let (_, failed) = get(&app, &ann, "/api/v1/clusters?state=failed").await;
    assert_eq!(failed["total"], 0);

    // Bad values name their parameter.
    for (query, parameter) in [
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("cursor=not-a-cursor", "cursor"),
        ("cursor=bm9wZQ", "cursor"),
    ] {
        let (status, body) = get(&app, &ann, &format!("/api/v1/clusters?{query}")).await;
        assert_eq!(status, 422, "{query}: {body}");
        assert_eq!(problem_path(&body), parameter, "{query}: {body}");
    }
    let next = first["next"].as_str().unwrap();
    let (status, body) = get(
        &app,
        &ann,
        &format!("/api/v1/clusters?cursor={next}&offset=2"),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(problem_path(&body), "offset", "{body}");
    // Offsets still page for older clients.
    let (_, second) = get(&app, &ann, "/api/v1/clusters?offset=4&limit=4").await;
    assert_eq!(names(&second), pages[1]);
}

async fn another_tenants_cursor_shows_nothing_of_theirs(backend: Backend) {
    let app = spawn_app(backend).await;
    let ann = app.user("ann", Role::User, "acme").await;
    let olga = app.user("olga", Role::User, "other").await;
    seed(&app, &ann, "a", 3).await;
    seed(&app, &olga, "o", 5).await;

    let (_, theirs) = get(&app, &olga, "/api/v1/clusters?limit=2").await;
    let cursor = theirs["next"].as_str().unwrap();
    let (status, page) = get(&app, &ann, &format!("/api/v1/clusters?cursor={cursor}")).await;
    assert_eq!(status, 200, "{page}");
    assert!(
        names(&page).iter().all(|name| name.starts_with('a')),
        "{page}"
    );
    assert_eq!(page["total"], 3);
    let every = every_page(&app, &olga, "/api/v1/clusters?limit=2")
        .await
        .concat();
    assert_eq!(every.len(), 5);
    assert!(every.iter().all(|name| name.starts_with('o')), "{every:?}");
}

engine::on_both_backends!(
    the_api_pages_by_cursor_with_filters,
    another_tenants_cursor_shows_nothing_of_theirs,
);

/// The `href` of the page's link marked `rel` (entities of the query string undone).
fn link(html: &str, rel: &str) -> Option<String> {
    let at = html.find(&format!("rel=\"{rel}\""))?;
    let start = html[..at].rfind("href=\"")? + "href=\"".len();
    let end = start + html[start..].find('"')?;
    Some(html[start..end].replace("&amp;", "&"))
}

/// Without JavaScript: the first page shows 50 clusters and a Next link; following it
/// (a plain GET) shows the rest, a link back to the first page and no Next; filters
/// stay in the links.
#[tokio::test]
async fn the_cluster_page_pages_with_plain_links() {
    let app = spawn_app(Backend::Sqlite).await;
    let ann = app.user("ann", Role::User, "acme").await;
    seed(&app, &ann, "a", 57).await;
    let browser = reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .unwrap();
    let response = browser
        .post(app.url("/api/v1/session"))
        .json(&serde_json::json!({"username": "ann", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let page = |path: String| {
        let (browser, url) = (browser.clone(), app.url(&path));
        async move { browser.get(url).send().await.unwrap().text().await.unwrap() }
    };
    let rows = |html: &str| html.matches("<tr data-cluster=").count();

    let html = page("/clusters".to_owned()).await;
    assert_eq!(rows(&html), 50, "{html}");
    assert!(html.contains("50 of 57 cluster(s)"), "{html}");
    assert!(link(&html, "first").is_none(), "{html}");
    let next = link(&html, "next").expect("a Next link");
    assert!(next.starts_with("/clusters?cursor="), "{next}");

    let html = page(next).await;
    assert_eq!(rows(&html), 7, "{html}");
    assert!(link(&html, "next").is_none(), "{html}");
    assert_eq!(link(&html, "first").as_deref(), Some("/clusters"));
    // The second page goes on after the first: the expiring ones were on the first.
    assert!(html.contains("data-cluster=\"a56\""), "{html}");
    assert!(!html.contains("data-cluster=\"a00\""), "{html}");

    // A filter is kept by the links, and the total is the filtered list's.
    let html = page("/clusters?q=a1&mine=1".to_owned()).await;
    assert_eq!(rows(&html), 10, "{html}");
    assert!(html.contains("10 of 10 cluster(s)"), "{html}");
    let html = page("/clusters?q=a".to_owned()).await;
    let next = link(&html, "next").expect("a Next link");
    assert!(next.starts_with("/clusters?q=a&cursor="), "{next}");
}

/// The audit page without JavaScript: 100 entries a page, newest first, and a plain
/// "Older" link that goes on right after the last one shown, even when every entry
/// was written in the same millisecond (as a burst of seeded clusters is). The entries
/// name an action this version does not know, as an older version's may.
#[tokio::test]
async fn the_audit_page_pages_with_plain_links() {
    let app = spawn_app(Backend::Sqlite).await;
    let ada = app.user("ada", Role::TenantAdmin, "acme").await;
    let at_ms = engine::store::now_ms();
    for index in 0..130 {
        // Written as SQL: `test.page` names no action this version writes, as the rows
        // an older version wrote may; the page shows them like any other.
        sqlx::query(
            "INSERT INTO audit_log (id, tenant_id, actor_name, action, target_kind, target, \
             at_ms) VALUES ($1, $2, 'seeder', 'test.page', 'thing', $3, $4)",
        )
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(&ada.tenant_id)
        .bind(format!("t{index:03}"))
        .bind(at_ms)
        .execute(app.store.pool())
        .await
        .unwrap();
    }
    let browser = reqwest::Client::builder()
        .cookie_store(true)
        .build()
        .unwrap();
    let response = browser
        .post(app.url("/api/v1/session"))
        .json(&serde_json::json!({"username": "ada", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let page = |path: String| {
        let (browser, url) = (browser.clone(), app.url(&path));
        async move { browser.get(url).send().await.unwrap().text().await.unwrap() }
    };
    let targets = |html: &str| -> Vec<String> {
        // The table's cells (the page's serialized data names them too).
        html.match_indices("<td>thing t")
            .map(|(at, _)| html[at + "<td>thing ".len()..at + "<td>thing t000".len()].to_owned())
            .collect()
    };

    let html = page("/admin/audit?action=test.".to_owned()).await;
    let first = targets(&html);
    assert_eq!(first.len(), 100, "{html}");
    assert!(link(&html, "first").is_none(), "{html}");
    let older = link(&html, "next").expect("an Older link");
    assert!(
        older.starts_with("/admin/audit?action=test.&before="),
        "{older}"
    );

    let html = page(older).await;
    let second = targets(&html);
    assert_eq!(second.len(), 30, "{html}");
    assert!(link(&html, "next").is_none(), "{html}");
    assert_eq!(
        link(&html, "first").as_deref(),
        Some("/admin/audit?action=test.")
    );
    let every: HashSet<String> = first.into_iter().chain(second).collect();
    assert_eq!(every.len(), 130, "an entry was shown twice or skipped");
}
