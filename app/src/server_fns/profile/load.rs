//! Everything the profile page shows, for the signed-in user.

use leptos::prelude::*;

use super::ProfilePage;
use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "profile-page")]
pub async fn load_profile() -> Result<ProfilePage, UiError> {
    let caller = crate::session::caller().await?;
    let service = crate::session::service()?;
    let principal = &caller.principal;
    let tenant = service.tenant(&caller, &principal.tenant_id).await?.name;
    let keys = service.my_keys(&caller).await?;
    let admin_keys_on_all_clusters = if principal.role.is_admin() {
        Some(
            service
                .admin_keys_setting(&caller, &principal.tenant_id)
                .await?
                .admin_keys_on_all_clusters,
        )
    } else {
        None
    };
    Ok(ProfilePage {
        username: principal.username.clone(),
        tenant,
        role: principal.role,
        keys,
        max_keys: engine::store::user_keys::MAX_KEYS_PER_USER,
        admin_keys_on_all_clusters,
        notice: super::notice::take().await,
    })
}
