//! Cost and budgets through the API (issue 44 point 4, docs/cost.md), on SQLite and
//! PostgreSQL: prices are validated on import (422 naming the field), the create
//! preview and the change plan carry the estimate (the provider mapping's price over
//! the type's), a `cost-above` rule holds a create, a tenant budget refuses (409,
//! naming the budget; tenant admins too) or holds for approval, budgets are set by
//! tenant admins only; a built cluster's cost so far is in its view and list, and
//! showback sums it per user and template (JSON and CSV) for its own tenant's admins
//! only.

use engine::store::users::Role;
use engine::store::Backend;
use reqwest::Method;
use serde_json::{json, Value};

use crate::approvals::{plain_catalog, succeeded};
use crate::helpers::local_pool;
use crate::helpers::{spawn_app, ApiUser, TestApp};

/// The plain catalog with `small` priced at 0.5 per hour, 0.25 on `local`.
fn priced_catalog() -> Value {
    let mut catalog = plain_catalog();
    let small = &mut catalog["hardwaretypes"][0];
    small["price_per_hour"] = json!(0.5);
    small["providermap"]["local"]["price_per_hour"] = json!(0.25);
    catalog
}

async fn import(app: &TestApp, admin: &ApiUser, catalog: Value) -> (u16, Value) {
    app.call_json(admin, Method::POST, "/api/v1/catalog/import", Some(catalog))
        .await
}

async fn create(app: &TestApp, user: &ApiUser, name: &str, size: u32) -> (u16, Value) {
    app.call_json(
        user,
        Method::POST,
        "/api/v1/clusters",
        Some(json!({"name": name, "template": "plain", "size": size})),
    )
    .await
}

async fn set_budget(app: &TestApp, user: &ApiUser, body: Value) -> (u16, Value) {
    app.call_json(user, Method::PUT, "/api/v1/budget", Some(body))
        .await
}

async fn prices_are_checked_and_previews_show_the_estimate(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = app.user("price-admin", Role::TenantAdmin, "price").await;
    for (bad, path) in [
        (
            json!({"price_per_hour": -1}),
            "hardwaretypes.small.price_per_hour",
        ),
        (
            json!({"providermap": {"local": {"flavor": "local-small", "price_per_hour": "cheap"}}}),
            "hardwaretypes.small.providermap.local.price_per_hour",
        ),
    ] {
        let mut catalog = plain_catalog();
        for (key, value) in bad.as_object().unwrap() {
            catalog["hardwaretypes"][0][key] = value.clone();
        }
        let (status, body) = import(&app, &admin, catalog).await;
        assert_eq!(status, 422, "{body}");
        assert!(body.to_string().contains(path), "{body}");
    }
    // Nothing priced: the preview says so (no node priced) rather than a price.
    let (status, _) = import(&app, &admin, plain_catalog()).await;
    assert_eq!(status, 200);
    let user = app.user("price-user", Role::User, "price").await;
    let (status, plan) = app
        .call_json(
            &user,
            Method::POST,
            "/api/v1/clusters?dry_run=true",
            Some(json!({"name": "p", "template": "plain", "size": 2})),
        )
        .await;
    assert_eq!(status, 200, "{plan}");
    assert_eq!(plan["cost"]["priced_nodes"], 0, "{plan}");
    assert_eq!(plan["cost"]["unpriced_nodes"], 2, "{plan}");

    // Priced: the local mapping's 0.25 wins over the type's 0.5.
    let (status, _) = import(&app, &admin, priced_catalog()).await;
    assert_eq!(status, 200);
    let (status, plan) = app
        .call_json(
            &user,
            Method::POST,
            "/api/v1/clusters?dry_run=true",
            Some(json!({"name": "p", "template": "plain", "size": 2})),
        )
        .await;
    assert_eq!(status, 200, "{plan}");
    assert_eq!(plan["cost"]["per_hour"], 0.5, "{plan}");
    assert_eq!(plan["cost"]["per_month"], 365.0, "{plan}");
    assert_eq!(plan["cost"]["priced_nodes"], 2, "{plan}");
    assert!(plan["cost"].get("change_per_hour").is_none(), "{plan}");
}

