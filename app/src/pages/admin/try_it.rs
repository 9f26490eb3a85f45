//! The template page's "try it" panel: pick a size and services, see the solved
//! layout (and its tasks) or why it cannot be built. The tenant's catalog is
//! fetched once (by the template page); the `domain` solver then runs where the page runs — in the
//! browser as inputs change, on the server for a plain GET form (JavaScript off).

use leptos::prelude::*;
use leptos_router::components::Form;
use leptos_router::hooks::use_query_map;

use crate::components::form::{resubmit_form, Field};
use crate::components::plan::PlanView;
use crate::server_fns::clusters::PlanPreview;

/// What the panel offers for a template: its services and size bounds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Choices {
    pub defaults: Vec<String>,
    pub optional: Vec<String>,
    pub min: Option<u32>,
    pub max: Option<u32>,
}

/// Why a try cannot be shown: one message per reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub summary: String,
    pub reasons: Vec<String>,
}

fn refusal(summary: impl Into<String>) -> Refusal {
    Refusal {
        summary: summary.into(),
        reasons: Vec::new(),
    }
}

/// The template as resolved from the bundle, with the catalog.
fn resolve(
    bundle: &serde_json::Value,
    template: &str,
) -> Result<(domain::catalog::Catalog, domain::catalog::ClusterTemplate), Refusal> {
    let catalog = domain::catalog::coopr::import_bundle_value(bundle.clone())
        .map_err(|error| refusal(format!("the catalog cannot be read: {error}")))?;
    let name =
        domain::names::TemplateName::parse(template).map_err(|error| refusal(error.to_string()))?;
    let resolved = catalog
        .resolved_template(&name)
        .map_err(|error| refusal(error.message()))?;
    Ok((catalog, resolved))
}

pub fn choices(bundle: &serde_json::Value, template: &str) -> Choices {
    let Ok((_, template)) = resolve(bundle, template) else {
        return Choices::default();
    };
    let defaults: Vec<String> = template
        .defaults
        .services
        .iter()
        .map(|service| service.name().to_string())
        .collect();
    let optional = template
        .compatibility
        .services
        .iter()
        .map(ToString::to_string)
        .filter(|service| !defaults.contains(service))
        .collect();
    let size = template
        .constraints
        .as_ref()
        .and_then(|constraints| constraints.size.as_ref());
    let bound = |count: Option<domain::catalog::Count>| {
        count
            .and_then(|count| count.bounded())
            .and_then(|value| u32::try_from(value).ok())
    };
    Choices {
        defaults,
        optional,
        min: size.and_then(|size| bound(size.min)),
        max: size.and_then(|size| bound(size.max)),
    }
}

/// Solves `template` at `size` with `services` (`None` = its defaults) and plans
/// the create, exactly as a create would.
pub fn try_solve(
    bundle: &serde_json::Value,
    template: &str,
    size: u32,
    services: Option<Vec<String>>,
) -> Result<PlanPreview, Refusal> {
    use domain::plan::{plan_create, ServiceGraph};
    use domain::solver::{solve_request, SolveRequest};

    let (catalog, resolved) = resolve(bundle, template)?;
    let mut request = SolveRequest::of_size(size);
    request.services = services;
    let layout = solve_request(&catalog, &resolved, &request).map_err(|unsatisfiable| Refusal {
        summary: unsatisfiable.to_string(),
        reasons: unsatisfiable
            .reasons
            .iter()
            .map(ToString::to_string)
            .collect(),
    })?;
    let dag = plan_create(&layout, &ServiceGraph::from_catalog(&catalog))
        .map_err(|error| refusal(format!("the layout cannot be planned: {error}")))?;
    Ok(PlanPreview::of_dag(None, layout, dag))
}

