//! `/admin/audit`: who changed what and when, newest first, filtered by user and
//! action prefix (a GET form, so filters are bookmarkable), a page of 100 at a time:
//! "Older" is a plain link (`&before=`) to the page after the last entry shown.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::Form;
use leptos_router::hooks::use_query_map;

use crate::components::form::Field;
use crate::components::table::DataTable;
use crate::components::time::timestamp;
use crate::query::encode_value;
use crate::server_fns::admin::audit::audit_log;

#[component]
pub fn AuditPage() -> impl IntoView {
    let query = use_query_map();
    let filters = Memo::new(move |_| {
        query.with(|query| {
            (
                query.get("actor").unwrap_or_default(),
                query.get("action").unwrap_or_default(),
            )
        })
    });
    let before = Memo::new(move |_| query.with(|query| query.get("before").unwrap_or_default()));
    let entries = Resource::new(
        move || (filters.get(), before.get()),
        |((actor, action), before)| audit_log(actor, action, before),
    );
    // The log's address with the filters, and `before` when given.
    let href = move |before: Option<&str>| {
        let (actor, action) = filters.get_untracked();
        let mut pairs = Vec::new();
        if !actor.is_empty() {
            pairs.push(format!("actor={}", encode_value(&actor)));
        }
        if !action.is_empty() {
            pairs.push(format!("action={}", encode_value(&action)));
        }
        if let Some(before) = before {
            pairs.push(format!("before={}", encode_value(before)));
        }
        if pairs.is_empty() {
            "/admin/audit".to_owned()
        } else {
            format!("/admin/audit?{}", pairs.join("&"))
        }
    };
    view! {
        <Title text="Audit log · Admin · Corral"/>
        <div class="page-head"><h1>"Audit log"</h1></div>
        <Form method="GET" action="" attr:class="filters">
            <Field label="User" id="audit-actor">
                <input id="audit-actor" name="actor" value=move || filters.get().0/>
            </Field>
            <Field label="Action starts with" id="audit-action">
                <input id="audit-action" name="action" value=move || filters.get().1 placeholder="e.g. catalog. or cluster." list="audit-actions"/>
                <datalist id="audit-actions">
                    <option value="catalog."/><option value="cluster."/><option value="user."/>
                    <option value="tenant."/><option value="token."/><option value="session."/>
                </datalist>
            </Field>
            <button class="button button-quiet" type="submit">"Filter"</button>
        </Form>
        <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match entries.await {
                    Ok(page) if page.rows.is_empty() => view! { <p class="muted">"Nothing matches."</p> }.into_any(),
                    Ok(page) => {
                        let newest = (!before.get_untracked().is_empty()).then(|| href(None));
                        let older = page.older.as_deref().map(|older| href(Some(older)));
                        let pager = (newest.is_some() || older.is_some()).then(|| view! {
                            <nav class="pager" aria-label="Pages" data-testid="audit-pager">
                                {newest.map(|href| view! { <a href=href rel="first">"← Newest"</a> " " })}
                                {older.map(|href| view! { <a href=href rel="next" data-testid="older-page">"Older →"</a> })}
                            </nav>
                        });
                        let rows = page.rows;
                        let rows = rows.into_iter().map(|row| {
                            // A recorded terminal session plays here (its player is
                            // loaded on the first click, like the terminal).
                            let play = row.recorded.then(|| view! {
                                <button type="button" class="button button-quiet" data-testid="recording-play"
                                    data-player-src=format!("/api/v1/audit/{}/recording", row.id)
                                    data-player-label=row.target.clone()
                                    on:click=play_recording>
                                    "Play"
                                </button>
                            });
                            view! {
                                <tr>
                                    <td>{timestamp(row.at_ms)}</td>
                                    <td>{row.actor}</td>
                                    <td><code>{row.action}</code></td>
                                    <td>{row.target}</td>
                                    <td class="muted">{row.address.unwrap_or_default()}</td>
                                    <td>{play}</td>
                                </tr>
                            }
                        }).collect_view();
                        view! {
                            <DataTable card=true testid="audit-table" columns=&["When", "User", "Action", "Target", "From", "Recording"]>
                                {rows}
                            </DataTable>
                            {pager}
                        }.into_any()
                    }
                    Err(error) => crate::pages::admin::layout::admin_error(error),
                }
            })}
        </Suspense>
    }
}

/// A Play button's click: loads the session player (browser only).
fn play_recording(event: leptos::ev::MouseEvent) {
    #[cfg(feature = "hydrate")]
    crate::terminal::play(&event);
    #[cfg(not(feature = "hydrate"))]
    let _ = event;
}
