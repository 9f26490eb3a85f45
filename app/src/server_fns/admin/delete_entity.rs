//! Delete a catalog entity; refused (with every user listed) while something uses it.

use leptos::prelude::*;

use crate::error::UiError;
use crate::server_fns::admin::EntityKind;

#[server(prefix = "/sfn", endpoint = "admin-delete-entity")]
pub async fn delete_entity(
    csrf: String,
    kind: EntityKind,
    name: String,
) -> Result<String, UiError> {
    use crate::server_fns::admin::ConsoleKind;

    let caller = super::caller::admin_checked(&csrf).await?;
    crate::session::service()?
        .delete_entity(&caller, kind.key(), &name)
        .await?;
    let url = format!("/admin/{}?deleted={name}", kind.path());
    leptos_axum::redirect(&url);
    Ok(url)
}
