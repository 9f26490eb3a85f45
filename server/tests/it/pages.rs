//! Server-side rendering of the portal: pages come back as complete HTML (so they
//! work with JavaScript off), visitors are sent to sign in, forms post to server
//! functions that check the CSRF token, another tenant's cluster is a 404, and the
//! job event stream resumes exactly after the last event a client has.

use std::time::Duration;

use engine::queue::{JobId, NewEvent};
use engine::store::users::Role;
use engine::store::Backend;
use reqwest::redirect::Policy;
use reqwest::{header, Method};
use serde_json::{json, Value};

use crate::helpers::{spawn_app, with_catalog, ApiUser, TestApp, PASSWORD};

/// A browser without JavaScript: keeps cookies, does not follow redirects.
fn plain_browser() -> reqwest::Client {
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(Policy::none())
        .build()
        .unwrap()
}

/// Signs `username` in through the login form, as a browser without JavaScript does.
async fn form_sign_in(app: &TestApp, username: &str, password: &str) -> reqwest::Response {
    plain_browser_sign_in(&plain_browser(), app, username, password).await
}

async fn plain_browser_sign_in(
    browser: &reqwest::Client,
    app: &TestApp,
    username: &str,
    password: &str,
) -> reqwest::Response {
    browser
        .post(app.url("/sfn/login"))
        .header(header::ACCEPT, "text/html")
        .header(header::REFERER, app.url("/login?next=/clusters"))
        .form(&[
            ("username", username),
            ("password", password),
            ("next", "/clusters"),
        ])
        .send()
        .await
        .unwrap()
}

/// The HTML of the page at `url`.
async fn page_html(browser: &reqwest::Client, url: String) -> String {
    browser.get(url).send().await.unwrap().text().await.unwrap()
}

fn location(response: &reqwest::Response) -> String {
    response.headers()[header::LOCATION]
        .to_str()
        .unwrap()
        .to_owned()
}

async fn create_cluster(app: &TestApp, user: &ApiUser, name: &str) -> Value {
    let response = app
        .call(
            user,
            Method::POST,
            "/api/v1/clusters",
            Some(&json!({"name": name, "template": "lifecycle", "size": 3})),
        )
        .await;
    assert_eq!(response.status(), 201);
    response.json().await.unwrap()
}

