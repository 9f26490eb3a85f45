//! `/admin/hosts`: the hosts the `ssh-pool` provider lends out as nodes: each one free or
//! checked out to a cluster's node, the public key Corral made for it (to authorize on
//! the host), a form to register one, and a button to remove one (refused, naming the
//! cluster, while a node holds it). After a registration the page is at
//! `?registered=<id>`, which names the new host and its key, and the form is empty.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::errors::{action_error, FormError};
use crate::components::form::{AdminForm, Field, IdButton, TextField};
use crate::components::table::DataTable;
use crate::server_fns::admin::pool_hosts::{list_pool_hosts, PoolHostRow};
use crate::server_fns::admin::register_pool_host::RegisterPoolHost;
use crate::server_fns::admin::remove_pool_host::RemovePoolHost;

fn host_row(row: PoolHostRow, remove: ServerAction<RemovePoolHost>) -> impl IntoView {
    let state = match &row.checked_out {
        None => view! { <span class="state state-ok">"free"</span> }.into_any(),
        Some(out) => {
            let node = out
                .node_number
                .map_or_else(|| out.node.clone(), |number| format!("node {number}"));
            let holder = match (&out.cluster_id, &out.cluster_name) {
                (Some(id), Some(name)) => view! {
                    <a href=format!("/clusters/{id}")>{name.clone()}</a>
                }
                .into_any(),
                _ => view! { <code>{out.node.clone()}</code> }.into_any(),
            };
            view! {
                <span class="state state-busy">"checked out"</span>
                " to " {node} " of " {holder}
            }
            .into_any()
        }
    };
    // The whole fingerprint is in the tooltip and the details; the table stays narrow.
    let short_fingerprint: String = row.host_key_fingerprint.chars().take(20).collect();
    view! {
        <tr data-host=row.name.clone()>
            <th scope="row">{row.name.clone()}<br/><code class="muted">{row.target}</code></th>
            <td data-testid="host-state">{state}</td>
            <td>
                <details>
                    <summary title=row.host_key_fingerprint.clone()><code>{short_fingerprint}"…"</code></summary>
                    <p class="hint">"Host key " <code>{row.host_key_fingerprint.clone()}</code></p>
                    <p class="hint">"Authorize Corral's key for this host:"</p>
                    <code class="secret" data-testid="client-public-key">{row.client_public_key}</code>
                </details>
            </td>
            <td>{row.tenant}</td>
            // Offered for checked-out hosts too: the refusal names the cluster holding it.
            <td>
                <ActionForm action=remove attr:class="inline">
                    <IdButton id=row.id.clone() label="Remove" class="button button-small button-danger"/>
                </ActionForm>
            </td>
        </tr>
    }
}

/// The host just registered (`?registered=<id>`) with the public key to authorize on it.
fn registered_banner(rows: &[PoolHostRow], registered: Option<String>) -> Option<impl IntoView> {
    let row = rows
        .iter()
        .find(|row| Some(&row.id) == registered.as_ref())?;
    Some(view! {
        <div class="banner banner-ok" role="status" data-testid="registered-host">
            <p>"Host " <strong>{row.name.clone()}</strong> " registered. Authorize this key on it (the private key stays with Corral):"</p>
            <p><code class="secret">{row.client_public_key.clone()}</code></p>
        </div>
    })
}

/// Empties the registration form inside `card`. With JavaScript the page is not
/// loaded again after a registration, and its inputs would keep what was sent (the
/// page is only rebuilt in place); without, the page comes fresh from the server.
fn clear_registration_form(card: NodeRef<leptos::html::Section>) {
    use leptos::wasm_bindgen::JsCast;
    let form = card
        .get_untracked()
        .and_then(|card| card.query_selector("form").ok().flatten())
        .and_then(|form| form.dyn_into::<leptos::web_sys::HtmlFormElement>().ok());
    if let Some(form) = form {
        form.reset();
    }
}

#[component]
pub fn HostsPage() -> impl IntoView {
    let register = ServerAction::<RegisterPoolHost>::new();
    let remove = ServerAction::<RemovePoolHost>::new();
    let hosts = Resource::new(
        move || (register.version().get(), remove.version().get()),
        |_| list_pool_hosts(),
    );
    let error = action_error(register);
    let remove_error = action_error(remove);
    let query = use_query_map();
    let registered = move || query.with(|query| query.get("registered"));
    let register_card = NodeRef::<leptos::html::Section>::new();
    Effect::new(move |_| {
        if register
            .value()
            .with(|outcome| matches!(outcome, Some(Ok(()))))
        {
            clear_registration_form(register_card);
        }
    });
    view! {
        <Title text="Pool hosts · Admin · Corral"/>
        <div class="page-head"><h1>"Pool hosts"</h1></div>
        <p class="muted">
            "Existing machines the " <code>"ssh-pool"</code> " provider lends out as nodes, one node per host. "
            "Corral makes a key pair for each host; put its public key in the user's "
            <code>"~/.ssh/authorized_keys"</code> " on the host. Deleting a cluster returns its hosts."
        </p>
        <FormError error=remove_error/>
        <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || {
                let registered = registered();
                Suspend::new(async move {
                    match hosts.await {
                        Ok(rows) if rows.is_empty() => view! {
                            <p class="muted" data-testid="no-hosts">"No pool hosts yet."</p>
                        }.into_any(),
                        Ok(rows) => {
                            let banner = registered_banner(&rows, registered);
                            let rows = rows.into_iter().map(|row| host_row(row, remove)).collect_view();
                            view! {
                                {banner}
                                <DataTable card=true testid="host-table" columns=&["Host", "State", "Host key", "Tenant", ""]>
                                    {rows}
                                </DataTable>
                            }.into_any()
                        }
                        Err(error) => crate::pages::admin::layout::admin_error(error),
                    }
                })
            }}
        </Suspense>
        <Suspense>
            {move || Suspend::new(async move {
                hosts.await.is_ok().then(|| view! {
                    <section class="card" node_ref=register_card>
                        <h2>"Register a host"</h2>
                        <AdminForm action=register error submit="Register host" testid="register-host-form">
                            <TextField label="Name" id="host-name" name="name" error
                                required=true autocomplete="off" placeholder="e.g. rack1-07"/>
                            <TextField label="Address" id="host-address" name="host" error
                                required=true autocomplete="off" placeholder="10.0.0.7 or a DNS name"/>
                            <TextField label="SSH port" id="host-port" name="port" error
                                inputmode="numeric" placeholder="22"/>
                            <TextField label="User" id="host-user" name="user" error
                                required=true autocomplete="off" placeholder="corral"/>
                            <Field label="Host key" id="host-key" error field="host_key"
                                hint="Pinned: every connection must present exactly this key.">
                                <textarea id="host-key" name="host_key" required rows="2"
                                    placeholder="ssh-ed25519 AAAA… (the host's /etc/ssh/ssh_host_ed25519_key.pub)"></textarea>
                            </Field>
                        </AdminForm>
                    </section>
                })
            })}
        </Suspense>
    }
}
