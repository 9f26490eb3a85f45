//! The showback page's data: what the tenant's clusters cost in a month, per user and
//! per template (tenant admins; docs/cost.md).

use api_types::ShowbackView;
use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-showback")]
pub async fn showback_page(month: Option<String>) -> Result<ShowbackView, UiError> {
    let caller = super::caller::caller().await?;
    Ok(crate::session::service()?
        .showback(&caller, month.as_deref().filter(|month| !month.is_empty()))
        .await?)
}
