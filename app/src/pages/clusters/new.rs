//! `/clusters/new`: pick a template, a size and services; see the solved layout and
//! every task before confirming. The inputs live in the query string, so the
//! preview is rendered on the server for a plain form post (no JavaScript) and
//! recomputed in place as inputs change (with JavaScript), and a preview can be
//! bookmarked or shared.
//!
//! A template's parameters are fields of their type (a select for a choice, a number
//! box with its bounds, a checkbox, a text box with its pattern), named `param.NAME`
//! in the query. Each value is checked where it is shown, with the check the server
//! makes ([`Parameter::check_value`]), so a bad one is marked at its field with or
//! without JavaScript; the server checks them all again on create.

use domain::catalog::parameters::{value_text, Parameter, ParameterType};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::Form;
use leptos_router::hooks::use_query_map;

use crate::components::errors::{action_error, FormError, FormErrors, PageError};
use crate::components::form::{resubmit_form, Field};
use crate::components::plan::PlanView;
use crate::components::session::CsrfField;
use crate::error::UiError;
use crate::query::encode_value;
use crate::server_fns::clusters::choices::create_choices;
use crate::server_fns::clusters::create::CreateCluster;
use crate::server_fns::clusters::preview::preview_create;
use crate::server_fns::clusters::CreateForm;
use crate::server_fns::clusters::{CreateFormChoices, PlanPreview, QuotaUse, TemplateChoice};

/// The form's inputs as the query string holds them.
#[derive(Debug, Clone, PartialEq, Default)]
struct Request {
    name: String,
    template: String,
    size: String,
    /// As asked for; narrowed to the template's services before use.
    services: Option<Vec<String>>,
    /// Empty: the template's default.
    provider: String,
    hardwaretype: String,
    imagetype: String,
    /// Template parameter values as the query holds them (`param.NAME`).
    params: Vec<(String, String)>,
    /// Whether the form was sent (its size field always is): an unticked checkbox
    /// then means false rather than the parameter's default.
    submitted: bool,
}

/// The query key prefix of template parameter fields.
const PARAM_PREFIX: &str = "param.";

/// What the form shows and the preview uses: the request with the template's
/// defaults filled in.
#[derive(Debug, Clone, PartialEq, Default)]
struct Inputs {
    name: String,
    template: Option<TemplateChoice>,
    size: String,
    services: Vec<String>,
    provider: String,
    hardwaretype: String,
    imagetype: String,
    /// The chosen template's parameters in declaration order, each with its value
    /// as text (given, else the default).
    parameters: Vec<(String, String)>,
}

impl Inputs {
    /// The request the server functions take.
    fn form(&self) -> CreateForm {
        let chosen = |value: &String| (!value.is_empty()).then(|| value.clone());
        CreateForm {
            name: self.name.clone(),
            template: self.template_name(),
            size: self.size.clone(),
            services: self.services.clone(),
            provider: chosen(&self.provider),
            hardwaretype: chosen(&self.hardwaretype),
            imagetype: chosen(&self.imagetype),
            parameters: self
                .parameters
                .iter()
                .filter(|(_, value)| !value.is_empty())
                .cloned()
                .collect(),
        }
    }

    fn template_name(&self) -> String {
        self.template
            .as_ref()
            .map(|template| template.name.clone())
            .unwrap_or_default()
    }
}

impl Request {
    /// Fills in what the request leaves out: the first template, its smallest size,
    /// its default services.
    fn resolve(&self, templates: &[TemplateChoice]) -> Inputs {
        let template = templates
            .iter()
            .find(|template| template.name == self.template)
            .or_else(|| templates.first())
            .cloned();
        let size = match (&template, self.size.is_empty()) {
            (Some(template), true) => template.min_size.unwrap_or(1).to_string(),
            (None, true) => "1".to_owned(),
            (_, false) => self.size.clone(),
        };
        Inputs {
            name: self.name.clone(),
            parameters: template
                .as_ref()
                .map(|template| self.parameters_for(template))
                .unwrap_or_default(),
            provider: self.provider.clone(),
            hardwaretype: self.hardwaretype.clone(),
            imagetype: self.imagetype.clone(),
            services: template
                .as_ref()
                .map(|template| self.services_for(template))
                .unwrap_or_default(),
            template,
            size,
        }
    }

