//! The kind-specific inputs of the entity form (see `fields` for how they post):
//! services get dependency pickers of the catalog's services and an action per
//! stage; templates get compatibility and default pickers, size, per-service
//! quantities and allowed types (pickers too), layout groups and the lease;
//! partial templates get the compatibility and default pickers.

use domain::catalog::automator::AutomatorType;
use leptos::prelude::*;
use serde_json::Value;

use super::fields::{names_at, text_at};
use crate::server_fns::admin::{CatalogNames, EntityKind};

/// The stages a service can have an action for, in the order they run.
pub const STAGES: [&str; 6] = [
    "install",
    "configure",
    "initialize",
    "start",
    "stop",
    "remove",
];

/// Every pointer the structured fields own for `kind` (with their type prefix).
pub fn pointers(kind: EntityKind, names: &CatalogNames) -> Vec<String> {
    let mut pointers: Vec<String> = Vec::new();
    match kind {
        EntityKind::Provider => pointers.push("/providertype".to_owned()),
        EntityKind::Service => {
            pointers.push(",/dependencies/provides".to_owned());
            for list in SERVICE_LISTS {
                pointers.push(list.0.to_owned());
            }
            for stage in STAGES {
                pointers.push(format!("/provisioner/actions/{stage}/type"));
                // The resource column shows the field its automator runs (see
                // `ServiceFields`); a stored action has only its automator's fields.
                for main in ["script", "playbook", "manifest"] {
                    pointers.push(format!("/provisioner/actions/{stage}/fields/{main}"));
                }
                pointers.push(format!("/provisioner/actions/{stage}/fields/args"));
            }
        }
        EntityKind::PartialTemplate => pointers.extend(compatibility_pointers()),
        EntityKind::ClusterTemplate => {
            pointers.extend(compatibility_pointers());
            pointers.push("#/constraints/size/min".to_owned());
            pointers.push("#/constraints/size/max".to_owned());
            pointers.push(";/constraints/layout/mustcoexist".to_owned());
            pointers.push(";/constraints/layout/cantcoexist".to_owned());
            for lease in ["initial", "max", "step"] {
                pointers.push(format!("/administration/leaseduration/{lease}"));
            }
            for service in &names.services {
                pointers.extend(service_constraint(service).map(|(pointer, _)| pointer));
            }
        }
        EntityKind::HardwareType | EntityKind::ImageType => {}
    }
    pointers
}

/// What the compatibility and defaults fields (templates and partials) own.
fn compatibility_pointers() -> impl Iterator<Item = String> {
    TEMPLATE_LISTS
        .into_iter()
        .map(|list| list.0)
        .chain(DEFAULT_CHOICES)
        .map(str::to_owned)
}

const DEFAULT_CHOICES: [&str; 3] = [
    "/defaults/provider",
    "/defaults/hardwaretype",
    "/defaults/imagetype",
];

/// What the resource column takes: a shell script resource, or `files/<name>` and
/// `archives/<name>/<path>` for playbooks and manifests.
const RESOURCE_HINT: &str = "script or files/NAME";

const SERVICE_LISTS: [(&str, &str); 5] = [
    (
        "/dependencies/conflicts",
        "Conflicts with (never on the same cluster)",
    ),
    ("/dependencies/install/requires", "Install requires"),
    ("/dependencies/install/uses", "Install uses (order only)"),
    ("/dependencies/runtime/requires", "Runtime requires"),
    ("/dependencies/runtime/uses", "Runtime uses (order only)"),
];

const TEMPLATE_LISTS: [(&str, &str); 4] = [
    (
        "/compatibility/services",
        "Compatible services (none = all)",
    ),
    (
        "/compatibility/hardwaretypes",
        "Compatible hardware types (none = all)",
    ),
    (
        "/compatibility/imagetypes",
        "Compatible image types (none = all)",
    ),
    ("/defaults/services", "Default services"),
];

