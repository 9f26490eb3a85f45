//! A superadmin chooses the tenant the console administers (kept in the session).

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-switch-tenant")]
pub async fn switch_tenant(csrf: String, tenant: String, next: String) -> Result<(), UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    if !caller.principal.is_superadmin() {
        return Err(UiError::Forbidden(
            "only a superadmin can switch tenants".to_owned(),
        ));
    }
    // Checks the tenant exists (and is visible) before remembering it.
    let tenant = crate::session::service()?
        .tenant(&caller, tenant.trim())
        .await?;
    crate::session::request_session()?
        .insert(super::caller::ADMIN_TENANT, tenant.id)
        .await
        .map_err(|error| {
            tracing::error!(%error, "session write failed");
            UiError::Internal
        })?;
    // Only paths inside the console, so the form cannot redirect elsewhere.
    let next = if next.starts_with("/admin")
        && crate::server_fns::session::login::is_plain_local_path(&next)
    {
        next
    } else {
        "/admin".to_owned()
    };
    leptos_axum::redirect(&next);
    Ok(())
}
