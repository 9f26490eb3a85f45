//! Remove an `ssh-pool` host; refused, naming the cluster, while a node holds it.

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-remove-pool-host")]
pub async fn remove_pool_host(csrf: String, id: String) -> Result<(), UiError> {
    let caller = super::caller::admin_checked(&csrf).await?;
    crate::session::service()?
        .remove_pool_host(&caller, &id)
        .await?;
    leptos_axum::redirect("/admin/hosts?removed=1");
    Ok(())
}
