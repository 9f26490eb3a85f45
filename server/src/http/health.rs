//! `/healthz` (the process answers) and `/readyz` (the database answers and its
//! schema is current). Load balancers and orchestrators poll these.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use engine::store::Store;
use serde_json::{json, Value};

pub async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

pub async fn readyz(State(store): State<Store>) -> (StatusCode, Json<Value>) {
    match store.migration_status().await {
        Ok(status) if status.is_current() => (
            StatusCode::OK,
            Json(json!({
                "status": "ready",
                "database": store.backend().as_str(),
                "migrations": { "applied": status.applied, "known": status.known },
            })),
        ),
        Ok(status) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({
                "status": "not ready",
                "database": store.backend().as_str(),
                "reason": "migrations pending",
                "migrations": { "applied": status.applied, "known": status.known },
            })),
        ),
        Err(err) => {
            tracing::warn!(error = %err, "readiness check failed");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({
                    "status": "not ready",
                    "database": store.backend().as_str(),
                    "reason": "database unreachable",
                })),
            )
        }
    }
}