fn service_constraint(service: &str) -> [(String, &'static str); 4] {
    let base = format!(
        "/constraints/services/{}",
        service.replace('~', "~0").replace('/', "~1")
    );
    [
        (format!("#{base}/quantities/min"), "min"),
        (format!("#{base}/quantities/max"), "max"),
        (format!(",{base}/hardwaretypes"), "hardware"),
        (format!(",{base}/imagetypes"), "images"),
    ]
}

/// A checkbox list of `options` owning the list at `pointer`.
#[component]
fn Picker(
    pointer: &'static str,
    label: &'static str,
    options: Vec<String>,
    body: Value,
) -> impl IntoView {
    let chosen = names_at(&body, pointer);
    let id = pointer.trim_start_matches('/').replace('/', "-");
    let boxes = if options.is_empty() {
        view! { <span class="muted">"none in the catalog yet"</span> }.into_any()
    } else {
        options
            .into_iter()
            .map(|option| {
                let checked = chosen.contains(&option);
                view! {
                    <label class="check">
                        <input type="checkbox" name="picks[]" value=format!("{pointer}={option}") checked=checked/>
                        " " {option.clone()}
                    </label>
                }
            })
            .collect_view()
            .into_any()
    };
    view! {
        <fieldset class="field picker" data-picker=id>
            <legend>{label}</legend>
            <input type="hidden" name="managed[]" value=pointer/>
            {boxes}
        </fieldset>
    }
}

/// A text input owning the value at `pointer` (typed by its prefix).
#[component]
fn Text(
    pointer: String,
    label: String,
    body: Value,
    #[prop(optional)] placeholder: &'static str,
    #[prop(optional)] short: bool,
) -> impl IntoView {
    let value = text_at(&body, &pointer);
    let id = format!("f{}", pointer.replace(['/', '#', ',', ';', '~'], "-"));
    view! {
        <div class="field" class:field-short=short>
            <label for=id.clone()>{label}</label>
            <input type="hidden" name="text_at[]" value=pointer/>
            <input id=id name="text[]" value=value placeholder=placeholder/>
        </div>
    }
}

/// A select of `options` (or none) owning the value at `pointer`.
#[component]
fn Choice(
    pointer: &'static str,
    label: &'static str,
    options: Vec<String>,
    body: Value,
) -> impl IntoView {
    let current = text_at(&body, pointer);
    let id = format!("f{}", pointer.replace('/', "-"));
    let options = options
        .into_iter()
        .map(|option| {
            let selected = option == current;
            view! { <option value=option.clone() selected=selected>{option.clone()}</option> }
        })
        .collect_view();
    view! {
        <div class="field field-short">
            <label for=id.clone()>{label}</label>
            <input type="hidden" name="text_at[]" value=pointer/>
            <select id=id name="text[]">
                <option value="">"(none)"</option>
                {options}
            </select>
        </div>
    }
}

#[component]
pub fn StructuredFields(kind: EntityKind, body: Value, names: CatalogNames) -> impl IntoView {
    match kind {
        EntityKind::Provider => view! {
            <div class="structured">
                <div class="field field-short">
                    <label for="f-providertype">"Provider type"</label>
                    <input type="hidden" name="text_at[]" value="/providertype"/>
                    <select id="f-providertype" name="text[]">
                        {["local", "ssh-pool"].map(|option| {
                            let selected = text_at(&body, "/providertype") == option;
                            view! { <option value=option selected=selected>{option}</option> }
                        })}
                    </select>
                </div>
            </div>
        }
        .into_any(),
        EntityKind::Service => view! { <ServiceFields body names/> }.into_any(),
        EntityKind::ClusterTemplate => view! { <TemplateFields body names/> }.into_any(),
        EntityKind::PartialTemplate => view! {
            <div class="structured"><CompatibilityFields body names/></div>
        }
        .into_any(),
        EntityKind::HardwareType | EntityKind::ImageType => ().into_any(),
    }
}

#[component]
fn ServiceFields(body: Value, names: CatalogNames) -> impl IntoView {
    let pickers = SERVICE_LISTS
        .into_iter()
        .map(|(pointer, label)| {
            view! { <Picker pointer label options=names.services.clone() body=body.clone()/> }
        })
        .collect_view();
    let actions = STAGES
        .into_iter()
        .map(|stage| {
            let kind = text_at(&body, &format!("/provisioner/actions/{stage}/type"));
            // The column edits the automator's resource field: what it runs.
            let main = match AutomatorType::parse(&kind) {
                Some(AutomatorType::Ansible) => "playbook",
                Some(AutomatorType::Puppet) => "manifest",
                Some(AutomatorType::Shell) | None => "script",
            };
            let script = text_at(&body, &format!("/provisioner/actions/{stage}/fields/{main}"));
            let args = text_at(&body, &format!("/provisioner/actions/{stage}/fields/args"));
            let known = AutomatorType::ALL.map(|automator| {
                let name = automator.as_str();
                view! { <option value=name selected=kind == name>{name}</option> }
            });
            view! {
                <tr data-stage=stage>
                    <th scope="row">{stage}</th>
                    <td>
                        <input type="hidden" name="text_at[]" value=format!("/provisioner/actions/{stage}/type")/>
                        <select name="text[]" aria-label=format!("{stage} automator")>
                            <option value="">"(nothing)"</option>
                            {known.to_vec()}
                            {(!kind.is_empty() && AutomatorType::parse(&kind).is_none()).then(|| view! {
                                <option value=kind.clone() selected=true>{kind.clone()}</option>
                            })}
                        </select>
                    </td>
                    <td>
                        <input type="hidden" name="text_at[]" value=format!("/provisioner/actions/{stage}/fields/{main}")/>
                        <input name="text[]" value=script aria-label=format!("{stage} {main}") placeholder=RESOURCE_HINT/>
                    </td>
                    <td>
                        <input type="hidden" name="text_at[]" value=format!("/provisioner/actions/{stage}/fields/args")/>
                        <input name="text[]" value=args aria-label=format!("{stage} arguments")/>
                    </td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="structured">
            <h3>"Dependencies"</h3>
            <Text pointer=",/dependencies/provides".to_owned() label="Provides (aliases, comma-separated)".to_owned() body=body.clone()/>
            <div class="picker-grid">{pickers}</div>
            <h3>"Actions"</h3>
            <div class="table-scroll">
                <table class="data compact actions-table">
                    <thead><tr><th scope="col">"Stage"</th><th scope="col">"Automator"</th>
                        <th scope="col">"Script, playbook or manifest"</th><th scope="col">"Arguments"</th></tr></thead>
                    <tbody>{actions}</tbody>
                </table>
            </div>
        </div>
    }
}

/// Compatibility pickers and default choices, shared by templates and partials.
#[component]
fn CompatibilityFields(body: Value, names: CatalogNames) -> impl IntoView {
    let option_lists = [
        names.services.clone(),
        names.hardware.clone(),
        names.images.clone(),
        names.services.clone(),
    ];
    let pickers = TEMPLATE_LISTS
        .into_iter()
        .zip(option_lists)
        .map(|((pointer, label), options)| view! { <Picker pointer label options body=body.clone()/> })
        .collect_view();
    view! {
        <h3>"Compatibility and defaults"</h3>
        <div class="picker-grid">{pickers}</div>
        <div class="row-fields">
            <Choice pointer="/defaults/provider" label="Default provider" options=names.providers.clone() body=body.clone()/>
            <Choice pointer="/defaults/hardwaretype" label="Default hardware" options=names.hardware.clone() body=body.clone()/>
            <Choice pointer="/defaults/imagetype" label="Default image" options=names.images.clone() body=body.clone()/>
        </div>
    }
}

#[component]
fn TemplateFields(body: Value, names: CatalogNames) -> impl IntoView {
    let quantities = names
        .services
        .iter()
        .map(|service| {
            let cells = service_constraint(service)
                .into_iter()
                .map(|(pointer, what)| {
                    let label = format!("{service} {what}");
                    let options = match what {
                        "hardware" => names.hardware.clone(),
                        "images" => names.images.clone(),
                        _ => {
                            let value = text_at(&body, &pointer);
                            return view! {
                                <td>
                                    <input type="hidden" name="text_at[]" value=pointer/>
                                    <input name="text[]" value=value aria-label=label class="short"/>
                                </td>
                            }
                            .into_any();
                        }
                    };
                    let pointer = pointer.trim_start_matches(',').to_owned();
                    view! { <td><CellPicker chosen=names_at(&body, &pointer) pointer label options/></td> }
                        .into_any()
                })
                .collect_view();
            view! { <tr data-service=service.clone()><th scope="row">{service.clone()}</th>{cells}</tr> }
        })
        .collect_view();
    view! {
        <div class="structured">
            <CompatibilityFields body=body.clone() names=names.clone()/>
            <h3>"Constraints"</h3>
            <div class="row-fields">
                <Text pointer="#/constraints/size/min".to_owned() label="Fewest nodes".to_owned() body=body.clone() short=true/>
                <Text pointer="#/constraints/size/max".to_owned() label="Most nodes".to_owned() body=body.clone() short=true/>
            </div>
            <div class="row-fields">
                <TextLines pointer=";/constraints/layout/mustcoexist" label="Must coexist (one group per line: a, b)" body=body.clone()/>
                <TextLines pointer=";/constraints/layout/cantcoexist" label="Can't coexist (one group per line: a, b)" body=body.clone()/>
            </div>
            <p class="hint">"Per service: how many nodes carry it, and the hardware and image types it may use (none ticked = any)."</p>
            <div class="table-scroll">
                <table class="data compact quantities-table">
                    <thead><tr><th scope="col">"Service"</th><th scope="col">"Min"</th><th scope="col">"Max"</th>
                        <th scope="col">"Hardware"</th><th scope="col">"Images"</th></tr></thead>
                    <tbody>{quantities}</tbody>
                </table>
            </div>
            <h3>"Lease"</h3>
            <div class="row-fields">
                <Text pointer="/administration/leaseduration/initial".to_owned() label="Initial".to_owned() body=body.clone() placeholder="e.g. 7d (0 = unlimited)" short=true/>
                <Text pointer="/administration/leaseduration/max".to_owned() label="Longest".to_owned() body=body.clone() placeholder="e.g. 30d" short=true/>
                <Text pointer="/administration/leaseduration/step".to_owned() label="Extension step".to_owned() body=body.clone() placeholder="e.g. 1d" short=true/>
            </div>
        </div>
    }
}

/// A compact checkbox list in a table cell owning the list at `pointer` (a
/// service's allowed hardware or image types); each box is labelled for screen
/// readers and tests as "<label> <option>".
#[component]
fn CellPicker(
    pointer: String,
    label: String,
    options: Vec<String>,
    chosen: Vec<String>,
) -> impl IntoView {
    let boxes = options
        .into_iter()
        .map(|option| {
            let checked = chosen.contains(&option);
            view! {
                <label class="check">
                    <input type="checkbox" name="picks[]" value=format!("{pointer}={option}")
                        checked=checked aria-label=format!("{label} {option}")/>
                    " " {option.clone()}
                </label>
            }
        })
        .collect_view();
    view! {
        <div class="cell-picker" role="group" aria-label=label.clone()>
            <input type="hidden" name="managed[]" value=pointer.clone()/>
            {boxes}
        </div>
    }
}

#[component]
fn TextLines(pointer: &'static str, label: &'static str, body: Value) -> impl IntoView {
    let value = text_at(&body, pointer);
    let id = format!("f{}", pointer.replace(['/', ';'], "-"));
    view! {
        <div class="field">
            <label for=id.clone()>{label}</label>
            <input type="hidden" name="text_at[]" value=pointer/>
            <textarea id=id name="text[]" rows="3">{value}</textarea>
        </div>
    }
}
