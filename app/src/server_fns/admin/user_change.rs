//! What an admin's change to a user (a new role, a new password) does once it is
//! asked for: the service applies it (and ends the user's sessions), a refusal
//! shows next to the form's field, and the admin is back on the user's page,
//! which says what was saved. Server side only.

use engine::service::{Caller, UserUpdate};

use crate::error::UiError;

/// Applies `update` to user `id`. `field` is the form field the change comes
/// from; it also tells the user's page (`?saved=`) what was saved.
pub async fn save(
    caller: &Caller,
    id: &str,
    update: &UserUpdate,
    field: &'static str,
) -> Result<(), UiError> {
    let user = crate::session::service()?
        .update_user(caller, id, update)
        .await
        .map_err(|error| super::quota::on_field(error.into(), field))?;
    leptos_axum::redirect(&format!(
        "/admin/users/{}?saved={field}",
        crate::query::encode_value(&user.username)
    ));
    Ok(())
}
