//! What a day-2 operation would do, before it runs.

use leptos::prelude::*;

use super::ChangeForm;
use super::ChangePreview;
use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "plan-change")]
pub async fn plan_change(id: String, form: ChangeForm) -> Result<ChangePreview, UiError> {
    let caller = crate::session::caller().await?;
    let service = crate::session::service()?;
    match super::convert::change_request(&form)? {
        Some(change) => {
            let plan = service.plan_change(&caller, &id, &change).await?;
            super::preview::plan_preview(plan).map(|plan| ChangePreview::Plan(Box::new(plan)))
        }
        // A delete removes every node: the page says so without a plan.
        None => {
            service.cluster(&caller, &id).await?;
            Ok(ChangePreview::Delete)
        }
    }
}
