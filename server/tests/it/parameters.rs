//! Template parameters through the API (issue 44, point 1): a bad declaration is
//! refused at import naming the parameter; out-of-range and unknown values are 422
//! naming every bad field with nothing stored; accepted values (text read as the
//! parameter's type) reach a real local node through `%param.NAME%`; reconfigure
//! changes a changeable parameter and refuses the others.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use engine::store::users::Role;
use engine::store::Backend;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{json_of, lifecycle_catalog, local_pool, spawn_app, ApiUser, TestApp};

/// The lifecycle catalog plus template `tuned`, whose one service writes its
/// parameters, read through macros, into `out` (a directory the node user may write).
fn tuned_catalog(out: &Path, parameters: Value) -> Value {
    let mut catalog = lifecycle_catalog();
    let run = format!(
        "echo %param.shards% %param.tier% %param.tls% > {}/values-$CORRAL_HOST",
        out.display()
    );
    catalog["services"].as_array_mut().unwrap().push(json!({
        "name": "tuned",
        "dependencies": {},
        "provisioner": {"actions": {
            "install": {"type": "shell", "fields": {"run": run}}
        }}
    }));
    catalog["clustertemplates"]
        .as_array_mut()
        .unwrap()
        .push(json!({
            "name": "tuned",
            "compatibility": {"services": ["tuned"]},
            "defaults": {"services": ["tuned"], "provider": "local", "hardwaretype": "small",
                         "imagetype": "debian", "config": {}},
            "parameters": parameters,
        }));
    catalog
}

fn tuned_parameters() -> Value {
    json!({
        "shards": {"type": "integer", "minimum": 1, "maximum": 5, "default": 1, "label": "Shards"},
        "tier": {"type": "choice", "choices": ["small", "large"], "default": "small"},
        "tls": {"type": "boolean", "default": false, "changeable": true}
    })
}

async fn import(app: &TestApp, admin: &ApiUser, catalog: &Value) -> (u16, Value) {
    json_of(
        app.call(admin, Method::POST, "/api/v1/catalog/import", Some(catalog))
            .await,
    )
    .await
}

async fn live_clusters(app: &TestApp, user: &ApiUser) -> u64 {
    let (_, page) = json_of(app.call(user, Method::GET, "/api/v1/clusters", None).await).await;
    page["total"].as_u64().unwrap()
}

