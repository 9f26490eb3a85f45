//! Rollouts of a template's new catalog revision (issue 40) over the API: a dry run
//! lists each cluster that is behind with its plan summary and whether it is pinned,
//! and writes nothing; a rollout is one record with a row per cluster (pinned ones
//! passed over); only tenant admins start one; bad input is named; another tenant's
//! rollout is 404.

use engine::store::users::Role;
use engine::store::Backend;
use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{lifecycle_catalog, spawn_app, with_catalog, ApiUser, TestApp};

const ROLLOUTS: &str = "/api/v1/catalog/rollouts";

async fn create(app: &TestApp, who: &ApiUser, name: &str) -> String {
    let (status, created) = app
        .call_json(
            who,
            Method::POST,
            "/api/v1/clusters",
            Some(json!({"name": name, "template": "lifecycle", "size": 2})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    created["cluster"]["id"].as_str().unwrap().to_owned()
}

async fn a_rollout_lists_pins_and_records_its_clusters(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = with_catalog(&app, "acme").await;
    let owner = app.user("rollout-owner", Role::User, "acme").await;
    let stranger = with_catalog(&app, "globex").await;
    let first = create(&app, &owner, "first").await;
    let second = create(&app, &owner, "second").await;

    let dry = |template: &str| json!({"template": template, "dry_run": true});
    // Nothing is behind yet: a dry run says so, a rollout is refused with the reason.
    let (status, listing) = app
        .call_json(&admin, Method::POST, ROLLOUTS, Some(dry("lifecycle")))
        .await;
    assert_eq!(status, 200, "{listing}");
    assert_eq!(listing["clusters"], json!([]), "{listing}");
    let (status, body) = app
        .call_json(
            &admin,
            Method::POST,
            ROLLOUTS,
            Some(json!({"template": "lifecycle"})),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("nothing to roll out"),
        "{body}"
    );

    // Bad input, each named.
    let (status, body) = app
        .call_json(&admin, Method::POST, ROLLOUTS, Some(dry("no-such")))
        .await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("no-such"),
        "{body}"
    );
    let (status, body) = app
        .call_json(
            &admin,
            Method::POST,
            ROLLOUTS,
            Some(json!({"template": "lifecycle", "max_parallel": 0})),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("max_parallel"),
        "{body}"
    );
    let (status, body) = app
        .call_json(&admin, Method::POST, ROLLOUTS, Some(json!({"template": 3})))
        .await;
    assert_eq!(status, 422, "{body}");
    // Only tenant admins start rollouts.
    let (status, body) = app
        .call_json(&owner, Method::POST, ROLLOUTS, Some(dry("lifecycle")))
        .await;
    assert_eq!(status, 403, "{body}");

    // The admin changes the worker service: both clusters are behind.
    let changed = lifecycle_catalog()
        .to_string()
        .replace("echo worker started", "echo worker started again");
    let changed: Value = serde_json::from_str(&changed).unwrap();
    let (status, body) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/catalog/import",
            Some(changed),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, _) = app
        .call_json(
            &owner,
            Method::PUT,
            &format!("/api/v1/clusters/{second}/pin"),
            Some(json!({"pinned": true})),
        )
        .await;
    assert_eq!(status, 200);

    let (status, listing) = app
        .call_json(&admin, Method::POST, ROLLOUTS, Some(dry("lifecycle")))
        .await;
    assert_eq!(status, 200, "{listing}");
    assert!(listing.get("rollout").is_none(), "{listing}");
    let listed: Vec<(String, bool)> = listing["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["cluster_name"].as_str().unwrap().to_owned(),
                c["pinned"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        vec![("first".to_owned(), false), ("second".to_owned(), true)],
        "{listing}"
    );
    let summary = listing["clusters"][0]["summary"].as_str().unwrap();
    assert!(summary.contains("worker changed"), "{summary}");
    // A dry run writes nothing.
    let (status, rollouts) = app.call_json(&admin, Method::GET, ROLLOUTS, None).await;
    assert_eq!((status, rollouts), (200, json!([])));

    let (status, started) = app
        .call_json(
            &admin,
            Method::POST,
            ROLLOUTS,
            Some(json!({"template": "lifecycle", "max_parallel": 2})),
        )
        .await;
    assert_eq!(status, 201, "{started}");
    let rollout = &started["rollout"];
    let id = rollout["id"].as_str().unwrap().to_owned();
    assert_eq!(rollout["max_parallel"], json!(2));
    assert_eq!(rollout["created_by"], json!("acme-admin"));
    let rows: Vec<(String, String)> = rollout["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["cluster_id"].as_str().unwrap().to_owned(),
                c["state"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(rows.len(), 2, "{rollout}");
    assert_eq!(rows[0].0, first);
    assert!(
        ["pending", "running", "failed", "succeeded"].contains(&rows[0].1.as_str()),
        "{rollout}"
    );
    assert_eq!(
        rows[1],
        (second.clone(), "skipped-pinned".to_owned()),
        "{rollout}"
    );

    // One rollout of a template at a time (no worker pool runs here: it is running).
    let (status, body) = app
        .call_json(
            &admin,
            Method::POST,
            ROLLOUTS,
            Some(json!({"template": "lifecycle"})),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    assert!(body["message"].as_str().unwrap().contains(&id), "{body}");
    let (status, shown) = app
        .call_json(&owner, Method::GET, &format!("{ROLLOUTS}/{id}"), None)
        .await;
    assert_eq!(status, 200, "{shown}");
    assert_eq!(shown["id"], json!(id));
    let (status, listed) = app.call_json(&owner, Method::GET, ROLLOUTS, None).await;
    assert_eq!(status, 200);
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    // Another tenant sees none of it.
    let (status, body) = app
        .call_json(&stranger, Method::GET, &format!("{ROLLOUTS}/{id}"), None)
        .await;
    assert_eq!(status, 404, "{body}");
    let (_, listed) = app.call_json(&stranger, Method::GET, ROLLOUTS, None).await;
    assert_eq!(listed, json!([]));

    let (_, audit) = app
        .call_json(
            &admin,
            Method::GET,
            "/api/v1/audit?action=catalog.rollout",
            None,
        )
        .await;
    assert_eq!(audit.as_array().unwrap().len(), 1, "{audit}");
}

engine::on_both_backends!(a_rollout_lists_pins_and_records_its_clusters);
