//! An admin changes a user's role. The service refuses granting superadmin to
//! anyone but a superadmin, and changing one's own role; the user's sessions end.

use api_types::Role;
use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-set-user-role")]
pub async fn set_user_role(csrf: String, id: String, role: Role) -> Result<(), UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    let update = engine::service::UserUpdate {
        role: Some(role),
        ..Default::default()
    };
    super::user_change::save(&caller, &id, &update, "role").await
}
