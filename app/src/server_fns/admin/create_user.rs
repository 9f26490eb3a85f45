//! An admin creates a user (a superadmin in any tenant; a tenant admin in theirs,
//! never a superadmin).

use api_types::Role;
use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-create-user")]
pub async fn create_user(
    csrf: String,
    username: String,
    password: String,
    role: Role,
    tenant: Option<String>,
) -> Result<(), UiError> {
    use api_types::MIN_PASSWORD_CHARS;

    let caller = crate::session::caller_checked(&csrf).await?;
    let username = username.trim().to_owned();
    if username.is_empty() {
        return Err(UiError::field("username", "give the user a name"));
    }
    if password.chars().count() < MIN_PASSWORD_CHARS {
        return Err(UiError::field(
            "password",
            format!("use at least {MIN_PASSWORD_CHARS} characters"),
        ));
    }
    let request = engine::service::UserRequest {
        username,
        password,
        role,
        tenant: tenant.filter(|tenant| !tenant.trim().is_empty()),
    };
    crate::session::service()?
        .create_user(&caller, &request)
        .await
        .map_err(|error| super::quota::on_field(error.into(), "username"))?;
    leptos_axum::redirect("/admin/users?created=1");
    Ok(())
}
