//! Template parameters through the API (issue 44, point 1): a bad declaration is
//! refused at import naming the parameter; out-of-range and unknown values are 422
//! naming every bad field with nothing stored; accepted values (text read as the
//! parameter's type) reach a real local node through `%param.NAME%`; reconfigure
//! changes a changeable parameter and refuses the others.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use engine::execute::{Executor, ExecutorSettings, Providers};
use engine::provider::LocalProvider;
use engine::queue::WorkerScope;
use engine::resources::ResourceFiles;
use engine::ssh::{PoolConfig, SessionPool};
use engine::store::users::Role;
use engine::store::Backend;
use engine::worker::{WorkerPool, WorkerSettings};
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{lifecycle_catalog, spawn_app, ApiUser, TestApp};

/// A pool building the test server's clusters on `local` nodes under `nodes`.
async fn pool(app: &TestApp, nodes: &Path) -> WorkerPool {
    let providers = Providers::new().with(Arc::new(LocalProvider::new(nodes).unwrap()));
    let executor = Executor::new(
        app.store.clone(),
        providers,
        Arc::new(SessionPool::new(PoolConfig::default())),
        ResourceFiles::in_directory(nodes.join("resources")),
        ExecutorSettings::default(),
    );
    let pool = WorkerPool::start(
        executor,
        WorkerSettings {
            scope: WorkerScope::Shared,
            idle_poll: Duration::from_millis(50),
            ..WorkerSettings::default()
        },
    );
    pool.ready().await;
    pool
}

async fn json_of(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

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
    let pool = pool(&app, nodes.path()).await;
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
