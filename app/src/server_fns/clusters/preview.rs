//! What creating a cluster would do: the solved layout and its tasks, or why the
//! request cannot be met.

use leptos::prelude::*;

use super::CreateForm;
use super::PlanPreview;
use crate::error::UiError;

#[server(prefix = "/sfn", endpoint = "preview-create")]
pub async fn preview_create(form: CreateForm) -> Result<PlanPreview, UiError> {
    let caller = crate::session::caller().await?;
    let mut request = super::convert::create_request(&form)?;
    // The preview does not care about the name yet; the create checks it.
    if request.name.is_empty() {
        "preview".clone_into(&mut request.name);
    }
    let plan = crate::session::service()?
        .preview_cluster(&caller, &request)
        .await?;
    plan_preview(plan)
}

/// The engine's plan view with its layouts and DAG read into the domain's types (which
/// the pages draw and the browser's own preview makes).
#[cfg(feature = "ssr")]
pub(crate) fn plan_preview(plan: engine::service::PlanView) -> Result<PlanPreview, UiError> {
    // Through their (identical) JSON, so the domain checks the names and the DAG's
    // order as it does for anything it reads.
    fn read<T: serde::de::DeserializeOwned>(
        what: &str,
        view: &impl serde::Serialize,
    ) -> Result<T, UiError> {
        serde_json::to_value(view)
            .and_then(serde_json::from_value)
            .map_err(|error| {
                tracing::error!(%error, what, "plan not readable");
                UiError::Internal
            })
    }
    let from: domain::layout::Layout = read("from", &plan.from)?;
    Ok(PlanPreview {
        from: (!from.nodes.is_empty()).then_some(from),
        to: read("to", &plan.to)?,
        tasks: plan.tasks,
        steps: plan
            .step_counts
            .into_iter()
            .map(|count| (count.step, count.tasks))
            .collect(),
        dag: plan
            .graph
            .map(|graph| read("dag", &graph.dag))
            .transpose()?,
        credentials: plan.credentials,
        upgrade: plan.upgrade,
        warnings: plan.warnings,
        cost: plan.cost,
    })
}