async fn cost_rules_and_budgets_refuse_or_hold(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = app.user("budget-admin", Role::TenantAdmin, "budget").await;
    let (status, _) = import(&app, &admin, priced_catalog()).await;
    assert_eq!(status, 200);
    let user = app.user("budget-user", Role::User, "budget").await;

    // Budgets are the tenant admins'; bad values are named.
    let (status, _) = set_budget(&app, &user, json!({"monthly_budget": 10})).await;
    assert_eq!(status, 403);
    let (status, _) = app
        .call_json(&user, Method::GET, "/api/v1/budget", None)
        .await;
    assert_eq!(status, 403);
    for (body, field) in [
        (json!({"monthly_budget": -5}), "monthly_budget"),
        (
            json!({"monthly_budget": 5, "budget_action": "maybe"}),
            "budget_action",
        ),
        (json!({"budget_action": "approval"}), "budget_action"),
    ] {
        let (status, error) = set_budget(&app, &admin, body.clone()).await;
        assert_eq!(status, 422, "{body}: {error}");
        assert!(
            error["message"].as_str().unwrap().starts_with(field),
            "{error}"
        );
    }

    // A budget of 0.01 a month: any priced create takes the month over it (0.5 per
    // hour for the rest of the month), refused naming the budget, admins included.
    let (status, budget) = set_budget(&app, &admin, json!({"monthly_budget": 0.01})).await;
    assert_eq!(status, 200, "{budget}");
    assert_eq!(budget["monthly_budget"], 0.01);
    assert_eq!(budget["budget_action"], "refuse");
    for who in [&user, &admin] {
        let (status, refused) = create(&app, who, "over", 2).await;
        assert_eq!(status, 409, "{refused}");
        let message = refused["message"].as_str().unwrap();
        assert!(
            message.contains("monthly budget is 0.01") && message.contains("adds 365.00 per month"),
            "{message}"
        );
    }
    let (status, listed) = app
        .call_json(&user, Method::GET, "/api/v1/clusters", None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(listed["total"], 0, "nothing was made: {listed}");

    // The same budget with `approval`: the user's create waits, naming the budget.
    let (status, _) = set_budget(
        &app,
        &admin,
        json!({"monthly_budget": 0.01, "budget_action": "approval"}),
    )
    .await;
    assert_eq!(status, 200);
    let (status, held) = create(&app, &user, "held", 2).await;
    assert_eq!(status, 201, "{held}");
    assert_eq!(held["cluster"]["state"], "awaiting-approval");
    assert_eq!(held["job_id"], "");
    let rule = held["approval"]["rule"].as_str().unwrap();
    assert!(
        rule.contains("over budget") && rule.contains("0.01"),
        "{rule}"
    );

    // No budget; a rule on the estimate: 2 nodes (365 a month) is above 100.
    let (status, budget) = set_budget(&app, &admin, json!({"monthly_budget": null})).await;
    assert_eq!(status, 200);
    assert_eq!(budget["monthly_budget"], Value::Null);
    let (status, error) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/approval-rules",
            Some(json!({"kind": "cost-above", "value": "lots"})),
        )
        .await;
    assert_eq!(status, 422, "{error}");
    assert!(error["message"].as_str().unwrap().contains("cost-above"));
    let (status, rule) = app
        .call_json(
            &admin,
            Method::POST,
            "/api/v1/approval-rules",
            Some(json!({"kind": "cost-above", "value": "100"})),
        )
        .await;
    assert_eq!(status, 201, "{rule}");
    assert_eq!(rule["description"], "estimated cost above 100.00 per month");
    let (status, held) = create(&app, &user, "costly", 2).await;
    assert_eq!(status, 201, "{held}");
    assert_eq!(
        held["approval"]["rule"],
        "estimated cost above 100.00 per month"
    );
}

