//! Register an `ssh-pool` host in the administered tenant; Corral makes its key pair
//! and the page shows the public key to authorize on the host.
//!
//! A registration ends on `/admin/hosts?registered=<id>`: the page names the new host
//! from the query, so a browser without JavaScript sees the key too, and the address
//! holds no error of an earlier attempt (a plain post goes back to the page it came
//! from, and that page may be the one a refusal left).

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
) -> Result<(), UiError> {
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
    leptos_axum::redirect(&format!(
        "/admin/hosts?registered={}",
        crate::query::encode_value(&registered.id)
    ));
    Ok(())
}
