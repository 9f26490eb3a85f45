//! The signed-in user, or `None` for a visitor.

use leptos::prelude::*;

use super::Me;
use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "current-user")]
pub async fn current_user() -> Result<Option<Me>, UiError> {
    match crate::session::current().await {
        Ok((caller, data)) => Ok(Some(Me {
            user_id: caller.principal.user_id,
            username: caller.principal.username,
            tenant_id: caller.principal.tenant_id,
            role: caller.principal.role,
            csrf: data.csrf,
        })),
        Err(UiError::Unauthenticated) => Ok(None),
        Err(error) => Err(error),
    }
}