#[tokio::test]
async fn visitors_are_sent_to_sign_in_and_come_back() {
    let app = spawn_app(Backend::Sqlite).await;
    let browser = plain_browser();
    let response = browser.get(app.url("/")).send().await.unwrap();
    assert_eq!(response.status(), 303);
    assert_eq!(location(&response), "/login");
    let response = browser
        .get(app.url("/clusters/new?template=web&size=3"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 303);
    assert_eq!(
        location(&response),
        "/login?next=/clusters/new%3Ftemplate%3Dweb%26size%3D3"
    );
    let html = page_html(&browser, app.url("/login?next=/clusters")).await;
    assert!(html.contains("action=\"/sfn/login\""), "{html}");
    assert!(html.contains("method=\"post\""), "{html}");
    assert!(html.contains("/pkg/corral-"), "hydration script missing");
    assert!(html.contains("rel=\"stylesheet\""), "stylesheet missing");
}

/// The `href` of the first tag in `html` whose text contains `marker`.
fn linked(html: &str, marker: &str) -> String {
    let tag = html
        .split('<')
        .find(|tag| tag.contains(marker))
        .unwrap_or_else(|| panic!("no tag with {marker} in {html}"));
    let href = tag.split("href=\"").nth(1).expect("an href");
    href[..href.find('"').unwrap()].to_owned()
}

async fn fetch_encoded(app: &TestApp, path: &str, accept: Option<&str>) -> reqwest::Response {
    let mut request = app.client.get(app.url(path));
    if let Some(accept) = accept {
        request = request.header(header::ACCEPT_ENCODING, accept);
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn the_bundle_is_served_by_content_hash_precompressed_and_cached_for_good() {
    let app = spawn_app(Backend::Sqlite).await;
    let page = plain_browser().get(app.url("/login")).send().await.unwrap();
    assert_eq!(page.headers()[header::CACHE_CONTROL], "no-cache");
    let html = page.text().await.unwrap();
    let wasm = linked(&html, "application/wasm");
    let loader = linked(&html, "modulepreload");
    let stylesheet = linked(&html, "stylesheet");
    let dir = loader.strip_suffix("/corral.js").expect("corral.js");
    let hash = dir
        .strip_prefix("/pkg/corral-")
        .expect("the scripts' directory");
    assert!(
        hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()),
        "{loader}"
    );
    assert_eq!(
        wasm,
        format!("{dir}/corral_bg.wasm"),
        "the wasm is in the loader's directory"
    );
    assert!(
        html.contains(&format!("\"{}\"", &dir[1..])),
        "the hydration script loads from it"
    );
    let chunk_loader = fetch_encoded(&app, &format!("{dir}/__wasm_split.js"), None).await;
    assert_eq!(chunk_loader.status(), 200);
    assert_eq!(
        chunk_loader.headers()[header::CACHE_CONTROL],
        "public, max-age=31536000, immutable"
    );

    let brotli = fetch_encoded(&app, &wasm, Some("gzip, deflate, br")).await;
    assert_eq!(brotli.status(), 200);
    assert_eq!(brotli.headers()[header::CONTENT_ENCODING], "br");
    assert_eq!(brotli.headers()[header::CONTENT_TYPE], "application/wasm");
    assert_eq!(brotli.headers()[header::VARY], "accept-encoding");
    assert_eq!(
        brotli.headers()[header::CACHE_CONTROL],
        "public, max-age=31536000, immutable"
    );
    // Scripts carry `nosniff` but not the document-only headers.
    assert_eq!(brotli.headers()[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    assert!(brotli
        .headers()
        .get(header::CONTENT_SECURITY_POLICY)
        .is_none());
    assert!(brotli.headers().get(header::X_FRAME_OPTIONS).is_none());
    assert_eq!(brotli.text().await.unwrap(), "wasm bytes in brotli");
    let gzip = fetch_encoded(&app, &wasm, Some("gzip;q=1, br;q=0")).await;
    assert_eq!(gzip.headers()[header::CONTENT_ENCODING], "gzip");
    assert_eq!(gzip.text().await.unwrap(), "wasm bytes in gzip");
    let plain = fetch_encoded(&app, &wasm, None).await;
    assert!(plain.headers().get(header::CONTENT_ENCODING).is_none());
    assert_eq!(plain.text().await.unwrap(), "wasm bytes");
    // A file the build did not compress is sent as it is, whatever is accepted.
    let css = fetch_encoded(&app, &stylesheet, Some("br, gzip")).await;
    assert!(css.headers().get(header::CONTENT_ENCODING).is_none());
    assert_eq!(
        css.headers()[header::CONTENT_TYPE],
        "text/css; charset=utf-8"
    );
    assert!(css.headers().get(header::CONTENT_SECURITY_POLICY).is_some());
    assert_eq!(css.text().await.unwrap(), "body { margin: 0 }");

    // The build's own names answer too, but are checked again on every use.
    let unhashed = fetch_encoded(&app, "/pkg/corral.css", None).await;
    assert_eq!(unhashed.status(), 200);
    assert_eq!(unhashed.headers()[header::CACHE_CONTROL], "no-cache");
    for missing in [
        "/pkg/corral-0000000000000000/corral.js",
        format!("{dir}/missing.wasm").as_str(),
        format!("{dir}%2F..%2Fcorral.css").as_str(),
        "/pkg/..%2F..%2FCargo.toml",
        "/pkg/../Cargo.toml",
    ] {
        let response = fetch_encoded(&app, missing, None).await;
        assert_eq!(response.status(), 404, "{missing}");
    }
}

#[tokio::test]
async fn the_login_form_works_without_javascript() {
    let app = spawn_app(Backend::Sqlite).await;
    app.user("erin", Role::User, "default").await;

    let wrong = form_sign_in(&app, "erin", "not the password").await;
    assert!(wrong.status().is_redirection(), "{}", wrong.status());
    let back = location(&wrong);
    assert!(back.starts_with(&app.url("/login")), "{back}");
    let page = plain_browser().get(&back).send().await.unwrap();
    let html = page.text().await.unwrap();
    assert!(html.contains("wrong username or password"), "{html}");

    let browser = plain_browser();
    let right = plain_browser_sign_in(&browser, &app, "erin", PASSWORD).await;
    assert!(right.status().is_redirection(), "{}", right.status());
    assert_eq!(location(&right), "/clusters");
    let response = browser.get(app.url("/clusters")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let html = response.text().await.unwrap();
    assert!(html.contains("No clusters yet"), "{html}");
    assert!(html.contains("erin"), "the signed-in user is named: {html}");
}

#[tokio::test]
async fn pages_render_the_tenants_clusters_on_the_server() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let created = create_cluster(&app, &admin, "shop").await;
    let browser = plain_browser();
    plain_browser_sign_in(&browser, &app, "acme-admin", PASSWORD).await;

    let html = page_html(&browser, app.url("/clusters")).await;
    assert!(html.contains("data-cluster=\"shop\""), "{html}");
    assert!(html.contains("acme-admin"), "owner shown: {html}");

    let id = created["cluster"]["id"].as_str().unwrap();
    let html = page_html(&browser, app.url(&format!("/clusters/{id}"))).await;
    assert!(html.contains("data-testid=\"node-table\""), "{html}");

    let job = created["job_id"].as_str().unwrap();
    let html = page_html(&browser, app.url(&format!("/clusters/{id}/jobs/{job}"))).await;
    assert!(html.contains("data-testid=\"task-table\""), "{html}");
    assert!(html.contains("class=\"dag\""), "the DAG picture: {html}");
    // Without JavaScript, an unfinished job's page refreshes itself.
    assert!(html.contains("http-equiv=\"refresh\""), "{html}");

    // The create form's preview renders on the server from the query string.
    let html = page_html(
        &browser,
        app.url("/clusters/new?template=lifecycle&size=3&name=next"),
    )
    .await;
    assert!(html.contains("data-testid=\"plan-preview\""), "{html}");
    let html = page_html(&browser, app.url("/clusters/new?template=lifecycle&size=1")).await;
    assert!(html.contains("data-testid=\"unsatisfiable\""), "{html}");
}

#[tokio::test]
async fn another_tenants_cluster_is_not_found() {
    let app = spawn_app(Backend::Sqlite).await;
    let acme = with_catalog(&app, "acme").await;
    let created = create_cluster(&app, &acme, "secret-shop").await;
    app.user("bob", Role::TenantAdmin, "globex").await;
    let browser = plain_browser();
    plain_browser_sign_in(&browser, &app, "bob", PASSWORD).await;
    let id = created["cluster"]["id"].as_str().unwrap();
    let response = browser
        .get(app.url(&format!("/clusters/{id}")))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    let html = response.text().await.unwrap();
    assert!(!html.contains("secret-shop"), "{html}");
    assert!(html.contains("not found"), "{html}");
}

#[tokio::test]
async fn forms_without_the_sessions_csrf_token_change_nothing() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let browser = plain_browser();
    plain_browser_sign_in(&browser, &app, "acme-admin", PASSWORD).await;
    let response = browser
        .post(app.url("/sfn/create-cluster"))
        .header(header::ACCEPT, "application/json")
        .form(&[
            ("csrf", "forged"),
            ("form[name]", "sneaky"),
            ("form[template]", "lifecycle"),
            ("form[size]", "3"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    let body = response.text().await.unwrap();
    assert!(body.contains("security token"), "{body}");
    let list: Value = app
        .call(&admin, Method::GET, "/api/v1/clusters", None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(list["total"], 0);
}

/// The task numbers of the task table's rows in a job page's HTML.
fn task_rows(html: &str) -> Vec<u32> {
    let table = html
        .split("data-testid=\"task-table\"")
        .nth(1)
        .and_then(|rest| rest.split("</table>").next())
        .unwrap_or_else(|| panic!("no task table in {html}"));
    table
        .split("<tr")
        .filter_map(|row| row.split("data-task=\"").nth(1))
        .map(|rest| rest[..rest.find('"').unwrap()].parse().unwrap())
        .collect()
}

/// The job page's task table is one page of the tasks the query keeps (state, node,
/// step), filtered on the server: it works without JavaScript. A value that names
/// nothing is a clear 422, and another tenant's job stays a 404 whatever the query.
#[tokio::test]
async fn the_job_pages_task_table_is_filtered_and_paged_on_the_server() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let created = create_cluster(&app, &admin, "filtered").await;
    let (id, job) = (
        created["cluster"]["id"].as_str().unwrap(),
        created["job_id"].as_str().unwrap(),
    );
    let tasks: Value = app
        .call(
            &admin,
            Method::GET,
            &format!("/api/v1/jobs/{job}/tasks?limit=500"),
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    let tasks = tasks["items"].as_array().unwrap().clone();
    let numbers = |keep: &dyn Fn(&Value) -> bool| -> Vec<u32> {
        tasks
            .iter()
            .filter(|task| keep(task))
            .map(|task| task["number"].as_u64().unwrap() as u32)
            .collect()
    };
    let browser = plain_browser();
    plain_browser_sign_in(&browser, &app, "acme-admin", PASSWORD).await;
    let page = |query: &str| {
        let url = app.url(&format!("/clusters/{id}/jobs/{job}{query}"));
        let browser = browser.clone();
        async move {
            let response = browser.get(url).send().await.unwrap();
            (response.status().as_u16(), response.text().await.unwrap())
        }
    };

    let (status, html) = page("").await;
    assert_eq!(status, 200);
    assert_eq!(task_rows(&html), numbers(&|_| true));
    assert!(html.contains("data-testid=\"task-groups\""), "{html}");
    // The last task's node, and the first's (nodes are numbered from the layout).
    let (last_node, first_node) = (
        tasks.last().unwrap()["node"].clone(),
        tasks[0]["node"].clone(),
    );
    let (_, html) = page(&format!("?node={last_node}")).await;
    let on_last_node = numbers(&|task| task["node"] == last_node);
    assert!(on_last_node.len() < tasks.len());
    assert_eq!(task_rows(&html), on_last_node);
    let (_, html) = page(&format!("?state=ready&node={first_node}")).await;
    assert_eq!(
        task_rows(&html),
        numbers(&|task| task["state"] == "ready" && task["node"] == first_node)
    );
    let (_, html) = page("?action=install").await;
    assert_eq!(
        task_rows(&html),
        numbers(&|task| task["action"] == "install")
    );
    let (_, html) = page("?state=succeeded").await;
    assert!(task_rows(&html).is_empty());
    assert!(html.contains("No tasks match."), "{html}");
    // Empty inputs (a GET form sends them) are no filter.
    let (_, html) = page("?state=&node=").await;
    assert_eq!(task_rows(&html).len(), tasks.len());
    let (_, html) = page("?page=2").await;
    assert!(task_rows(&html).is_empty(), "one page holds every task");

    for (query, says) in [
        ("?state=sleeping", "state: \"sleeping\" is not a task state"),
        ("?action=sleep", "action: \"sleep\" is not a task action"),
        ("?node=first", "node: \"first\" is not a node number"),
        ("?page=0", "page: \"0\" is not a page number"),
    ] {
        let (status, html) = page(query).await;
        assert_eq!(status, 422, "{query}");
        let escaped = says.replace('"', "&quot;");
        assert!(
            html.contains(says) || html.contains(&escaped),
            "{query}: {html}"
        );
    }

    // The page in the browser reads the same through its server function, which gets
    // no query field at all when no value is set.
    for (fields, listed) in [
        (vec![], numbers(&|_| true)),
        (
            vec![("query[state]", "ready")],
            numbers(&|task| task["state"] == "ready"),
        ),
    ] {
        let mut form = vec![("cluster_id", id), ("job_id", job)];
        form.extend(fields);
        let response = browser
            .post(app.url("/sfn/job-page"))
            .header(header::ACCEPT, "application/json")
            .form(&form)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{form:?}");
        let page: Value = response.json().await.unwrap();
        let rows: Vec<u32> = page["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|task| task["number"].as_u64().unwrap() as u32)
            .collect();
        assert_eq!(rows, listed, "{form:?}");
    }

    app.user("bob", Role::TenantAdmin, "globex").await;
    let other = plain_browser();
    plain_browser_sign_in(&other, &app, "bob", PASSWORD).await;
    let response = other
        .get(app.url(&format!(
            "/clusters/{id}/jobs/{job}?state=ready&node={first_node}"
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    assert!(!response.text().await.unwrap().contains("filtered"));
}

/// The cluster page's node table is one page of the cluster's nodes, paged on the
/// server with links that work without JavaScript: the page of a large cluster
/// carries neither every node nor its layout.
#[tokio::test]
async fn the_cluster_pages_node_table_is_paged_on_the_server() {
    use engine::store::clusters::nodes::{NodeRow, NodeState};

    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let created = create_cluster(&app, &admin, "paged").await;
    let id = created["cluster"]["id"].as_str().unwrap();
    for number in 1..=120 {
        let record = NodeRow {
            cluster_id: id.to_owned(),
            number,
            hostname: Some(format!("paged-node-{number}.")),
            hardwaretype: "small".to_owned(),
            imagetype: "host".to_owned(),
            services_json: r#"["kv"]"#.to_owned(),
            provider_json: None,
            state: NodeState::Ready,
        };
        app.store.save_node(&record, 0).await.unwrap();
    }
    let browser = plain_browser();
    plain_browser_sign_in(&browser, &app, "acme-admin", PASSWORD).await;
    // The rows of the table (the page's data for hydration names them once more).
    let hostnames = |html: &str| -> Vec<i64> {
        let table = html
            .split("data-testid=\"node-table\"")
            .nth(1)
            .and_then(|rest| rest.split("</table>").next())
            .unwrap_or_else(|| panic!("no node table in {html}"));
        table
            .split("paged-node-")
            .skip(1)
            .map(|rest| rest[..rest.find('.').unwrap()].parse().unwrap())
            .collect()
    };
    let page = |query: &str| page_html(&browser, app.url(&format!("/clusters/{id}{query}")));

    let html = page("").await;
    assert_eq!(hostnames(&html), (1..=50).collect::<Vec<_>>());
    assert!(html.contains("nodes 1–50 of 120, page 1 of 3"), "{html}");
    assert!(
        !html.contains("\"layout\""),
        "the layout stays on the server"
    );
    let next = linked(&html, "rel=\"next\"");
    assert_eq!(next, "?node_page=2");
    let html = page(&next).await;
    assert_eq!(hostnames(&html), (51..=100).collect::<Vec<_>>());
    assert_eq!(linked(&html, "rel=\"prev\""), "?node_page=1");
    let html = page("?node_page=3").await;
    assert_eq!(hostnames(&html), (101..=120).collect::<Vec<_>>());
    assert!(
        !html.contains("rel=\"next\""),
        "the last page links no further"
    );
    // Past the last page: the last; not a number: the first.
    assert_eq!(
        hostnames(&page("?node_page=99").await),
        (101..=120).collect::<Vec<_>>()
    );
    assert_eq!(
        hostnames(&page("?node_page=x").await),
        (1..=50).collect::<Vec<_>>()
    );
}

/// The log shows the newest lines of a long job, with a link to the older ones that
/// works without JavaScript.
#[tokio::test]
async fn the_job_pages_output_shows_the_newest_lines_and_links_to_older_ones() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let created = create_cluster(&app, &admin, "talkative").await;
    let (id, job) = (
        created["cluster"]["id"].as_str().unwrap(),
        created["job_id"].as_str().unwrap(),
    );
    app.queue
        .append_events(&output_lines(job, 1..=600), engine::store::now_ms())
        .await
        .unwrap();
    let browser = plain_browser();
    plain_browser_sign_in(&browser, &app, "acme-admin", PASSWORD).await;
    let ids = output_event_ids(&app, &admin, job).await;
    assert_eq!(ids.len(), 600);
    let shown = |html: &str| -> Vec<i64> {
        html.split("data-event=\"")
            .skip(1)
            .map(|rest| rest[..rest.find('"').unwrap()].parse().unwrap())
            .collect()
    };
    let html = page_html(&browser, app.url(&format!("/clusters/{id}/jobs/{job}"))).await;
    assert_eq!(shown(&html), ids[100..].to_vec(), "the newest 500 lines");
    let older = linked(&html, "older lines").replace("&amp;", "&");
    assert_eq!(older, format!("?before={}", ids[100]));
    let html = page_html(
        &browser,
        app.url(&format!("/clusters/{id}/jobs/{job}{older}")),
    )
    .await;
    assert_eq!(shown(&html), ids[..100].to_vec(), "the 100 before them");
    assert!(html.contains("The newest lines"), "{html}");
}

async fn read_stream(response: reqwest::Response) -> String {
    tokio::time::timeout(Duration::from_secs(20), response.text())
        .await
        .expect("the stream of a finished job ends")
        .unwrap()
}

/// The ids of the job's output events, oldest first, read through the API.
async fn output_event_ids(app: &TestApp, user: &ApiUser, job: &str) -> Vec<i64> {
    let events: Vec<Value> = app
        .call(
            user,
            Method::GET,
            &format!("/api/v1/jobs/{job}/events?limit=1000"),
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    events
        .iter()
        .filter(|event| event["kind"] == "output")
        .map(|event| event["id"].as_i64().unwrap())
        .collect()
}

fn output_lines(job: &str, numbers: std::ops::RangeInclusive<u32>) -> Vec<NewEvent> {
    numbers
        .map(|n| NewEvent {
            job_id: JobId::from(job),
            task_id: None,
            attempt: None,
            kind: api_types::EventKind::Output,
            stream: Some(api_types::OutputStream::Stdout),
            data: format!("line {n}"),
        })
        .collect()
}

/// Streams of one job share their reads (one feed per job): a stream opened behind
/// where the feed started, one ahead, and events written while both are open each
/// arrive once, in order, on both.
#[tokio::test]
async fn streams_of_one_job_at_different_places_each_get_every_event_once() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let created = create_cluster(&app, &admin, "shared").await;
    let job = created["job_id"].as_str().unwrap().to_owned();
    let written = engine::store::now_ms();
    app.queue
        .append_events(&output_lines(&job, 1..=5), written)
        .await
        .unwrap();
    let events: Vec<Value> = app
        .call(
            &admin,
            Method::GET,
            &format!("/api/v1/jobs/{job}/events"),
            None,
        )
        .await
        .json()
        .await
        .unwrap();
    let line_ids: Vec<i64> = events
        .iter()
        .filter(|event| event["kind"] == "output")
        .map(|event| event["id"].as_i64().unwrap())
        .collect();
    let open = |after: i64| {
        app.client
            .get(app.url(&format!("/api/v1/jobs/{job}/stream?after={after}")))
            .bearer_auth(&admin.token)
            .send()
    };
    // The first stream starts the feed at line 4; its first event is line 5.
    let mut ahead = open(line_ids[3]).await.unwrap();
    let first = ahead.chunk().await.unwrap().unwrap();
    assert!(
        String::from_utf8_lossy(&first).contains("line 5"),
        "{first:?}"
    );
    // The second is behind the feed: it reads for itself until it catches up.
    let behind = open(0).await.unwrap();
    app.queue
        .append_events(&output_lines(&job, 6..=8), written + 1)
        .await
        .unwrap();
    let cancelled = app
        .call(
            &admin,
            Method::POST,
            &format!("/api/v1/jobs/{job}/cancel"),
            None,
        )
        .await;
    assert_eq!(cancelled.status(), 200);

    let ahead = format!(
        "{}{}",
        String::from_utf8_lossy(&first),
        read_stream(ahead).await
    );
    let behind = read_stream(behind).await;
    for (body, from) in [(&ahead, 5), (&behind, 1)] {
        let mut last_at = 0;
        for n in from..=8 {
            let line = format!("\"line {n}\"");
            assert_eq!(body.matches(&line).count(), 1, "{line} in {body}");
            let at = body.find(&line).unwrap();
            assert!(at > last_at, "line {n} out of order in {body}");
            last_at = at;
        }
        assert!(body.contains("event: end"), "{body}");
    }
    assert!(!ahead.contains("\"line 4\""), "{ahead}");
}

#[tokio::test]
async fn the_event_stream_resumes_after_the_last_event_seen() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let created = create_cluster(&app, &admin, "streamed").await;
    let job = created["job_id"].as_str().unwrap().to_owned();
    app.queue
        .append_events(&output_lines(&job, 1..=5), engine::store::now_ms())
        .await
        .unwrap();
    let response = app
        .call(
            &admin,
            Method::POST,
            &format!("/api/v1/jobs/{job}/cancel"),
            None,
        )
        .await;
    assert_eq!(response.status(), 200);
    let ids = output_event_ids(&app, &admin, &job).await;
    assert_eq!(ids.len(), 5);

    let from_second = app
        .client
        .get(app.url(&format!("/api/v1/jobs/{job}/stream?after={}", ids[1])))
        .bearer_auth(&admin.token)
        .send()
        .await
        .unwrap();
    assert_eq!(
        from_second.headers()[header::CONTENT_TYPE],
        "text/event-stream"
    );
    let body = read_stream(from_second).await;
    assert!(
        !body.contains("line 1") && !body.contains("line 2"),
        "{body}"
    );
    for n in 3..=5 {
        assert_eq!(body.matches(&format!("\"line {n}\"")).count(), 1, "{body}");
    }
    assert!(body.contains("event: end"), "{body}");
    assert!(body.contains("cancelled"), "{body}");

    // A reconnecting EventSource sends Last-Event-ID, which wins over `after`.
    let reconnect = app
        .client
        .get(app.url(&format!("/api/v1/jobs/{job}/stream?after=0")))
        .bearer_auth(&admin.token)
        .header("last-event-id", ids[3].to_string())
        .send()
        .await
        .unwrap();
    let body = read_stream(reconnect).await;
    assert!(body.contains("\"line 5\""), "{body}");
    assert!(!body.contains("\"line 4\""), "{body}");
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

/// Pages finish while other servers of the same process start. Starting a server makes
/// its router, and making a router used to list the app's routes, which switches
/// Leptos's resource loading off for the whole process for a moment: a page whose data
/// first loaded in that moment never finished (the rare hang the page tests worked
/// around). Routes are now listed once per process. The pages here are read while ten
/// servers start, each page with its own time limit so a hang fails instead of waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn pages_finish_while_other_servers_start() {
    let app = spawn_app(Backend::Sqlite).await;
    with_catalog(&app, "acme").await;
    let (browser, _csrf) = app.browser("acme-admin").await;
    let starting = tokio::spawn(async {
        for _ in 0..10 {
            drop(spawn_app(Backend::Sqlite).await);
        }
    });
    let mut pages = 0;
    while !starting.is_finished() || pages < 20 {
        let (status, html) = tokio::time::timeout(Duration::from_secs(10), async {
            let response = browser.get(app.url("/clusters")).send().await.unwrap();
            (response.status(), response.text().await.unwrap())
        })
        .await
        .unwrap_or_else(|_| panic!("page {pages} did not finish within 10 s"));
        assert_eq!(status, 200);
        assert!(html.contains("</html>"), "page {pages} is cut short");
        pages += 1;
    }
    starting.await.unwrap();
}

/// The session's CSRF token, as the page's `<meta>` gives it to scripts.
async fn csrf_of(browser: &reqwest::Client, app: &TestApp) -> String {
    let me: Value = browser
        .post(app.url("/sfn/current-user"))
        .header(header::ACCEPT, "application/json")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    me["csrf"].as_str().unwrap().to_owned()
}

/// Posts the plain form of the server function `endpoint` with the session's CSRF
/// token: as a browser without JavaScript does (`text/html`, from `page`, answered by
/// a redirect back), or as a script does (`application/json`) when `page` is `None`.
async fn post_form(
    browser: &reqwest::Client,
    app: &TestApp,
    endpoint: &str,
    page: Option<&str>,
    fields: &[(&str, &str)],
) -> reqwest::Response {
    let csrf = csrf_of(browser, app).await;
    let mut form = vec![("csrf", csrf.as_str())];
    form.extend_from_slice(fields);
    let request = browser.post(app.url(&format!("/sfn/{endpoint}")));
    let request = match page {
        Some(page) => request
            .header(header::ACCEPT, "text/html")
            .header(header::REFERER, app.url(page)),
        None => request.header(header::ACCEPT, "application/json"),
    };
    request.form(&form).send().await.unwrap()
}

/// The cluster page shows the pin and flips it with a plain form (issue 40): posting
/// the switch pins the cluster, the page then says so, and a value that is not
/// true or false is refused by name and changes nothing.
#[tokio::test]
async fn the_cluster_pages_pin_switch_pins_without_javascript() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let created = create_cluster(&app, &admin, "keep").await;
    let id = created["cluster"]["id"].as_str().unwrap().to_owned();
    let browser = plain_browser();
    plain_browser_sign_in(&browser, &app, "acme-admin", PASSWORD).await;
    let page = format!("/clusters/{id}");

    let html = page_html(&browser, app.url(&page)).await;
    assert!(
        html.contains("data-testid=\"pin-state\" data-pinned=\"false\""),
        "{html}"
    );
    assert!(html.contains("data-testid=\"pin-switch\""), "{html}");
    assert!(html.contains("rollouts skip it"), "{html}");
    assert!(html.contains("action=\"/sfn/cluster-pin\""), "{html}");

    let refused = post_form(
        &browser,
        &app,
        "cluster-pin",
        None,
        &[("id", &id), ("pinned", "maybe")],
    )
    .await;
    assert_eq!(refused.status(), 422);
    let body = refused.text().await.unwrap();
    assert!(body.contains("pinned") && body.contains("maybe"), "{body}");

    let response = post_form(
        &browser,
        &app,
        "cluster-pin",
        Some(&page),
        &[("id", &id), ("pinned", "true")],
    )
    .await;
    assert!(response.status().is_redirection(), "{}", response.status());
    let view: Value = app
        .call(&admin, Method::GET, &format!("/api/v1/clusters/{id}"), None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(view["pinned"], json!(true), "{view}");
    let html = page_html(&browser, app.url(&page)).await;
    assert!(
        html.contains("data-testid=\"pin-state\" data-pinned=\"true\""),
        "{html}"
    );
    assert!(html.contains(">Unpin<"), "{html}");
}

/// The cluster page's healing row (issue 40): the template's policy at first, a button
/// per other choice as a plain form; turning it on is the owner's choice the API then
/// reports, and a word that is not on, off or template is refused by name.
#[tokio::test]
async fn the_cluster_pages_healing_switch_works_without_javascript() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let created = create_cluster(&app, &admin, "mended").await;
    let id = created["cluster"]["id"].as_str().unwrap().to_owned();
    let browser = plain_browser();
    plain_browser_sign_in(&browser, &app, "acme-admin", PASSWORD).await;
    let page = format!("/clusters/{id}");

    let html = page_html(&browser, app.url(&page)).await;
    assert!(
        html.contains("data-testid=\"healing-state\" data-enabled=\"false\""),
        "{html}"
    );
    assert!(
        html.contains("off (the template&#x27;s policy)")
            || html.contains("off (the template's policy)"),
        "{html}"
    );
    assert!(html.contains("action=\"/sfn/cluster-healing\""), "{html}");
    assert!(html.contains("data-choice=\"on\""), "{html}");
    assert!(!html.contains("data-choice=\"template\""), "{html}");

    let refused = post_form(
        &browser,
        &app,
        "cluster-healing",
        None,
        &[("id", &id), ("choice", "sometimes")],
    )
    .await;
    assert_eq!(refused.status(), 422);
    let body = refused.text().await.unwrap();
    assert!(
        body.contains("choice") && body.contains("sometimes"),
        "{body}"
    );

    let response = post_form(
        &browser,
        &app,
        "cluster-healing",
        Some(&page),
        &[("id", &id), ("choice", "on")],
    )
    .await;
    assert!(response.status().is_redirection(), "{}", response.status());
    let view: Value = app
        .call(&admin, Method::GET, &format!("/api/v1/clusters/{id}"), None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        view["healing"],
        json!({"enabled": true, "owner_choice": true}),
        "{view}"
    );
    let html = page_html(&browser, app.url(&page)).await;
    assert!(
        html.contains("data-testid=\"healing-state\" data-enabled=\"true\""),
        "{html}"
    );
    assert!(html.contains("data-choice=\"template\""), "{html}");
    assert!(!html.contains("data-choice=\"on\""), "{html}");
}

/// A real ed25519 public key line made by `ssh-keygen` in `dir`, and its fingerprint.
fn ssh_keygen(dir: &std::path::Path) -> (String, String) {
    let path = dir.join("k");
    let made = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "dana@laptop", "-f"])
        .arg(&path)
        .status()
        .unwrap();
    assert!(made.success());
    let line = std::fs::read_to_string(path.with_extension("pub")).unwrap();
    let listed = std::process::Command::new("ssh-keygen")
        .arg("-lf")
        .arg(path.with_extension("pub"))
        .output()
        .unwrap();
    let listed = String::from_utf8(listed.stdout).unwrap();
    let fingerprint = listed.split_whitespace().nth(1).unwrap().to_owned();
    (line.trim().to_owned(), fingerprint)
}

/// The page a plain browser lands on after a form post answered by a redirect.
async fn follow(browser: &reqwest::Client, app: &TestApp, response: &reqwest::Response) -> String {
    assert!(response.status().is_redirection(), "{}", response.status());
    let back = location(response);
    let url = if back.starts_with('/') {
        app.url(&back)
    } else {
        back
    };
    assert!(url.starts_with(&app.url("/profile")), "{url}");
    page_html(browser, url).await
}

/// The profile page without JavaScript (issue 41): every user sees who they are and
/// their SSH keys; a bad line is refused under the field and keeps nothing; a real
/// key is listed with its fingerprint and the page says which clusters got a
/// sync-keys job (once); the same key twice is refused; Remove takes it off.
#[tokio::test]
async fn the_profile_page_keeps_ssh_keys_without_javascript() {
    let app = spawn_app(Backend::Sqlite).await;
    with_catalog(&app, "acme").await;
    let dana = app.user("dana", Role::User, "acme").await;
    create_cluster(&app, &dana, "keyed").await;
    let browser = plain_browser();
    plain_browser_sign_in(&browser, &app, "dana", PASSWORD).await;

    let html = page_html(&browser, app.url("/clusters")).await;
    assert!(
        html.contains("href=\"/profile\""),
        "the user menu links the profile: {html}"
    );
    let html = page_html(&browser, app.url("/profile")).await;
    assert!(html.contains("<h1>dana</h1>"), "{html}");
    assert!(html.contains("<strong>acme</strong>"), "{html}");
    assert!(html.contains("data-testid=\"no-keys\""), "{html}");
    assert!(html.contains("action=\"/sfn/profile-add-key\""), "{html}");
    assert!(html.contains("cat ~/.ssh/id_ed25519.pub"), "{html}");
    assert!(
        !html.contains("data-testid=\"admin-keys\""),
        "a user sees no admin switch: {html}"
    );

    let refused = post_form(
        &browser,
        &app,
        "profile-add-key",
        Some("/profile"),
        &[("public_key", "hello")],
    )
    .await;
    let html = follow(&browser, &app, &refused).await;
    assert!(
        html.contains("data-field=\"public_key\" class=\"field-error\""),
        "{html}"
    );
    assert!(html.contains("data-testid=\"no-keys\""), "{html}");
    assert!(
        !html.contains("hello"),
        "the pasted text is not repeated: {html}"
    );
    let (_, keys) = app
        .call_json(&dana, Method::GET, "/api/v1/me/keys", None)
        .await;
    assert_eq!(keys, json!([]));

    let dir = tempfile::tempdir().unwrap();
    let (line, fingerprint) = ssh_keygen(dir.path());
    let added = post_form(
        &browser,
        &app,
        "profile-add-key",
        Some("/profile"),
        &[("public_key", &format!("{line}\n"))],
    )
    .await;
    let html = follow(&browser, &app, &added).await;
    assert!(
        html.contains(&format!("data-fingerprint=\"{fingerprint}\"")),
        "{html}"
    );
    assert!(html.contains("dana@laptop"), "{html}");
    assert!(html.contains("ssh-ed25519"), "{html}");
    assert!(html.contains("data-testid=\"key-notice\""), "{html}");
    assert!(
        html.contains(&format!("Key {fingerprint} added.")),
        "{html}"
    );
    assert!(html.contains("data-cluster=\"keyed\""), "{html}");
    assert!(
        html.contains("data-testid=\"sync-job\"") || html.contains("data-testid=\"sync-note\""),
        "{html}"
    );
    let html = page_html(&browser, app.url("/profile")).await;
    assert!(
        !html.contains("data-testid=\"key-notice\""),
        "shown once: {html}"
    );
    assert!(
        html.contains(&format!("data-fingerprint=\"{fingerprint}\"")),
        "{html}"
    );

    let twice = post_form(
        &browser,
        &app,
        "profile-add-key",
        Some("/profile"),
        &[("public_key", &line)],
    )
    .await;
    let html = follow(&browser, &app, &twice).await;
    assert!(
        html.contains("data-field=\"public_key\" class=\"field-error\""),
        "{html}"
    );
    assert_eq!(html.matches("data-testid=\"key-row\"").count(), 1, "{html}");

    let (_, keys) = app
        .call_json(&dana, Method::GET, "/api/v1/me/keys", None)
        .await;
    assert_eq!(keys[0]["fingerprint"], json!(fingerprint), "{keys}");
    let id = keys[0]["id"].as_str().unwrap().to_owned();
    assert!(html.contains(&format!("value=\"{id}\"")), "{html}");
    let removed = post_form(
        &browser,
        &app,
        "profile-remove-key",
        Some("/profile"),
        &[("id", &id)],
    )
    .await;
    let html = follow(&browser, &app, &removed).await;
    assert!(html.contains("data-testid=\"no-keys\""), "{html}");
    assert!(
        html.contains(&format!("Key {fingerprint} removed.")),
        "{html}"
    );
    let (_, keys) = app
        .call_json(&dana, Method::GET, "/api/v1/me/keys", None)
        .await;
    assert_eq!(keys, json!([]));

    // The admins' switch is the admins': a user's post is refused.
    let refused = post_form(
        &browser,
        &app,
        "profile-admin-keys",
        None,
        &[("choice", "on")],
    )
    .await;
    assert_eq!(refused.status(), 403);
}

/// A tenant admin's profile has the switch that puts the admins' keys on every cluster
/// of the tenant: off at first, turned on by a plain form (the API then says so), and a
/// word that is not on or off is refused by name.
#[tokio::test]
async fn the_profile_pages_admin_keys_switch_is_for_tenant_admins() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let browser = plain_browser();
    plain_browser_sign_in(&browser, &app, "acme-admin", PASSWORD).await;

    let html = page_html(&browser, app.url("/profile")).await;
    assert!(html.contains("data-testid=\"admin-keys\""), "{html}");
    assert!(
        html.contains("data-testid=\"admin-keys-state\" data-on=\"false\""),
        "{html}"
    );
    assert!(
        html.contains("action=\"/sfn/profile-admin-keys\""),
        "{html}"
    );

    let refused = post_form(
        &browser,
        &app,
        "profile-admin-keys",
        None,
        &[("choice", "maybe")],
    )
    .await;
    assert_eq!(refused.status(), 422);
    let body = refused.text().await.unwrap();
    assert!(body.contains("choice") && body.contains("maybe"), "{body}");

    let turned = post_form(
        &browser,
        &app,
        "profile-admin-keys",
        Some("/profile"),
        &[("choice", "on")],
    )
    .await;
    let html = follow(&browser, &app, &turned).await;
    assert!(
        html.contains("data-testid=\"admin-keys-state\" data-on=\"true\""),
        "{html}"
    );
    assert!(html.contains("data-testid=\"key-notice\""), "{html}");
    let (status, setting) = app
        .call_json(
            &admin,
            Method::GET,
            &format!("/api/v1/tenants/{}/admin-keys", admin.tenant_id),
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(setting, json!({"admin_keys_on_all_clusters": true}));
}
