//! Make one version of a plugin resource the one nodes get.

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-stage-resource")]
pub async fn stage_resource(
    csrf: String,
    kind: String,
    name: String,
    version: i64,
) -> Result<(), UiError> {
    let caller = super::caller::admin_checked(&csrf).await?;
    crate::session::service()?
        .stage_resource(&caller, &kind, &name, version)
        .await?;
    leptos_axum::redirect("/admin/resources?staged=1");
    Ok(())
}
