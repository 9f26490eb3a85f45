//! Upload a new version of a plugin resource (its text, e.g. a script), and
//! optionally stage it at once.

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-upload-resource")]
pub async fn upload_resource(
    csrf: String,
    kind: String,
    name: String,
    content: String,
    stage: Option<String>,
) -> Result<(), UiError> {
    let caller = super::caller::admin_checked(&csrf).await?;
    let name = name.trim();
    if name.is_empty() {
        return Err(UiError::field("name", "give the resource a name"));
    }
    if content.is_empty() {
        return Err(UiError::field("content", "the resource is empty"));
    }
    let service = crate::session::service()?;
    let uploaded = service
        .upload_resource(&caller, &kind, name, content.as_bytes())
        .await
        .map_err(|error| super::quota::on_field(error.into(), "name"))?;
    if stage.is_some() {
        service
            .stage_resource(&caller, &kind, name, uploaded.version)
            .await?;
    }
    leptos_axum::redirect("/admin/resources?uploaded=1");
    Ok(())
}
