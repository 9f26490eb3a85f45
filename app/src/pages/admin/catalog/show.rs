//! `/admin/<kind>/<name>`: an entity's definition, its actions (edit, clone,
//! delete — refused with the list of users while something uses it), its version
//! history with a diff against the previous version (`?diff=<version>`), for
//! templates the try-it panel, and for providers their credentials and Test button.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};

use crate::components::diff::DiffView;
use crate::components::errors::action_error;
use crate::components::session::CsrfField;
use crate::components::time::timestamp;
use crate::error::UiError;
use crate::pages::admin::provider_panel::ProviderPanel;
use crate::pages::admin::try_it::TryIt;
use crate::server_fns::admin::catalog_bundle::catalog_bundle;
use crate::server_fns::admin::delete_entity::DeleteEntity;
use crate::server_fns::admin::entity::entity;
use crate::server_fns::admin::{ConsoleKind, EntityKind, EntityPage};

#[component]
pub fn EntityShowPage(kind: EntityKind) -> impl IntoView {
    let params = use_params_map();
    let name = move || params.with(|params| params.get("name").unwrap_or_default());
    let page = Resource::new(name, move |name| entity(kind, name));
    // Made here rather than inside the page's `Suspend` (see the admin layout).
    let bundle = Resource::new(
        || (),
        move |_| async move {
            if kind == EntityKind::ClusterTemplate {
                catalog_bundle().await
            } else {
                Ok(serde_json::Value::Null)
            }
        },
    );
    view! {
        <Title text=move || format!("{} · {} · Admin · Corral", name(), kind.title())/>
        <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match page.await {
                    Ok(page) => view! { <EntityView page bundle/> }.into_any(),
                    Err(error) => crate::pages::admin::layout::admin_error(error),
                }
            })}
        </Suspense>
    }
}

#[component]
fn EntityView(
    page: EntityPage,
    bundle: Resource<Result<serde_json::Value, UiError>>,
) -> impl IntoView {
    let query = use_query_map();
    let saved = move || query.with(|query| query.get("saved").is_some());
    let kind = page.kind;
    let base = format!("/admin/{}/{}", kind.path(), page.name);
    let delete = ServerAction::<DeleteEntity>::new();
    let delete_error = action_error(delete);
    let is_template = kind == EntityKind::ClusterTemplate;
    let name = page.name.clone();
    view! {
        <nav class="crumbs" aria-label="Breadcrumb">
            <a href=format!("/admin/{}", kind.path())>{kind.title()}</a> " / " <span>{page.name.clone()}</span>
        </nav>
        <div class="page-head">
            <div>
                <h1>{page.name.clone()}</h1>
                <p class="muted">{page.description.clone()} " · version " {page.version}</p>
            </div>
            <div class="actions">
                <a class="button" href=format!("{base}/edit") data-testid="edit-entity">"Edit"</a>
                <a class="button button-quiet" href=format!("/admin/{}/new?from={}", kind.path(), page.name)>"Clone"</a>
                <ActionForm action=delete attr:class="inline">
                    <CsrfField/>
                    <input type="hidden" name="kind" value=kind.key()/>
                    <input type="hidden" name="name" value=name/>
                    <button class="button button-danger" type="submit" data-testid="delete-entity">"Delete"</button>
                </ActionForm>
            </div>
        </div>
        {move || saved().then(|| view! {
            <p class="banner banner-ok" role="status">"Saved."</p>
        })}
        {move || delete_error.get().map(|error| view! { <DeleteRefused error/> })}
        {is_template.then(|| view! { <TryIt template=page.name.clone() bundle/> })}
        {page.credentials.clone().map(|credentials| view! { <ProviderPanel credentials/> })}
        <section class="card">
            <h2>"Definition"</h2>
            <pre class="json" data-testid="entity-body">{page.body.clone()}</pre>
        </section>
        <History page base/>
    }
}

/// Why a delete was refused: every entity still using this one.
#[component]
fn DeleteRefused(error: UiError) -> impl IntoView {
    let uses = match &error {
        UiError::Invalid { problems, .. } => problems
            .iter()
            .map(|problem| view! { <li><code>{problem.field.clone()}</code> ": " {problem.message.clone()}</li> })
            .collect_view()
            .into_any(),
        _ => ().into_any(),
    };
    view! {
        <div class="banner banner-bad" role="alert" data-testid="delete-refused">
            <p><strong>"Not deleted: "</strong>{error.to_string()}</p>
            <ul>{uses}</ul>
        </div>
    }
}

#[component]
fn History(page: EntityPage, base: String) -> impl IntoView {
    let query = use_query_map();
    let history = StoredValue::new(page.history);
    let chosen = move || {
        query
            .with(|query| query.get("diff"))
            .and_then(|raw| raw.parse::<i64>().ok())
            .unwrap_or(page.version)
    };
    let rows = history.with_value(|history| {
        history
            .iter()
            .rev()
            .map(|revision| {
                let what = if revision.body.is_none() {
                    "deleted"
                } else if revision.version == 1 {
                    "created"
                } else {
                    "changed"
                };
                let href = format!("{base}?diff={}#history", revision.version);
                let version = revision.version;
                view! {
                    <tr class:row-selected=move || chosen() == version>
                        <td class="num">{revision.version}</td>
                        <td>{what}</td>
                        <td>{revision.author.clone().unwrap_or_else(|| "system".to_owned())}</td>
                        <td>{timestamp(revision.at_ms)}</td>
                        <td><a href=href>"Show diff"</a></td>
                    </tr>
                }
            })
            .collect_view()
    });
    let diff = move || {
        let version = chosen();
        history.with_value(|history| {
            let index = history
                .iter()
                .position(|revision| revision.version == version)?;
            let new = history[index].body.clone().unwrap_or_default();
            let old = index
                .checked_sub(1)
                .and_then(|previous| history[previous].body.clone())
                .unwrap_or_default();
            Some(view! {
                <h3>"Version " {version} " against the one before"</h3>
                <DiffView old new/>
            })
        })
    };
    view! {
        <section class="card" id="history">
            <h2>"History"</h2>
            <div class="table-scroll">
                <table class="data" data-testid="history">
                    <thead><tr>
                        <th scope="col" class="num">"Version"</th><th scope="col">"Change"</th>
                        <th scope="col">"By"</th><th scope="col">"When"</th><th scope="col"></th>
                    </tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
            {diff}
        </section>
    }
}
