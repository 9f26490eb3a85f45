//! `/admin/<kind>/new` (also `?from=<name>` to clone) and `/admin/<kind>/<name>/edit`:
//! the entity form. Name and description are fields; the rest of the entity is its
//! Coopr JSON, with the catalog's names listed beside it to pick from. The server
//! validates the whole catalog with the change and puts each problem next to its
//! field; nothing is saved while there is one.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};

use super::structured::StructuredFields;
use crate::components::errors::{action_error, FieldError, FormError};
use crate::components::form::Field;
use crate::components::session::CsrfField;
use crate::error::UiError;
use crate::server_fns::admin::entity::entity;
use crate::server_fns::admin::names::list_catalog_names;
use crate::server_fns::admin::save_entity::SaveEntity;
use crate::server_fns::admin::{CatalogNames, ConsoleKind, EntityKind, EntityPage};

/// What the form starts from: an entity to edit or clone, or nothing (new).
async fn load(kind: EntityKind, name: Option<String>) -> Result<Option<EntityPage>, UiError> {
    match name {
        Some(name) if !name.is_empty() => entity(kind, name).await.map(Some),
        _ => Ok(None),
    }
}

/// The form for a new entity (`editing` false; cloned from `?from=<name>` if
/// given) or for the entity the path names.
#[component]
pub fn EntityFormPage(kind: EntityKind, editing: bool) -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let source_name = move || {
        if editing {
            params.with(|params| params.get("name"))
        } else {
            query.with(|query| query.get("from"))
        }
    };
    let source = Resource::new(source_name, move |name| load(kind, name));
    let names = Resource::new(|| (), |_| list_catalog_names());
    let title = if editing { "Edit" } else { "New" };
    view! {
        <Title text=format!("{title} {} · Admin · Corral", kind.singular())/>
        <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match (source.await, names.await) {
                    (Ok(source), Ok(names)) => {
                        let clone_of = source
                            .as_ref()
                            .filter(|_| !editing)
                            .map(|page| page.name.clone());
                        view! { <EntityForm kind source editing clone_of names/> }.into_any()
                    }
                    (Err(error), _) | (_, Err(error)) => crate::pages::admin::layout::admin_error(error),
                }
            })}
        </Suspense>
    }
}

#[component]
fn EntityForm(
    kind: EntityKind,
    source: Option<EntityPage>,
    editing: bool,
    clone_of: Option<String>,
    names: CatalogNames,
) -> impl IntoView {
    let save = ServerAction::<SaveEntity>::new();
    let error = action_error(save);
    let (name, description, body) = match &source {
        Some(page) if editing => (
            page.name.clone(),
            page.description.clone(),
            page.rest.clone(),
        ),
        Some(page) => (
            format!("{}-copy", page.name),
            page.description.clone(),
            page.rest.clone(),
        ),
        None => (
            String::new(),
            String::new(),
            super::starter(kind).to_owned(),
        ),
    };
    let original = if editing { name.clone() } else { String::new() };
    // The structured fields show (and own) part of the body; the JSON field the rest.
    let full: serde_json::Value = serde_json::from_str(&body)
        .unwrap_or_else(|_| serde_json::Value::Object(Default::default()));
    let mut rest = full.clone();
    super::fields::strip(&mut rest, &super::structured::pointers(kind, &names));
    let body = serde_json::to_string_pretty(&rest).unwrap_or(body);
    let structured = kind != EntityKind::HardwareType && kind != EntityKind::ImageType;
    let body_label = if structured {
        "Other fields (Coopr JSON)"
    } else {
        "Definition (Coopr JSON)"
    };
    let aside_names = names.clone();
    let heading = match (&clone_of, editing) {
        (_, true) => format!("Edit {} {name}", kind.singular()),
        (Some(from), false) => format!("Clone {} {from}", kind.singular()),
        (None, false) => format!("New {}", kind.singular()),
    };
    let back = if editing {
        format!("/admin/{}/{}", kind.path(), name)
    } else {
        format!("/admin/{}", kind.path())
    };
    view! {
        <nav class="crumbs" aria-label="Breadcrumb">
            <a href=format!("/admin/{}", kind.path())>{kind.title()}</a> " / " <span>{heading.clone()}</span>
        </nav>
        <div class="page-head"><h1>{heading}</h1></div>
        <div class="form-grid">
            <section class="card">
                <ActionForm action=save attr:class="stack" attr:data-testid="entity-form">
                    <CsrfField/>
                    <input type="hidden" name="kind" value=kind.key()/>
                    <input type="hidden" name="original" value=original/>
                    // These hints are written out: they carry the ids the controls'
                    // aria-describedby names.
                    <Field label="Name" id="name" error field="name">
                        <input id="name" name="name" value=name readonly=editing required
                            aria-describedby="name-hint"/>
                        <p class="hint" id="name-hint">
                            {if editing { "Names cannot change; clone to use another name." } else { "Letters, digits, '_', '.' and '-'." }}
                        </p>
                    </Field>
                    <Field label="Description" id="description" error field="description">
                        <input id="description" name="description" value=description/>
                    </Field>
                    <StructuredFields kind body=full names=names.clone()/>
                    <FieldError error field="structured"/>
                    <Field label=body_label id="body" error field="body">
                        <textarea id="body" name="body" class="code" rows="22" spellcheck="false"
                            aria-describedby="body-hint">{body}</textarea>
                        <p class="hint" id="body-hint">{hint(kind)}</p>
                    </Field>
                    <FormError error/>
                    <div class="actions">
                        <button class="button" type="submit" data-testid="save-entity"
                            disabled=move || save.pending().get()>
                            {move || if save.pending().get() { "Saving…" } else { "Save" }}
                        </button>
                        <a class="button button-quiet" href=back>"Cancel"</a>
                    </div>
                </ActionForm>
            </section>
            <aside class="card" aria-labelledby="names-head">
                <h2 id="names-head">"In this catalog"</h2>
                <NameLists names=aside_names/>
            </aside>
        </div>
    }
}

fn hint(kind: EntityKind) -> &'static str {
    match kind {
        EntityKind::Provider => "provisioner: the provider type's admin fields.",
        EntityKind::HardwareType => "providermap: per provider, the flavor nodes of this type get.",
        EntityKind::ImageType => "providermap: per provider, the image (and sshuser) nodes of this type get.",
        EntityKind::Service => "Anything the fields above do not cover, e.g. links, or other fields of an action (provisioner.actions.<stage>.fields).",
        EntityKind::ClusterTemplate => "Anything the fields above do not cover, e.g. defaults.config, defaults.dnsSuffix, links, extends/includes.",
        EntityKind::PartialTemplate => "Anything the fields above do not cover, e.g. defaults.config, and immutable (true: templates including it cannot override its config).",
    }
}

/// The catalog's names, per kind, to pick from while writing references.
#[component]
fn NameLists(names: CatalogNames) -> impl IntoView {
    let group = |title: &'static str, items: Vec<String>| {
        let chips = if items.is_empty() {
            view! { <span class="muted">"none yet"</span> }.into_any()
        } else {
            items
                .into_iter()
                .map(|item| view! { <code class="chip">{item}</code> " " })
                .collect_view()
                .into_any()
        };
        view! { <h3>{title}</h3><p>{chips}</p> }
    };
    view! {
        <div class="name-lists">
            {group("Providers", names.providers)}
            {group("Hardware types", names.hardware)}
            {group("Image types", names.images)}
            {group("Services", names.services)}
        </div>
    }
}
