//! Stop a job: running steps are killed, nothing new starts.

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "cancel-job")]
pub async fn cancel_job(csrf: String, job_id: String) -> Result<(), UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    crate::session::service()?
        .cancel_job(&caller, &api_types::JobId::from(job_id))
        .await?;
    Ok(())
}