#[component]
pub fn TryIt(
    template: String,
    bundle: Resource<Result<serde_json::Value, crate::error::UiError>>,
) -> impl IntoView {
    let template = StoredValue::new(template);
    view! {
        <section class="card try-it" id="try" aria-labelledby="try-head" data-testid="try-it">
            <h2 id="try-head">"Try it"</h2>
            <Suspense fallback=|| view! { <p class="muted">"Loading the catalog…"</p> }>
                {move || Suspend::new(async move {
                    match bundle.await {
                        Ok(bundle) => view! { <TryPanel bundle template=template.get_value()/> }.into_any(),
                        Err(error) => view! { <p class="form-error">{error.to_string()}</p> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
    }
}

#[component]
fn TryPanel(bundle: serde_json::Value, template: String) -> impl IntoView {
    let query = use_query_map();
    let offered = choices(&bundle, &template);
    let bundle = StoredValue::new(bundle);
    let offered = StoredValue::new(offered);
    let size = Memo::new(move |_| {
        query.with(|query| query.get("size")).unwrap_or_else(|| {
            offered
                .with_value(|offered| offered.min.unwrap_or(1))
                .to_string()
        })
    });
    let services = Memo::new(move |_| query.with(|query| query.get_all("services")));
    let template = StoredValue::new(template);
    let result = Memo::new(move |_| {
        let size = size.get();
        let size = size
            .trim()
            .parse::<u32>()
            .map_err(|_| refusal("enter a whole number of nodes"))?;
        bundle.with_value(|bundle| {
            template.with_value(|template| try_solve(bundle, template, size, services.get()))
        })
    });
    let checks = move || {
        let picked = services.get();
        offered.with_value(|offered| {
            offered
                .defaults
                .iter()
                .map(|service| (service, true))
                .chain(offered.optional.iter().map(|service| (service, false)))
                .map(|(service, default)| {
                    let checked = match &picked {
                        Some(picked) => picked.contains(service),
                        None => default,
                    };
                    view! {
                        <label class="check">
                            <input type="checkbox" name="services" value=service.clone() checked=checked/>
                            " " {service.clone()}
                            {default.then(|| view! { <span class="muted">" (default)"</span> })}
                        </label>
                    }
                })
                .collect_view()
        })
    };
    let bounds = offered.with_value(|offered| match (offered.min, offered.max) {
        (Some(min), Some(max)) => format!("This template takes {min} to {max} nodes."),
        (Some(min), None) => format!("At least {min} nodes."),
        (None, Some(max)) => format!("At most {max} nodes."),
        (None, None) => String::new(),
    });
    view! {
        <div class="try-grid">
            <Form method="GET" action="" on:input=resubmit_form on:change=resubmit_form attr:class="stack">
                <Field label="Nodes" id="try-size" hint=bounds>
                    <input id="try-size" name="size" type="number" min="1" max="1000"
                        value=move || size.get() data-testid="try-size"/>
                </Field>
                <fieldset class="field">
                    <legend>"Services"</legend>
                    {checks}
                </fieldset>
                <noscript><button class="button button-quiet" type="submit">"Solve"</button></noscript>
            </Form>
            <div aria-live="polite">
                {move || match result.get() {
                    Ok(preview) => view! { <PlanView preview/> }.into_any(),
                    Err(refusal) => view! {
                        <div class="unsatisfiable" role="alert" data-testid="unsatisfiable">
                            <p><strong>"This cannot be built: "</strong>{refusal.summary}</p>
                            <ul>{refusal.reasons.into_iter().map(|reason| view! { <li>{reason}</li> }).collect_view()}</ul>
                        </div>
                    }.into_any(),
                }}
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Tests fail loudly by design.

    use super::{choices, try_solve};

    fn bundle() -> serde_json::Value {
        serde_json::from_str(include_str!("../../../../testdata/lifecycle/catalog.json")).unwrap()
    }

    #[test]
    fn solves_a_feasible_size_and_explains_an_infeasible_one() {
        let bundle = bundle();
        let preview = try_solve(&bundle, "lifecycle", 3, None).unwrap();
        assert_eq!(preview.to.nodes.len(), 3);
        assert!(preview.tasks > 0);
        let refusal = try_solve(&bundle, "lifecycle", 1, None).unwrap_err();
        assert!(!refusal.reasons.is_empty(), "{refusal:?}");
    }

    #[test]
    fn offers_the_templates_services_and_bounds() {
        let offered = choices(&bundle(), "lifecycle");
        assert_eq!(offered.defaults, ["base", "worker", "web"]);
        assert!(offered.optional.contains(&"extra".to_owned()));
        assert_eq!(offered.min, Some(2));
        assert!(try_solve(&bundle(), "nosuch", 3, None).is_err());
    }
}