    /// Each of `template`'s parameters with its value: as given, else (for a form
    /// that was sent) false for an unticked checkbox, else the default.
    fn parameters_for(&self, template: &TemplateChoice) -> Vec<(String, String)> {
        template
            .parameters()
            .into_iter()
            .map(|(name, parameter)| {
                let given = self
                    .params
                    .iter()
                    .find(|(given, _)| *given == name)
                    .map(|(_, value)| value.clone());
                let value = match given {
                    Some(value) => value,
                    None if self.submitted && parameter.kind == ParameterType::Boolean => {
                        "false".to_owned()
                    }
                    None => parameter
                        .default
                        .as_ref()
                        .map(value_text)
                        .unwrap_or_default(),
                };
                (name, value)
            })
            .collect()
    }

    /// The services to use with `template`: those asked for that it offers, or its
    /// defaults when none are asked for.
    fn services_for(&self, template: &TemplateChoice) -> Vec<String> {
        let offered = |service: &String| {
            template.default_services.contains(service)
                || template.optional_services.contains(service)
        };
        match &self.services {
            Some(asked) => asked
                .iter()
                .filter(|service| offered(service))
                .cloned()
                .collect(),
            None => template.default_services.clone(),
        }
    }
}

#[component]
pub fn NewClusterPage() -> impl IntoView {
    let query = use_query_map();
    let request = Memo::new(move |_| {
        query.with(|query| Request {
            name: query.get("name").unwrap_or_default(),
            template: query.get("template").unwrap_or_default(),
            size: query.get("size").unwrap_or_default(),
            services: crate::query::list(query, "services"),
            provider: query.get("provider").unwrap_or_default(),
            hardwaretype: query.get("hardwaretype").unwrap_or_default(),
            imagetype: query.get("imagetype").unwrap_or_default(),
            params: query
                .latest_values()
                .filter_map(|(key, value)| {
                    Some((key.strip_prefix(PARAM_PREFIX)?.to_owned(), value.to_owned()))
                })
                .collect(),
            submitted: query.get("size").is_some(),
        })
    });
    // Both resources are made here, before anything suspends: resources made
    // inside a suspended view would not line up with the server's when hydrating.
    let choices = Resource::new(|| (), |_| create_choices());
    let preview = Resource::new(
        move || request.get(),
        move |request| async move {
            let templates = choices.await?.templates;
            if !request.template.is_empty()
                && !templates
                    .iter()
                    .any(|template| template.name == request.template)
            {
                return Err(UiError::field(
                    "template",
                    format!(
                        "there is no template named {:?}; pick one from the list",
                        request.template
                    ),
                ));
            }
            preview_create(request.resolve(&templates).form()).await
        },
    );
    let create = ServerAction::<CreateCluster>::new();
    // Two sibling boundaries, not nested ones (a boundary inside another's resolved
    // view does not hydrate): the form needs only the templates, so typing in it
    // is never interrupted by a new preview.
    view! {
        <Title text="New cluster · Corral"/>
        <div class="page-head"><h1>"New cluster"</h1></div>
        <div class="create-grid">
            <Suspense fallback=|| view! { <p class="muted">"Loading templates…"</p> }>
                {move || Suspend::new(async move {
                    match choices.await {
                        Err(error) => view! { <PageError error/> }.into_any(),
                        Ok(choices) => {
                            view! { <AskCard choices request create/> }.into_any()
                        }
                    }
                })}
            </Suspense>
            <Transition fallback=|| view! { <p class="muted">"Solving…"</p> }>
                {move || Suspend::new(async move {
                    let Ok(CreateFormChoices { templates, .. }) = choices.await else {
                        return ().into_any();
                    };
                    if templates.is_empty() {
                        return ().into_any();
                    }
                    let inputs = request.get_untracked().resolve(&templates);
                    let plan = preview.await;
                    view! { <GetCard inputs plan create/> }.into_any()
                })}
            </Transition>
        </div>
    }
}

