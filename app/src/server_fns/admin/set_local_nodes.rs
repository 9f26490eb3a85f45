//! A superadmin allows or forbids a tenant the `local` provider, whose node steps run
//! on the Corral server's own host.

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-set-local-nodes")]
pub async fn set_local_nodes(csrf: String, id: String, allow: String) -> Result<(), UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    let update = engine::service::LocalNodesUpdate {
        local_nodes: allow == "true",
    };
    crate::session::service()?
        .set_local_nodes(&caller, &id, &update)
        .await?;
    leptos_axum::redirect("/admin/tenants?saved=1");
    Ok(())
}
