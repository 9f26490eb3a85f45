//! `/healthz` (the process answers) and `/readyz` (the database answers and its
//! schema is current). Load balancers and orchestrators poll these.
//!
//! `/healthz` is liveness: it always answers 200 while the process runs, since
//! restarting a process does not bring its database back. Its body still says
//! whether the process can serve (`ready`, and `database`: `answering` or `not
//! answering`, as this process's own calls last found it, without asking the
//! database). `/readyz` asks the database and answers 503 while it does not answer:
//! the check to take a server out of a load balancer's rotation.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use engine::store::Store;
use serde_json::{json, Value};

pub async fn healthz(State(store): State<Store>) -> Json<Value> {
    let answering = !store.reachability().is_down();
    Json(json!({
        "status": "ok",
        "ready": answering,
        "database": if answering { "answering" } else { "not answering" },
    }))
}

pub async fn readyz(State(store): State<Store>) -> (StatusCode, Json<Value>) {
    match store.migration_status().await {
        Ok(status) if status.is_current() => {
            store.reachability().answered();
            (
                StatusCode::OK,
                Json(json!({
                    "status": "ready",
                    "database": store.backend().as_str(),
                    "migrations": { "applied": status.applied, "known": status.known },
                })),
            )
        }
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
            if err.is_unreachable() {
                // Said once per outage, not once per poll.
                store.reachability().lost(&err);
            } else {
                tracing::warn!(error = %err, "readiness check failed");
            }
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