/// The left card: what the user asks for.
#[component]
fn AskCard(
    choices: CreateFormChoices,
    request: Memo<Request>,
    create: ServerAction<CreateCluster>,
) -> impl IntoView {
    let CreateFormChoices {
        templates,
        providers,
        quota,
    } = choices;
    if templates.is_empty() {
        return view! {
            <section class="card empty">
                <h2>"No templates yet"</h2>
                <p>"An admin has to add cluster templates to the catalog before clusters can be created."</p>
            </section>
        }
        .into_any();
    }
    let templates = StoredValue::new(templates);
    let inputs =
        Memo::new(move |_| templates.with_value(|templates| request.get().resolve(templates)));
    let chosen = Memo::new(move |_| inputs.with(|inputs| inputs.template.clone()));
    let create_error = action_error(create);
    // A new template starts from its own defaults (size and services), not from
    // what was picked for the previous one.
    let navigate = leptos_router::hooks::use_navigate();
    let switch_template = move |event: leptos::ev::Event| {
        event.stop_propagation();
        let name = inputs.with_untracked(|inputs| inputs.name.clone());
        let url = format!(
            "?name={}&template={}",
            encode_value(&name),
            encode_value(&event_target_value(&event))
        );
        navigate(&url, Default::default());
    };
    view! {
        <section class="card" aria-labelledby="ask">
            <h2 id="ask">"What you ask for"</h2>
            // With JavaScript the preview follows every change; without, "Preview" posts.
            // No browser validation: a value out of bounds is sent, so the page says
            // what is wrong at its field, the same with and without JavaScript.
            <Form method="GET" action="" on:change=resubmit_form attr:class="stack" attr:novalidate=true>
                <Field label="Name" id="name" error=create_error field="name">
                    <input id="name" name="name" placeholder="e.g. shop-staging"
                        value=move || inputs.with(|inputs| inputs.name.clone())
                        title="lower-case letters, digits and '-'"/>
                </Field>
                <Field label="Template" id="template"
                    hint=move || chosen.get().map(|template| template.description).unwrap_or_default()>
                    <select id="template" name="template" on:change=switch_template>
                        {move || templates.with_value(|templates| {
                            let current = inputs.with(Inputs::template_name);
                            templates.iter().map(|template| {
                                let selected = template.name == current;
                                view! {
                                    <option value=template.name.clone() selected=selected>
                                        {template.name.clone()}
                                    </option>
                                }
                            }).collect_view()
                        })}
                    </select>
                </Field>
                <Field label="Nodes" id="size" hint=move || chosen.get().map(size_hint).unwrap_or_default()>
                    <input id="size" name="size" type="number" min="1" max="1000" value=move || inputs.with(|inputs| inputs.size.clone())/>
                </Field>
                <fieldset class="field">
                    <legend>"Services"</legend>
                    {move || {
                        let picked = inputs.with(|inputs| inputs.services.clone());
                        chosen.get().map(|template| {
                            template
                                .default_services
                                .iter()
                                .chain(template.optional_services.iter())
                                .enumerate()
                                .map(|(index, service)| {
                                    let checked = picked.contains(service);
                                    let default = template.default_services.contains(service);
                                    view! {
                                        <label class="check">
                                            <input type="checkbox" name=crate::query::item("services", index) value=service.clone() checked=checked/>
                                            " " {service.clone()}
                                            {default.then(|| view! { <span class="muted">" (default)"</span> })}
                                        </label>
                                    }
                                })
                                .collect_view()
                        })
                    }}
                </fieldset>
                {move || chosen.get().map(|template| {
                    let values = inputs.with(|inputs| inputs.parameters.clone());
                    view! { <ParameterFields template values error=create_error/> }
                })}
                <details class="field" open=move || inputs.with(|inputs| !(inputs.provider.is_empty() && inputs.hardwaretype.is_empty() && inputs.imagetype.is_empty()))>
                    <summary>"Provider, hardware and image"</summary>
                    <Choice label="Provider" name="provider" options=Signal::derive(move || providers.clone())
                        default=Signal::derive(move || chosen.get().and_then(|template| template.default_provider))
                        value=Signal::derive(move || inputs.with(|inputs| inputs.provider.clone()))/>
                    <Choice label="Hardware" name="hardwaretype"
                        options=Signal::derive(move || chosen.get().map(|template| template.hardwaretypes).unwrap_or_default())
                        default=Signal::derive(move || chosen.get().and_then(|template| template.default_hardwaretype))
                        value=Signal::derive(move || inputs.with(|inputs| inputs.hardwaretype.clone()))/>
                    <Choice label="Image" name="imagetype"
                        options=Signal::derive(move || chosen.get().map(|template| template.imagetypes).unwrap_or_default())
                        default=Signal::derive(move || chosen.get().and_then(|template| template.default_imagetype))
                        value=Signal::derive(move || inputs.with(|inputs| inputs.imagetype.clone()))/>
                </details>
                // Inner HTML: with JavaScript on, a <noscript>'s content is text.
                <noscript inner_html=r#"<button class="button button-quiet" type="submit">Preview</button>"#></noscript>
            </Form>
            <QuotaBox quota/>
        </section>
    }
    .into_any()
}

