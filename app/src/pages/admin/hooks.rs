//! `/admin/hooks` (issue 43): the tenant's lifecycle hooks for its admins: each hook's
//! URL, what it hears (events) or is asked about (a gate, with its timeout and
//! failure policy), its format and when it was added, with buttons to send a test
//! event and to remove it, and its latest deliveries (event, delivery id, state,
//! status code, time, the start of the answer) each with "Redeliver". A form adds a
//! hook; its signing secret is shown once, right after (with JavaScript; without,
//! the form's post cannot show it, and the page says to use the CLI or the API).

use api_types::{DeliveryState, DeliveryView, GateOperation, HookEvent, HookView};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::errors::{action_error, FormError};
use crate::components::form::{AdminForm, IdButton, SelectField, TextField};
use crate::components::session::CsrfField;
use crate::components::table::DataTable;
use crate::components::time::timestamp;
use crate::pages::admin::loaded::{Loaded, OnceLoaded};
use crate::server_fns::admin::hooks::{
    hooks_page, AddHook, HookWithDeliveries, Redeliver, RemoveHook, TestHook,
};

fn delivery_class(state: DeliveryState) -> &'static str {
    match state {
        DeliveryState::Delivered => "state state-ok",
        DeliveryState::Failed => "state state-bad",
        DeliveryState::Pending | DeliveryState::Sending => "state state-busy",
    }
}

/// What a hook hears, or what it is a gate for.
fn hears(hook: &HookView) -> String {
    let mut what = Vec::new();
    if !hook.events.is_empty() {
        let events: Vec<&str> = hook.events.iter().map(|event| event.as_str()).collect();
        what.push(events.join(", "));
    }
    if !hook.gates.is_empty() {
        let gates: Vec<&str> = hook.gates.iter().map(|gate| gate.as_str()).collect();
        what.push(format!(
            "gate for {} ({} s, {} when unreachable)",
            gates.join(", "),
            hook.timeout_secs,
            hook.on_failure.as_str()
        ));
    }
    what.join("; ")
}

/// One delivery: what it carried, how the last attempt went, and "Redeliver" once it
/// has ended (the service refuses one still under way, saying so).
fn delivery_row(delivery: DeliveryView, redeliver: ServerAction<Redeliver>) -> impl IntoView {
    let last = delivery.log.first().cloned();
    let status = last
        .as_ref()
        .and_then(|attempt| attempt.status)
        .map_or_else(|| "—".to_owned(), |status| status.to_string());
    let excerpt = last
        .as_ref()
        .map(|attempt| {
            attempt
                .error
                .clone()
                .unwrap_or_else(|| attempt.response_excerpt.clone())
        })
        .unwrap_or_default();
    let (row_id, hook_id, delivery_id) = (
        delivery.id.clone(),
        delivery.hook_id.clone(),
        delivery.id.clone(),
    );
    let ended = matches!(
        delivery.state,
        DeliveryState::Delivered | DeliveryState::Failed
    );
    view! {
        <tr data-delivery=row_id data-state=delivery.state.as_str()>
            <td>{delivery.event.as_str()}</td>
            <td><code>{delivery.id.clone()}</code></td>
            <td><span class=delivery_class(delivery.state)>{delivery.state.as_str()}</span></td>
            <td class="num">{status}</td>
            <td>{timestamp(delivery.created_at_ms)}</td>
            <td class="excerpt">{excerpt}</td>
            <td>{ended.then(|| view! {
                <ActionForm action=redeliver attr:class="inline">
                    <CsrfField/>
                    <input type="hidden" name="hook" value=hook_id.clone()/>
                    <input type="hidden" name="delivery" value=delivery_id.clone()/>
                    <button class="button button-small" type="submit">"Redeliver"</button>
                </ActionForm>
            })}</td>
        </tr>
    }
}

/// One hook: its facts, its buttons and its deliveries.
fn hook_card(
    item: HookWithDeliveries,
    test: ServerAction<TestHook>,
    remove: ServerAction<RemoveHook>,
    redeliver: ServerAction<Redeliver>,
) -> impl IntoView {
    let hook = item.hook;
    let deliveries = if item.deliveries.is_empty() {
        view! { <p class="muted">"Nothing sent yet."</p> }.into_any()
    } else {
        let shown = item.deliveries.len();
        let rows = item
            .deliveries
            .into_iter()
            .map(|delivery| delivery_row(delivery, redeliver))
            .collect_view();
        view! {
            <DataTable numeric=&["Status"] columns=&["Event", "Delivery", "State", "Status", "Time", "Answer", ""]>
                {rows}
            </DataTable>
            {(item.total > shown as u64).then(|| view! {
                <p class="muted">{format!("The latest {shown} of {}; ", item.total)}
                    <code>{format!("corral hook deliveries {}", hook.id)}</code> " lists them all."</p>
            })}
        }
        .into_any()
    };
    let is_events = !hook.events.is_empty();
    let (card_id, test_id, remove_id) = (hook.id.clone(), hook.id.clone(), hook.id.clone());
    view! {
        <section class="card" data-hook=card_id>
            <h2><code>{hook.url.clone()}</code></h2>
            <dl class="facts">
                <dt>"Hears"</dt><dd data-testid="hook-hears">{hears(&hook)}</dd>
                <dt>"Format"</dt><dd>{hook.format.as_str()}</dd>
                <dt>"Added"</dt><dd>{timestamp(hook.created_at_ms)}{hook.created_by.clone().map(|by| format!(" by {by}"))}</dd>
                <dt>"Id"</dt><dd><code>{hook.id.clone()}</code></dd>
            </dl>
            <div class="actions">
                {is_events.then(|| view! {
                    <ActionForm action=test attr:class="inline">
                        <IdButton id=test_id.clone() label="Send a test event"/>
                    </ActionForm>
                })}
                <ActionForm action=remove attr:class="inline">
                    <IdButton id=remove_id label="Remove" class="button button-small button-danger"/>
                </ActionForm>
            </div>
            <h3>"Deliveries"</h3>
            {deliveries}
        </section>
    }
}

