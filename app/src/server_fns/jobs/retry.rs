//! Run a failed or cancelled job again from where it stopped.

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "retry-job")]
pub async fn retry_job(csrf: String, job_id: String) -> Result<(), UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    crate::session::service()?
        .retry_job(&caller, &api_types::JobId::from(job_id))
        .await?;
    Ok(())
}