/// The right card: the preview, and the button that creates exactly that.
#[component]
fn GetCard(
    inputs: Inputs,
    plan: Result<PlanPreview, UiError>,
    create: ServerAction<CreateCluster>,
) -> impl IntoView {
    let create_error = action_error(create);
    let unnamed = inputs.name.is_empty();
    let buildable = plan.is_ok();
    let form = inputs.form();
    // Indexed names: the server function reads them as a list.
    let services = form
        .services
        .iter()
        .enumerate()
        .map(|(index, service)| {
            view! {
                <input type="hidden" name=crate::query::item("form[services]", index) value=service.clone()/>
            }
        })
        .collect_view();
    let optional = [
        ("form[provider]", form.provider.clone()),
        ("form[hardwaretype]", form.hardwaretype.clone()),
        ("form[imagetype]", form.imagetype.clone()),
    ]
    .into_iter()
    .filter_map(|(name, value)| {
        value.map(|value| view! { <input type="hidden" name=name value=value/> })
    })
    .collect_view();
    let parameters = form
        .parameters
        .iter()
        .map(|(name, value)| {
            view! {
                <input type="hidden" name=format!("form[parameters][{name}]") value=value.clone()/>
            }
        })
        .collect_view();
    view! {
        <section class="card" aria-labelledby="get">
            <h2 id="get">"What you will get"</h2>
            {match plan {
                Ok(plan) => view! { <PlanView preview=plan/> }.into_any(),
                Err(error) => view! { <Unsatisfiable error/> }.into_any(),
            }}
            <ActionForm action=create attr:class="confirm">
                <CsrfField/>
                <input type="hidden" name="form[name]" value=form.name.clone()/>
                <input type="hidden" name="form[template]" value=form.template.clone()/>
                <input type="hidden" name="form[size]" value=form.size.clone()/>
                {services}
                {optional}
                {parameters}
                <FormError error=create_error/>
                <button class="button" type="submit" data-testid="create-cluster"
                    disabled=move || !buildable || create.pending().get()>
                    {move || if create.pending().get() { "Creating…" } else { "Create cluster" }}
                </button>
                {unnamed.then(|| view! {
                    <p class="hint">"Give the cluster a name to create it."</p>
                })}
            </ActionForm>
        </section>
    }
}

fn size_hint(template: TemplateChoice) -> String {
    match (template.min_size, template.max_size) {
        (Some(min), Some(max)) => format!("This template takes {min} to {max} nodes."),
        (Some(min), None) => format!("This template takes at least {min} nodes."),
        (None, Some(max)) => format!("This template takes at most {max} nodes."),
        (None, None) => String::new(),
    }
}

#[component]
fn QuotaBox(quota: QuotaUse) -> impl IntoView {
    let limit = |used: u64, max: Option<i64>| match max {
        Some(max) => format!("{used} of {max}"),
        None => format!("{used} (no limit)"),
    };
    view! {
        <dl class="quota" aria-label="Your team's quota">
            <dt>"Clusters"</dt><dd>{limit(quota.clusters, quota.max_clusters)}</dd>
            <dt>"Nodes"</dt><dd>{limit(quota.nodes, quota.max_nodes)}</dd>
        </dl>
    }
}

/// Why the request cannot be met, each reason on its own line (the solver names
/// the nearest sizes that work).
#[component]
fn Unsatisfiable(error: UiError) -> impl IntoView {
    let message = error.to_string();
    // The solver ends its message with the sizes that would work.
    let nearest = message
        .rsplit_once("(nearest")
        .map(|(_, rest)| format!("Nearest{}", rest.trim_end_matches(')')));
    let body = match &error {
        UiError::Invalid { problems, .. } if !problems.is_empty() => {
            let reasons = problems
                .iter()
                .map(|problem| {
                    // A parameter's problem says which parameter.
                    let message = match problem.field.strip_prefix("parameters.") {
                        Some(name) => format!("{name}: {}", problem.message),
                        None => problem.message.clone(),
                    };
                    view! { <li>{message}</li> }
                })
                .collect_view();
            view! {
                <p><strong>"This cannot be built:"</strong></p>
                <ul>{reasons}</ul>
                {nearest.map(|nearest| view! { <p class="nearest">{nearest}</p> })}
            }
            .into_any()
        }
        _ => view! { <p><strong>"This cannot be built: "</strong>{message}</p> }.into_any(),
    };
    view! {
        <div class="unsatisfiable" role="alert" data-testid="unsatisfiable">{body}</div>
    }
}