/// The form that adds a hook: URL, events or a gate, format.
#[component]
fn AddHookForm(add: ServerAction<AddHook>) -> impl IntoView {
    let error = action_error(add);
    let events = HookEvent::ALL
        .iter()
        .map(|event| {
            view! {
                <label class="check"><input type="checkbox" name="events[]" value=event.as_str()/>" " {event.as_str()}</label>
            }
        })
        .collect_view();
    let gates = [GateOperation::Create, GateOperation::Change, GateOperation::Delete]
        .into_iter()
        .map(|gate| {
            view! {
                <label class="check"><input type="checkbox" name="gates[]" value=gate.as_str()/>" " {gate.as_str()}</label>
            }
        })
        .collect_view();
    view! {
        <section class="card">
            <h2>"Add a hook"</h2>
            <p class="muted">"Its signing secret is shown once, right after it is added. Without JavaScript the page cannot show it after the form posts; use "
                <code>"corral hook add"</code> " or the API instead."</p>
            <AdminForm action=add error submit="Add hook" testid="add-hook">
                <TextField label="URL" id="hook-url" name="url" error required=true placeholder="https://example.com/corral"/>
                <SelectField label="Kind" id="hook-kind" name="kind" error options=&[
                    ("events", "events: told of what happens (tick them below)"),
                    ("gate", "gate: asked before an operation is queued"),
                ]/>
                <fieldset class="field">
                    <legend>"Events"</legend>
                    {events}
                    <crate::components::errors::FieldError error field="events"/>
                </fieldset>
                <fieldset class="field">
                    <legend>"Gate: operations, timeout and failure policy"</legend>
                    {gates}
                    <crate::components::errors::FieldError error field="gates"/>
                    <TextField label="Timeout (seconds, 1-10)" id="hook-timeout" name="timeout_secs" error inputmode="numeric" placeholder="10"/>
                    <SelectField label="When it cannot be asked" id="hook-on-failure" name="on_failure" error
                        options=&[("refuse", "refuse the operation"), ("allow", "let it go ahead")]/>
                </fieldset>
                <SelectField label="Format" id="hook-format" name="format" error
                    options=&[("json", "json (Corral's event body)"), ("slack", "slack ({\"text\": …})")]/>
            </AdminForm>
        </section>
    }
}

#[component]
pub fn HooksPage() -> impl IntoView {
    let query = use_query_map();
    let add = ServerAction::<AddHook>::new();
    let test = ServerAction::<TestHook>::new();
    let remove = ServerAction::<RemoveHook>::new();
    let redeliver = ServerAction::<Redeliver>::new();
    let data = Resource::new(
        move || {
            (
                add.version().get(),
                test.version().get(),
                remove.version().get(),
                redeliver.version().get(),
                query.with(|query| (query.get("sent"), query.get("removed"))),
            )
        },
        |_| hooks_page(),
    );
    let added = move || add.value().get().and_then(Result::ok);
    let test_error = action_error(test);
    let remove_error = action_error(remove);
    let redeliver_error = action_error(redeliver);
    view! {
        <Title text="Hooks · Admin · Corral"/>
        <div class="page-head"><h1>"Hooks"</h1></div>
        <p class="muted">"Endpoints told of the tenant's jobs and clusters (events), or asked before an operation is queued (gates); see the integrations guide."</p>
        {move || added().map(|created| view! {
            <div class="banner banner-ok" role="status" data-testid="new-hook">
                <p>"Hook for " <code>{created.hook.url}</code> " added. Copy its signing secret now; it is not shown again:"</p>
                <p><code class="secret">{created.secret}</code></p>
            </div>
        })}
        {move || query.with(|query| query.get("sent")).map(|id| view! {
            <p class="banner banner-ok" role="status" data-testid="hook-sent">"Delivery " <code>{id}</code> " queued; its outcome shows below."</p>
        })}
        {move || query.with(|query| query.get("removed")).map(|_| view! {
            <p class="banner banner-ok" role="status" data-testid="hook-removed">"Hook removed."</p>
        })}
        <FormError error=test_error/>
        <FormError error=remove_error/>
        <FormError error=redeliver_error/>
        <Loaded data render={move |hooks: Vec<HookWithDeliveries>| {
            if hooks.is_empty() {
                return view! { <p class="muted" data-testid="hooks">"No hooks yet."</p> }.into_any();
            }
            let cards = hooks.into_iter().map(|item| hook_card(item, test, remove, redeliver)).collect_view();
            view! { <div data-testid="hooks">{cards}</div> }.into_any()
        }}/>
        <OnceLoaded data>
            <AddHookForm add/>
        </OnceLoaded>
    }
}
