//! Register an `ssh-pool` host in the administered tenant; Corral makes its key pair
//! and the page shows the public key to authorize on the host.

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-register-pool-host")]
pub async fn register_pool_host(
    csrf: String,
    name: String,
    host: String,
    port: String,
    user: String,
    host_key: String,
) -> Result<String, UiError> {
    let caller = super::caller::admin_checked(&csrf).await?;
    let port = match port.trim() {
        "" => 22,
        raw => raw
            .parse::<i64>()
            .map_err(|_| UiError::field("port", format!("{raw:?} is not a port (1-65535)")))?,
    };
    let request = engine::service::PoolHostRequest {
        name,
        host,
        port,
        user,
        host_key,
        tenant: None,
    };
    let registered = crate::session::service()?
        .register_pool_host(&caller, &request)
        .await?;
    Ok(registered.client_public_key)
}
