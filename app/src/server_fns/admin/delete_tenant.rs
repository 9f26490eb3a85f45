//! A superadmin deletes a tenant with its users, tokens and catalog; refused (409,
//! naming them) while the tenant has live clusters, and always for the default
//! tenant.

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-delete-tenant")]
pub async fn delete_tenant(csrf: String, id: String) -> Result<(), UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    let service = crate::session::service()?;
    let tenant = service.tenant(&caller, &id).await?;
    service.delete_tenant(&caller, &id).await?;
    // A superadmin who had switched to this tenant goes back to their own.
    let session = crate::session::request_session()?;
    if let Ok(Some(chosen)) = session.get::<String>(super::caller::ADMIN_TENANT).await {
        if chosen == id {
            if let Err(error) = session.remove::<String>(super::caller::ADMIN_TENANT).await {
                tracing::warn!(%error, "could not forget the deleted tenant in the session");
            }
        }
    }
    leptos_axum::redirect(&format!(
        "/admin/tenants?deleted={}",
        crate::query::encode_value(&tenant.name)
    ));
    Ok(())
}
