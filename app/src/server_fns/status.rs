//! What the footer shows about this server (to visitors too: nothing sensitive).

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerStatus {
    pub version: String,
    pub backend: String,
}

#[server(prefix = "/sfn", endpoint = "get-server-status")]
pub async fn get_server_status() -> Result<ServerStatus, ServerFnError> {
    let store = use_context::<engine::store::Store>()
        .ok_or_else(|| ServerFnError::new("the server is not set up to answer this"))?;
    Ok(ServerStatus {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        backend: store.backend().as_str().to_owned(),
    })
}