/// Waits (at most 3 minutes) for the cluster's newest job to end; returns the cluster.
async fn settled(app: &TestApp, user: &ApiUser, id: &str) -> Value {
    for _ in 0..1800 {
        let (_, shown) = json_of(
            app.call(user, Method::GET, &format!("/api/v1/clusters/{id}"), None)
                .await,
        )
        .await;
        match shown["state"].as_str() {
            Some("active") => return shown,
            Some("failed") => panic!("the cluster failed: {shown}"),
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    panic!("cluster {id} did not settle in 3 minutes");
}

/// Waits (at most 3 minutes) for a job to succeed.
async fn succeeded(app: &TestApp, user: &ApiUser, job_id: &str) {
    for _ in 0..1800 {
        let (_, job) = json_of(
            app.call(user, Method::GET, &format!("/api/v1/jobs/{job_id}"), None)
                .await,
        )
        .await;
        match job["state"].as_str() {
            Some("succeeded") => return,
            Some("failed" | "cancelled") => panic!("job {job_id} ended: {job}"),
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    panic!("job {job_id} did not end in 3 minutes");
}

#[tokio::test]
async fn a_bad_declaration_is_refused_at_import_naming_the_parameter() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = app.user("acme-admin", Role::TenantAdmin, "acme").await;
    let out = tempfile::tempdir().unwrap();
    let mut parameters = tuned_parameters();
    parameters["shards"]["default"] = json!(9);
    parameters["version"] = json!({"type": "string", "pattern": "[0-9"});
    let (status, body) = import(&app, &admin, &tuned_catalog(out.path(), parameters)).await;
    assert_eq!(status, 422, "{body}");
    let paths: Vec<&str> = body["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|problem| problem["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "clustertemplates.tuned.parameters.shards",
            "clustertemplates.tuned.parameters.version"
        ],
        "{body}"
    );
    assert!(
        body["details"][0]["message"]
            .as_str()
            .unwrap()
            .contains("9 is above the maximum 5"),
        "{body}"
    );
    // Nothing of the refused catalog was stored.
    let (_, templates) = json_of(
        app.call(
            &admin,
            Method::GET,
            "/api/v1/catalog/clustertemplates",
            None,
        )
        .await,
    )
    .await;
    assert!(!templates.to_string().contains("tuned"), "{templates}");
}

#[tokio::test(flavor = "multi_thread")]
async fn parameters_are_checked_reach_the_node_and_only_changeable_ones_change() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = app.user("acme-admin", Role::TenantAdmin, "acme").await;
    let out = tempfile::tempdir().unwrap();
    // The node's steps run as an unprivileged user of the tenant when tests run as root.
    std::fs::set_permissions(out.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let (status, body) = import(&app, &admin, &tuned_catalog(out.path(), tuned_parameters())).await;
    assert_eq!(status, 200, "{body}");

    // Out of range, not a choice, unknown: 422 naming every field, nothing stored.
    let (status, body) = json_of(
        app.call(
            &admin,
            Method::POST,
            "/api/v1/clusters",
            Some(&json!({"name": "t1", "template": "tuned", "size": 1,
                         "parameters": {"shards": 9, "tier": "huge", "colour": "red"}})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 422, "{body}");
    let details: Vec<(String, String)> = body["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|problem| {
            (
                problem["path"].as_str().unwrap().to_owned(),
                problem["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        details,
        [
            (
                "parameters.colour".to_owned(),
                "the template has no such parameter".to_owned()
            ),
            (
                "parameters.shards".to_owned(),
                "9 is above the maximum 5".to_owned()
            ),
            (
                "parameters.tier".to_owned(),
                "\"huge\" is not one of the choices (small, large)".to_owned()
            ),
        ],
        "{body}"
    );
    assert_eq!(
        live_clusters(&app, &admin).await,
        0,
        "a refusal stores nothing"
    );
    // The dry run refuses the same way.
    let (status, _) = json_of(
        app.call(
            &admin,
            Method::POST,
            "/api/v1/clusters?dry_run=true",
            Some(&json!({"name": "t1", "template": "tuned", "size": 1,
                         "parameters": {"shards": 0}})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 422);

    // Accepted values, given as text as a form or `--param` sends them, reach the node.
    let nodes = tempfile::tempdir().unwrap();
    let pool = local_pool(&app, nodes.path()).await;
    let (status, created) = json_of(
        app.call(
            &admin,
            Method::POST,
            "/api/v1/clusters",
            Some(&json!({"name": "t1", "template": "tuned", "size": 1,
                         "parameters": {"shards": "3", "tier": "large"}})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["cluster"]["id"].as_str().unwrap().to_owned();
    let shown = settled(&app, &admin, &id).await;
    assert_eq!(
        shown["config"]["parameters"],
        json!({"shards": 3, "tier": "large", "tls": false}),
        "typed values and the default are kept in the config"
    );
    let written: Vec<String> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap())
        .collect();
    assert_eq!(written, ["3 large false\n"]);

    // Reconfigure: a changeable parameter changes (and is checked), others are refused.
    let change = |parameters: Value| json!({"operation": "reconfigure", "config": {"parameters": parameters}});
    let path = format!("/api/v1/clusters/{id}/changes");
    let (status, body) = json_of(
        app.call(
            &admin,
            Method::POST,
            &path,
            Some(&change(json!({"shards": 4, "tls": "maybe"}))),
        )
        .await,
    )
    .await;
    assert_eq!(status, 422, "{body}");
    let paths: Vec<&str> = body["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|problem| problem["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        ["parameters.tls"],
        "a bad value is reported first: {body}"
    );
    let (status, body) = json_of(
        app.call(
            &admin,
            Method::POST,
            &path,
            Some(&change(json!({"shards": 4}))),
        )
        .await,
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["details"][0]["path"], "parameters.shards", "{body}");
    assert!(
        body["details"][0]["message"]
            .as_str()
            .unwrap()
            .contains("not changeable"),
        "{body}"
    );
    let (status, body) = json_of(
        app.call(
            &admin,
            Method::POST,
            &path,
            Some(&change(json!({"tls": true}))),
        )
        .await,
    )
    .await;
    assert_eq!(status, 202, "{body}");
    succeeded(&app, &admin, body["job_id"].as_str().unwrap()).await;
    let shown = settled(&app, &admin, &id).await;
    assert_eq!(
        shown["config"]["parameters"],
        json!({"shards": 3, "tier": "large", "tls": true})
    );
    pool.shutdown().await;
}

/// The portal's New cluster form without JavaScript: the template's parameters are
/// fields of their types, rendered on the server from the query, with an out-of-range
/// value marked at its field; the form's create post carries the values to the same
/// check and into the cluster's config.
#[tokio::test]
async fn the_create_form_shows_parameters_as_fields_with_their_errors() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = app.user("acme-admin", Role::TenantAdmin, "acme").await;
    let out = tempfile::tempdir().unwrap();
    let mut parameters = tuned_parameters();
    parameters["version"] =
        json!({"type": "string", "pattern": "[0-9]+", "description": "the release"});
    let (status, body) = import(&app, &admin, &tuned_catalog(out.path(), parameters)).await;
    assert_eq!(status, 200, "{body}");
    let (browser, csrf) = app.browser("acme-admin").await;
    let page = |query: &'static str| {
        let browser = browser.clone();
        let url = app.url(&format!(
            "/clusters/new?template=tuned&name=t&size=1{query}"
        ));
        async move { browser.get(url).send().await.unwrap().text().await.unwrap() }
    };

    let html = page("").await;
    let field = |name: &str| {
        let start = html
            .find(&format!("data-parameter=\"{name}\""))
            .unwrap_or_else(|| panic!("no field for {name} in {html}"));
        let rest = &html[start..];
        rest[..rest.find("</div>").unwrap()].to_owned()
    };
    let shards = field("shards");
    assert!(
        shards.contains("<label for=\"param-shards\">Shards</label>")
            && shards.contains("type=\"number\"")
            && shards.contains("min=\"1\"")
            && shards.contains("max=\"5\"")
            && shards.contains("value=\"1\""),
        "a number box with its bounds and default: {shards}"
    );
    let tier = field("tier");
    assert!(
        tier.contains("<select id=\"param-tier\" name=\"param.tier\"")
            && tier.contains("<option value=\"large\""),
        "a select of the choices: {tier}"
    );
    let tls = field("tls");
    assert!(
        tls.contains("type=\"checkbox\"") && !tls.contains("checked"),
        "an unticked checkbox (default false): {tls}"
    );
    let version = field("version");
    assert!(
        version.contains("pattern=\"[0-9]+\"") && version.contains("the release"),
        "a text box with its pattern and description: {version}"
    );
    assert!(!html.contains("field-error"), "no errors yet: {html}");

    // Out of range and not matching: each marked at its field; the preview says why.
    let html = page("&param.shards=9&param.tls=true&param.version=v2").await;
    let error_at = |field: &str| {
        html.split(&format!(
            "data-field=\"parameters.{field}\" class=\"field-error\">"
        ))
        .nth(1)
        .and_then(|rest| rest.split("</p>").next())
        .unwrap_or_else(|| panic!("no error at {field}: {html}"))
        .to_owned()
    };
    assert_eq!(error_at("shards"), "9 is above the maximum 5");
    assert_eq!(
        error_at("version"),
        "\"v2\" does not match the pattern [0-9]+"
    );
    assert!(!html.contains("data-field=\"parameters.tier\""), "{html}");
    assert!(html.contains("shards: 9 is above the maximum 5"), "{html}");
    assert!(html.contains("data-testid=\"unsatisfiable\""), "{html}");
    assert!(
        html.contains("checked"),
        "the ticked checkbox stays ticked: {html}"
    );

    // The form's create post: a bad value is refused naming the field, nothing stored;
    // good ones are typed and kept.
    let post = |shards: &'static str| {
        browser
            .post(app.url("/sfn/create-cluster"))
            .header(reqwest::header::ACCEPT, "application/json")
            .form(&[
                ("csrf", csrf.as_str()),
                ("form[name]", "t"),
                ("form[template]", "tuned"),
                ("form[size]", "1"),
                ("form[parameters][shards]", shards),
                ("form[parameters][tls]", "true"),
            ])
            .send()
    };
    let response = post("0").await.unwrap();
    assert_eq!(response.status(), 422);
    let body = response.text().await.unwrap();
    assert!(
        body.contains("parameters.shards") && body.contains("0 is below the minimum 1"),
        "{body}"
    );
    assert_eq!(live_clusters(&app, &admin).await, 0);
    let response = post("2").await.unwrap();
    assert!(
        response.status().is_success(),
        "{}",
        response.text().await.unwrap()
    );
    let (_, list) = json_of(
        app.call(&admin, Method::GET, "/api/v1/clusters", None)
            .await,
    )
    .await;
    assert_eq!(
        list["items"][0]["config"]["parameters"],
        json!({"shards": 2, "tier": "small", "tls": true})
    );
}
