//! The owner's pin (issue 40): `PUT /clusters/{id}/pin` keeps a cluster on its catalog
//! revision (a rollout lists it and passes it over); the cluster view says so, the
//! tenant's users may pin and unpin, another tenant gets 404, a bad body is named, and
//! each change is audited.

use engine::store::users::Role;
use engine::store::Backend;
use reqwest::Method;
use serde_json::json;

use crate::helpers::{json_of, spawn_app, with_catalog};

async fn the_owner_pins_and_others_cannot(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = with_catalog(&app, "acme").await;
    let owner = app.user("pin-owner", Role::User, "acme").await;
    let stranger = with_catalog(&app, "globex").await;
    let (status, created) = json_of(
        app.call(
            &owner,
            Method::POST,
            "/api/v1/clusters",
            Some(&json!({"name": "pinned", "template": "lifecycle", "size": 2})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let id = created["cluster"]["id"].as_str().unwrap().to_owned();
    let path = format!("/api/v1/clusters/{id}/pin");
    let pinned = |who| {
        let (app, path) = (&app, format!("/api/v1/clusters/{id}"));
        async move {
            json_of(app.call(who, Method::GET, &path, None).await)
                .await
                .1["pinned"]
                .clone()
        }
    };
    assert_eq!(pinned(&owner).await, json!(false));

    let (status, view) = json_of(
        app.call(&owner, Method::PUT, &path, Some(&json!({"pinned": true})))
            .await,
    )
    .await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view, json!({"pinned": true}));
    assert_eq!(pinned(&owner).await, json!(true));
    // By name too, and a tenant admin may unpin.
    let (status, view) = json_of(
        app.call(
            &admin,
            Method::PUT,
            "/api/v1/clusters/pinned/pin",
            Some(&json!({"pinned": false})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view, json!({"pinned": false}));

    let (status, body) = json_of(
        app.call(
            &stranger,
            Method::PUT,
            &path,
            Some(&json!({"pinned": true})),
        )
        .await,
    )
    .await;
    assert_eq!(status, 404, "{body}");
    for bad in [
        json!({"pinned": "yes"}),
        json!({}),
        json!({"pinned": true, "x": 1}),
    ] {
        let (status, body) = json_of(app.call(&owner, Method::PUT, &path, Some(&bad)).await).await;
        assert_eq!(status, 422, "{bad}: {body}");
        let message = body["message"].as_str().unwrap();
        assert!(
            message.contains("pinned") || message.contains("`x`"),
            "{body}"
        );
    }
    // Nothing the refusals asked for happened.
    assert_eq!(pinned(&owner).await, json!(false));

    let (_, audit) = json_of(
        app.call(
            &admin,
            Method::GET,
            "/api/v1/audit?action=cluster.pin",
            None,
        )
        .await,
    )
    .await;
    // Newest first: unpinned by the admin, pinned by the owner.
    let changes: Vec<(String, String)> = audit
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| (entry["actor"].to_string(), entry["after"].to_string()))
        .collect();
    assert_eq!(changes.len(), 2, "{audit}");
    assert!(
        changes[0].0.contains("acme-admin") && changes[0].1.contains("unpinned"),
        "{audit}"
    );
    assert!(
        changes[1].0.contains("pin-owner") && changes[1].1.contains("\"pinned\""),
        "{audit}"
    );
}

engine::on_both_backends!(the_owner_pins_and_others_cannot);
