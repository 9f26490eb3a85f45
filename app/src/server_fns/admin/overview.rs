//! The admin overview of the administered tenant (the service counts; the page shows).

use api_types::OverviewView;
use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "admin-overview")]
pub async fn admin_overview() -> Result<OverviewView, UiError> {
    let caller = super::caller::caller().await?;
    super::caller::require_admin(&caller)?;
    Ok(crate::session::service()?.overview(&caller).await?)
}
