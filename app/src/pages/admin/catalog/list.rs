//! `/admin/<kind>`: the kind's entities, with a link to create one.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::time::timestamp;
use crate::server_fns::admin::entities::list_entities;
use crate::server_fns::admin::{ConsoleKind, EntityKind, EntityRow};

#[component]
pub fn EntityListPage(kind: EntityKind) -> impl IntoView {
    let entities = Resource::new(move || kind, list_entities);
    let query = use_query_map();
    let deleted = move || query.with(|query| query.get("deleted"));
    view! {
        <Title text=format!("{} · Admin · Corral", kind.title())/>
        <div class="page-head">
            <h1>{kind.title()}</h1>
            // Offered once the list loads, so a refused visitor is not offered it.
            <Suspense>
                {move || Suspend::new(async move {
                    entities.await.is_ok().then(|| view! {
                        <a class="button" href=format!("/admin/{}/new", kind.path()) data-testid="new-entity">
                            "New " {kind.singular()}
                        </a>
                    })
                })}
            </Suspense>
        </div>
        {move || deleted().map(|name| view! {
            <p class="banner banner-ok" role="status">"Deleted " <strong>{name}</strong> "."</p>
        })}
        <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match entities.await {
                    Ok(rows) if rows.is_empty() => view! {
                        <section class="card empty">
                            <h2>"No " {kind.title().to_lowercase()} " yet"</h2>
                            <p>"Create one, or import a Coopr catalog under "
                                <a href="/admin/catalog">"Import / export"</a> "."</p>
                        </section>
                    }.into_any(),
                    Ok(rows) => view! { <EntityTable kind rows/> }.into_any(),
                    Err(error) => crate::pages::admin::layout::admin_error(error),
                }
            })}
        </Suspense>
    }
}

#[component]
fn EntityTable(kind: EntityKind, rows: Vec<EntityRow>) -> impl IntoView {
    let rows = rows
        .into_iter()
        .map(|row| {
            let href = format!("/admin/{}/{}", kind.path(), row.name);
            view! {
                <tr data-entity=row.name.clone()>
                    <th scope="row"><a href=href>{row.name.clone()}</a></th>
                    <td>{row.description}</td>
                    <td class="muted">{row.summary}</td>
                    <td class="num">{row.version}</td>
                    <td>{timestamp(row.updated_at_ms)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="card table-card">
            <div class="table-scroll">
                <table class="data" data-testid="entity-table">
                    <thead><tr>
                        <th scope="col">"Name"</th><th scope="col">"Description"</th>
                        <th scope="col">"Summary"</th><th scope="col" class="num">"Version"</th>
                        <th scope="col">"Changed"</th>
                    </tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </div>
    }
}
