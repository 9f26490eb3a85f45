//! The owner's healing switch (issue 40): `PUT /clusters/{id}/healing` turns healing on
//! or off for one cluster or back to its template's policy, the cluster view says which
//! applies (the tenant's clusters are its users' to change, as every change is),
//! another tenant gets 404, a bad body is named, and each change is audited.

use engine::store::users::Role;
use engine::store::Backend;
use reqwest::Method;
use serde_json::json;

use crate::helpers::{json_of, spawn_app, with_catalog};

#[tokio::test]
async fn the_owner_switches_healing_and_others_cannot() {
    let app = spawn_app(Backend::Sqlite).await;
    let admin = with_catalog(&app, "acme").await;
    let owner = app.user("healing-owner", Role::User, "acme").await;
    let stranger = with_catalog(&app, "globex").await;
    let (status, created) = json_of(
        app.call(
            &owner,
            Method::POST,
            "/api/v1/clusters",
            Some(&json!({"name": "healed", "template": "lifecycle", "size": 2})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["cluster"]["id"].as_str().unwrap().to_owned();
    let path = format!("/api/v1/clusters/{id}/healing");
    let detail = |who| {
        let (app, path) = (&app, format!("/api/v1/clusters/{id}"));
        async move {
            json_of(app.call(who, Method::GET, &path, None).await)
                .await
                .1
        }
    };
    // The lifecycle template says nothing: off, decided by the template.
    assert_eq!(detail(&owner).await["healing"], json!({"enabled": false}));

    let (status, view) = json_of(
        app.call(&owner, Method::PUT, &path, Some(&json!({"enabled": true})))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view, json!({"enabled": true, "owner_choice": true}));
    assert_eq!(
        detail(&owner).await["healing"],
        json!({"enabled": true, "owner_choice": true})
    );
    // A tenant admin may too; back to the template's policy.
    let (status, view) = json_of(
        app.call(&admin, Method::PUT, &path, Some(&json!({"enabled": null})))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view, json!({"enabled": false}));

    let (status, body) = json_of(
        app.call(
            &stranger,
            Method::PUT,
            &path,
            Some(&json!({"enabled": true})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = json_of(
        app.call(&owner, Method::PUT, &path, Some(&json!({"enabled": "yes"})))
            .await,
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("enabled"),
        "{body}"
    );
    // Nothing the refusals asked for happened.
    assert_eq!(detail(&owner).await["healing"], json!({"enabled": false}));

    let (_, audit) = json_of(
        app.call(
            &admin,
            Method::GET,
            "/api/v1/audit?action=cluster.healing",
            None,
        )
        .await,
    )
    .await;
    // Newest first: back to the template (by the admin), then on (by the owner).
    let changes: Vec<(String, String)> = audit
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| (entry["actor"].to_string(), entry["after"].to_string()))
        .collect();
    assert_eq!(changes.len(), 2, "{audit}");
    assert!(
        changes[0].0.contains("acme-admin") && changes[0].1.contains("template"),
        "{audit}"
    );
    assert!(
        changes[1].0.contains("healing-owner") && changes[1].1.contains("on"),
        "{audit}"
    );
}