/// A choice the template makes by default and the user may override.
#[component]
fn Choice(
    label: &'static str,
    name: &'static str,
    #[prop(into)] options: Signal<Vec<String>>,
    #[prop(into)] default: Signal<Option<String>>,
    #[prop(into)] value: Signal<String>,
) -> impl IntoView {
    view! {
        <div class="choice">
            <label for=name>{label}</label>
            <select id=name name=name>
                <option value="" selected=move || value.with(String::is_empty)>
                    {move || match default.get() {
                        Some(default) => format!("template default ({default})"),
                        None => "template default".to_owned(),
                    }}
                </option>
                {move || options.get().into_iter().map(|option| {
                    let selected = value.with(|value| *value == option);
                    view! { <option value=option.clone() selected=selected>{option.clone()}</option> }
                }).collect_view()}
            </select>
        </div>
    }
}

/// The chosen template's parameters as fields of their types, each with what is wrong
/// with its value: found here for the value shown, or by the server on create.
#[component]
fn ParameterFields(
    template: TemplateChoice,
    values: Vec<(String, String)>,
    error: FormErrors,
) -> impl IntoView {
    let parameters = template.parameters();
    if parameters.is_empty() {
        return ().into_any();
    }
    let fields = parameters
        .into_iter()
        .map(|(name, parameter)| {
            let value = values
                .iter()
                .find(|(given, _)| *given == name)
                .map(|(_, value)| value.clone())
                .unwrap_or_default();
            parameter_field(name, parameter, value, error)
        })
        .collect_view();
    view! {
        <fieldset class="field parameters" data-testid="parameters">
            <legend>"Parameters"</legend>
            {fields}
        </fieldset>
    }
    .into_any()
}

/// One parameter's field: label, control, description and problems.
fn parameter_field(
    name: String,
    parameter: Parameter,
    value: String,
    error: FormErrors,
) -> impl IntoView {
    let id = format!("param-{name}");
    let input_name = format!("{PARAM_PREFIX}{name}");
    let field = format!("parameters.{name}");
    let label = parameter.label_or(&name).to_owned();
    let problem = if value.trim().is_empty() {
        None
    } else {
        parameter
            .check_value(&serde_json::Value::String(value.clone()))
            .err()
    };
    let invalid = problem.is_some().then_some("true");
    let bound = |bound: &Option<serde_json::Number>| bound.as_ref().map(ToString::to_string);
    let required = parameter.required;
    let control = match parameter.kind {
        ParameterType::Choice => {
            let options = parameter
                .choices
                .iter()
                .map(|choice| {
                    let selected = *choice == value;
                    view! { <option value=choice.clone() selected=selected>{choice.clone()}</option> }
                })
                .collect_view();
            let blank = (value.is_empty() || !required)
                .then(|| view! { <option value="" selected=value.is_empty()>"(none)"</option> });
            view! {
                <select id=id.clone() name=input_name aria-invalid=invalid>{blank}{options}</select>
            }
            .into_any()
        }
        ParameterType::Boolean => view! {
            <input type="checkbox" id=id.clone() name=input_name value="true"
                checked=value == "true" aria-invalid=invalid/>
        }
        .into_any(),
        ParameterType::Integer | ParameterType::Number => {
            let step = if parameter.kind == ParameterType::Integer {
                "1"
            } else {
                "any"
            };
            view! {
                <input type="number" id=id.clone() name=input_name value=value step=step
                    min=bound(&parameter.minimum) max=bound(&parameter.maximum)
                    required=required aria-invalid=invalid/>
            }
            .into_any()
        }
        ParameterType::String => view! {
            <input id=id.clone() name=input_name value=value pattern=parameter.pattern.clone()
                required=required aria-invalid=invalid/>
        }
        .into_any(),
    };
    let shown = field.clone();
    view! {
        <div class="field" data-parameter=name>
            <label for=id>{label}</label>
            {control}
            {parameter.description.map(|description| view! { <p class="hint">{description}</p> })}
            {problem.map(|problem| view! {
                <p class="field-error" data-field=field.clone()>{problem}</p>
            })}
            {move || {
                error
                    .get()
                    .map(|error| error.problems_for(&shown))
                    .unwrap_or_default()
                    .into_iter()
                    .map(|message| view! { <p class="field-error" data-field=shown.clone()>{message}</p> })
                    .collect_view()
            }}
        </div>
    }
}