async fn cost_so_far_and_showback_per_tenant(backend: Backend) {
    let app = spawn_app(backend).await;
    let admin = app.user("show-admin", Role::TenantAdmin, "show").await;
    let (status, _) = import(&app, &admin, priced_catalog()).await;
    assert_eq!(status, 200);
    let user = app.user("show-user", Role::User, "show").await;
    let other_admin = app.user("other-admin", Role::TenantAdmin, "other").await;
    let nodes = tempfile::tempdir().unwrap();
    let _pool = local_pool(&app, nodes.path()).await;
    // A budget it fits in: the check runs and lets it through.
    let (status, _) = set_budget(&app, &admin, json!({"monthly_budget": 100000})).await;
    assert_eq!(status, 200);
    let (status, created) = create(&app, &user, "billed", 2).await;
    assert_eq!(status, 201, "{created}");
    let id = created["cluster"]["id"].as_str().unwrap().to_owned();
    succeeded(&app, &user, created["job_id"].as_str().unwrap()).await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;

    let (_, detail) = app
        .call_json(&user, Method::GET, &format!("/api/v1/clusters/{id}"), None)
        .await;
    assert_eq!(detail["cost"]["per_hour"], 0.5, "{detail}");
    assert!(detail["cost"]["so_far"].as_f64().unwrap() > 0.0, "{detail}");
    let (_, listed) = app
        .call_json(&user, Method::GET, "/api/v1/clusters", None)
        .await;
    assert_eq!(listed["items"][0]["cost"]["per_hour"], 0.5, "{listed}");
    // The growth plan shows the change it makes.
    let (status, plan) = app
        .call_json(
            &user,
            Method::POST,
            &format!("/api/v1/clusters/{id}/plan"),
            Some(json!({"operation": "add-nodes", "count": 2})),
        )
        .await;
    assert_eq!(status, 200, "{plan}");
    assert_eq!(plan["cost"]["per_hour"], 1.0, "{plan}");
    assert_eq!(plan["cost"]["change_per_hour"], 0.5, "{plan}");
    assert_eq!(plan["cost"]["change_per_month"], 365.0, "{plan}");
    let (_, budget) = app
        .call_json(&admin, Method::GET, "/api/v1/budget", None)
        .await;
    assert_eq!(budget["per_hour"], 0.5, "{budget}");

    // Showback: the tenant's admin sees the user and the template.
    let (status, shown) = app
        .call_json(&admin, Method::GET, "/api/v1/showback", None)
        .await;
    assert_eq!(status, 200, "{shown}");
    assert_eq!(shown["per_user"][0]["name"], "show-user", "{shown}");
    assert_eq!(shown["per_template"][0]["name"], "plain", "{shown}");
    assert!(shown["total"].as_f64().unwrap() > 0.0, "{shown}");
    let month = shown["month"].as_str().unwrap().to_owned();
    let csv = app
        .call(
            &admin,
            Method::GET,
            &format!("/api/v1/showback?month={month}&format=csv"),
            None,
        )
        .await;
    assert_eq!(csv.status(), 200);
    assert!(csv.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/csv"));
    let text = csv.text().await.unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("month,by,name,cost"));
    assert!(text.contains(&format!("{month},user,show-user,")), "{text}");
    assert!(text.contains(&format!("{month},template,plain,")), "{text}");

    // Another tenant's admin sees none of it; a plain user may not look; bad input is
    // named.
    let (status, theirs) = app
        .call_json(&other_admin, Method::GET, "/api/v1/showback", None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(theirs["per_user"], json!([]), "{theirs}");
    assert_eq!(theirs["total"], 0.0);
    let (status, _) = app
        .call_json(&user, Method::GET, "/api/v1/showback", None)
        .await;
    assert_eq!(status, 403);
    for bad in ["?month=2026-13", "?format=xml"] {
        let (status, error) = app
            .call_json(&admin, Method::GET, &format!("/api/v1/showback{bad}"), None)
            .await;
        assert_eq!(status, 422, "{bad}: {error}");
    }
    // A month with nothing in it.
    let (_, empty) = app
        .call_json(&admin, Method::GET, "/api/v1/showback?month=2001-01", None)
        .await;
    assert_eq!(empty["per_template"], json!([]), "{empty}");
}

engine::on_both_backends!(
    prices_are_checked_and_previews_show_the_estimate,
    cost_rules_and_budgets_refuse_or_hold,
    cost_so_far_and_showback_per_tenant,
);
