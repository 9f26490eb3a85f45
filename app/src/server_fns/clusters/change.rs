//! Run a day-2 operation (or delete the cluster), then go to its job.

use leptos::prelude::*;

use super::ChangeForm;
use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "change-cluster")]
pub async fn change_cluster(csrf: String, id: String, form: ChangeForm) -> Result<String, UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    let service = crate::session::service()?;
    let submitted = match super::convert::change_request(&form)? {
        Some(change) => service.change_cluster(&caller, &id, &change).await?,
        None => {
            service
                .delete_cluster(&caller, &id, form.force.is_some())
                .await?
        }
    };
    let url = format!("/clusters/{id}/jobs/{}", submitted.job_id);
    leptos_axum::redirect(&url);
    Ok(url)
}
