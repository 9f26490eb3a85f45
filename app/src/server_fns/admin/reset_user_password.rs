//! An admin sets a new password for a user (who must sign in again with it: the
//! service ends the user's sessions). The password is never shown or logged.

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-reset-user-password")]
pub async fn reset_user_password(
    csrf: String,
    id: String,
    password: String,
) -> Result<(), UiError> {
    use api_types::MIN_PASSWORD_CHARS;

    let caller = crate::session::caller_checked(&csrf).await?;
    if password.chars().count() < MIN_PASSWORD_CHARS {
        return Err(UiError::field(
            "password",
            format!("use at least {MIN_PASSWORD_CHARS} characters"),
        ));
    }
    let update = engine::service::UserUpdate {
        password: Some(password),
        ..Default::default()
    };
    super::user_change::save(&caller, &id, &update, "password").await
}
