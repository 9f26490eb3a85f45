//! What the overview page shows about this server.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerStatus {
    pub version: String,
    pub backend: String,
    pub migrations_applied: usize,
    pub migrations_known: usize,
    pub tenants: usize,
}

#[server(prefix = "/sfn")]
pub async fn get_server_status() -> Result<ServerStatus, ServerFnError> {
    let store = expect_context::<engine::store::Store>();
    let migrations = store
        .migration_status()
        .await
        .map_err(|err| ServerFnError::new(err.to_string()))?;
    let tenants = store
        .list_tenants()
        .await
        .map_err(|err| ServerFnError::new(err.to_string()))?;
    Ok(ServerStatus {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        backend: store.backend().as_str().to_owned(),
        migrations_applied: migrations.applied,
        migrations_known: migrations.known,
        tenants: tenants.len(),
    })
}
