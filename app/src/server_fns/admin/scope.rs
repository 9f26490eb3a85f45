//! The tenant the admin console is working on, and the others a superadmin may
//! switch to.

use leptos::prelude::*;

use crate::error::UiError;
use crate::server_fns::admin::AdminScope;

#[server(prefix = "/sfn", endpoint = "admin-scope")]
pub async fn current_admin_scope() -> Result<AdminScope, UiError> {
    let caller = super::caller::caller().await?;
    super::caller::require_admin(&caller)?;
    let service = crate::session::service()?;
    let tenant = service.tenant(&caller, caller.tenant_id()).await?;
    let tenants = service.switchable_tenants(&caller).await?;
    Ok(AdminScope {
        tenant_id: tenant.id,
        tenant_name: tenant.name,
        tenants,
    })
}
