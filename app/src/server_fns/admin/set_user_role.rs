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
        password: None,
        current_password: None,
    };
    let user = crate::session::service()?
        .update_user(&caller, &id, &update)
        .await
        .map_err(|error| super::quota::on_field(error.into(), "role"))?;
    leptos_axum::redirect(&format!(
        "/admin/users/{}?saved=role",
        crate::query::encode_value(&user.username)
    ));
    Ok(())
}
