//! `/healthz` and `/readyz` on both backends.

use engine::store::{Backend, Store};
use engine::testing::TestDatabase;
use serde_json::Value;

use crate::helpers::{spawn_app, spawn_with_store};

async fn healthz_answers(backend: Backend) {
    let app = spawn_app(backend).await;
    let response = app.get("/healthz").await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["status"], "ok");
}

async fn readyz_is_ready_when_migrated(backend: Backend) {
    let app = spawn_app(backend).await;
    let response = app.get("/readyz").await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["status"], "ready");
    assert_eq!(body["database"], backend.as_str());
    assert_eq!(body["migrations"]["applied"], body["migrations"]["known"]);
}

async fn readyz_refuses_before_migrations(backend: Backend) {
    let db = TestDatabase::new(backend).await;
    let store = Store::connect(&db.url).await.unwrap();
    let app = spawn_with_store(db, store).await;
    let response = app.get("/readyz").await;
    assert_eq!(response.status(), 503);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["reason"], "migrations pending");
    assert_eq!(body["migrations"]["applied"], 0);
}

async fn readyz_refuses_when_the_database_is_gone(backend: Backend) {
    let app = spawn_app(backend).await;
    app.store.close().await;
    let response = app.get("/readyz").await;
    assert_eq!(response.status(), 503);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["reason"], "database unreachable");
}

engine::on_both_backends!(
    healthz_answers,
    readyz_is_ready_when_migrated,
    readyz_refuses_before_migrations,
    readyz_refuses_when_the_database_is_gone,
);
