//! Create a cluster, then go to its first job.

use leptos::prelude::*;

use super::CreateForm;
use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "create-cluster")]
pub async fn create_cluster(csrf: String, form: CreateForm) -> Result<String, UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    if form.name.trim().is_empty() {
        return Err(UiError::field("name", "give the cluster a name"));
    }
    let request = super::convert::create_request(&form)?;
    let submitted = crate::session::service()?
        .create_cluster(&caller, &request)
        .await?;
    let url = format!(
        "/clusters/{}/jobs/{}",
        submitted.cluster.id, submitted.job_id
    );
    leptos_axum::redirect(&url);
    Ok(url)
}
