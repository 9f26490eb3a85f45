//! A superadmin marks a tenant as served by dedicated workers only (`corral worker
//! --tenant NAME`), or by any worker again.

use leptos::prelude::*;

use crate::error::UiError;

/// `dedicated` is the checkbox: present when ticked.
#[server(prefix = "/sfn", endpoint = "admin-set-dedicated-workers")]
pub async fn set_dedicated_workers(
    csrf: String,
    id: String,
    dedicated: Option<String>,
) -> Result<(), UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    let update = engine::service::DedicatedWorkersUpdate {
        dedicated_workers: dedicated.is_some(),
    };
    crate::session::service()?
        .set_dedicated_workers(&caller, &id, &update)
        .await?;
    leptos_axum::redirect("/admin/tenants?saved=1");
    Ok(())
}
