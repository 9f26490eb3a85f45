//! Extend a cluster's lease: to an end time (the one-click "extend", which the page
//! computed from the template's limits) or by some hours from now.

use leptos::prelude::*;

use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "extend-lease")]
pub async fn extend_lease(
    csrf: String,
    id: String,
    hours: Option<String>,
    until_ms: Option<String>,
) -> Result<(), UiError> {
    let caller = crate::session::caller_checked(&csrf).await?;
    let seconds = match (until_ms, hours) {
        (Some(until), _) => {
            let until: i64 = until
                .trim()
                .parse()
                .map_err(|_| UiError::invalid("the new lease end is not a time"))?;
            // Rounded down, so the end never passes what the page offered.
            (until - engine::store::now_ms()) / 1000
        }
        (None, Some(hours)) => hours
            .trim()
            .parse::<i64>()
            .ok()
            .filter(|hours| *hours > 0)
            .ok_or_else(|| UiError::field("hours", "enter a whole number of hours, at least 1"))?
            .saturating_mul(3600),
        (None, None) => return Err(UiError::field("hours", "say how long the lease should run")),
    };
    let seconds = u64::try_from(seconds)
        .ok()
        .filter(|seconds| *seconds > 0)
        .ok_or_else(|| UiError::invalid("the new lease end has already passed; reload the page"))?;
    crate::session::service()?
        .extend_lease(&caller, &id, &engine::service::LeaseExtension { seconds })
        .await
        .map_err(|error| match UiError::from(error) {
            // The engine names its API field; the page's field is `hours`.
            UiError::Invalid { message, problems } => UiError::Invalid {
                message,
                problems: problems
                    .into_iter()
                    .map(|mut problem| {
                        if problem.field == "seconds" {
                            "hours".clone_into(&mut problem.field);
                        }
                        problem
                    })
                    .collect(),
            },
            other => other,
        })?;
    Ok(())
}
