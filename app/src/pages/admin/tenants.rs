//! `/admin/tenants`: tenants with their quotas and what they hold. A superadmin
//! creates tenants, sets quotas and deletes tenants (refused while a tenant has
//! live clusters, which the table lists); a tenant admin sees their own tenant.
//!
//! A delete takes two steps, with or without JavaScript: the row's link opens
//! `?confirm=delete-tenant&id=<id>`, which names what goes with the tenant (or why
//! it cannot go yet), and only the button there deletes; Cancel goes back.

use api_types::Role;
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::errors::{action_error, FieldError, FormError, FormErrors};
use crate::components::form::{AdminForm, TextField};
use crate::components::session::{use_me, CsrfField};
use crate::components::time::timestamp;
use crate::server_fns::admin::create_tenant::CreateTenant;
use crate::server_fns::admin::delete_tenant::DeleteTenant;
use crate::server_fns::admin::set_dedicated_workers::SetDedicatedWorkers;
use crate::server_fns::admin::set_provider_types::SetProviderTypes;
use crate::server_fns::admin::tenants::{list_tenants, local_nodes_note};
use crate::server_fns::admin::update_quotas::UpdateQuotas;
use crate::server_fns::admin::TenantRow;

fn limit(value: Option<i64>) -> String {
    value.map(|value| value.to_string()).unwrap_or_default()
}

#[component]
pub fn TenantsPage() -> impl IntoView {
    // The actions are made here so the list reloads after one: their redirects
    // stay on this route, which a browser with JavaScript does not load again.
    let create = ServerAction::<CreateTenant>::new();
    let delete = ServerAction::<DeleteTenant>::new();
    let tenants = Resource::new(
        move || (create.version().get(), delete.version().get()),
        |_| list_tenants(),
    );
    let me = use_me();
    let query = use_query_map();
    let deleted = move || query.with(|query| query.get("deleted"));
    // The tenant whose delete is being confirmed, if any.
    let confirming = move || {
        query.with(|query| {
            (query.get("confirm").as_deref() == Some("delete-tenant"))
                .then(|| query.get("id"))
                .flatten()
        })
    };
    let note = Resource::new(|| (), |_| local_nodes_note());
    view! {
        <Title text="Tenants · Admin · Corral"/>
        <div class="page-head"><h1>"Tenants"</h1></div>
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                note.await.ok().flatten().map(|note| view! {
                    <p class="banner banner-bad" role="alert" data-testid="local-nodes-note">
                        <strong>"Local nodes: "</strong>{note}
                    </p>
                })
            })}
        </Suspense>
        {move || deleted().map(|name| view! {
            <p class="banner banner-ok" role="status" data-testid="tenant-deleted">"Tenant " <strong>{name}</strong> " deleted, with its users and catalog."</p>
        })}
        <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || {
                let confirming = confirming();
                Suspend::new(async move {
                    let superadmin = matches!(me.await, Ok(Some(me)) if me.role == Role::Superadmin);
                    match tenants.await {
                        Ok(rows) => {
                            // Only a superadmin deletes, and never the default tenant.
                            let doomed = confirming
                                .filter(|_| superadmin)
                                .and_then(|id| rows.iter().find(|row| row.tenant.id == id && !row.is_default).cloned());
                            match doomed {
                                Some(row) => view! { <DeleteTenantConfirm row delete/> }.into_any(),
                                None => view! { <TenantTable rows superadmin/> {superadmin.then(|| view! { <NewTenant create/> })} }.into_any(),
                            }
                        }
                        Err(error) => crate::pages::admin::layout::admin_error(error),
                    }
                })
            }}
        </Suspense>
    }
}

/// The second step of deleting a tenant: what goes with it and the button that
/// deletes it, or, while it has live clusters, why it cannot go yet.
#[component]
fn DeleteTenantConfirm(row: TenantRow, delete: ServerAction<DeleteTenant>) -> impl IntoView {
    let name = row.tenant.name.clone();
    if !row.live_clusters.is_empty() {
        let clusters = row
            .live_clusters
            .iter()
            .map(|cluster| view! { <span class="chip">{cluster.clone()}</span> " " })
            .collect_view();
        return view! {
            <section class="card card-danger" data-testid="confirm-delete-tenant">
                <h2>{format!("Tenant {name} cannot be deleted yet")}</h2>
                <div class="banner banner-bad" role="alert" data-testid="tenant-delete-blocked">
                    <p>{format!("It still has {} live cluster(s): ", row.live_clusters.len())} {clusters}</p>
                    <p>"Delete those first; a tenant goes only once it holds no live clusters."</p>
                </div>
                <a class="button button-quiet" href="/admin/tenants" data-testid="cancel">"Back to tenants"</a>
            </section>
        }
        .into_any();
    }
    let users = match row.users.as_slice() {
        [] => "It has no users.".to_owned(),
        [user] => format!(
            "Its user {user} can no longer sign in: the account goes, its sessions end and its API tokens stop working."
        ),
        users => format!(
            "Its {} users ({}) can no longer sign in: their accounts go, their sessions end and their API tokens stop working.",
            users.len(),
            users.join(", ")
        ),
    };
    view! {
        <section class="card card-danger" data-testid="confirm-delete-tenant">
            <h2>{format!("Delete tenant {name}?")}</h2>
            <p>"Everything the tenant holds goes with it, for good:"</p>
            <ul>
                <li data-testid="tenant-users">{users}</li>
                <li>"Its catalog, uploaded resources, provider credentials and pool hosts."</li>
                <li>"The records of its deleted clusters and their jobs."</li>
            </ul>
            <ActionForm action=delete attr:data-testid="delete-tenant-form">
                <CsrfField/>
                <input type="hidden" name="id" value=row.tenant.id.clone()/>
                <DeleteRefused error=action_error(delete)/>
                <div class="actions">
                    <button class="button button-danger" type="submit" data-testid="confirm-delete">{format!("Delete tenant {name}")}</button>
                    <a class="button button-quiet" href="/admin/tenants" data-testid="cancel">"Cancel"</a>
                </div>
            </ActionForm>
        </section>
    }
    .into_any()
}

/// The service's refusal of a confirmed delete: a cluster made after the
/// confirmation showed, for one.
#[component]
fn DeleteRefused(error: FormErrors) -> impl IntoView {
    move || {
        error.get().map(|error| {
            view! {
                <div class="banner banner-bad" role="alert" data-testid="tenant-delete-refused">
                    <p><strong>"Not deleted: "</strong>{error.to_string()}</p>
                </div>
            }
        })
    }
}

#[component]
fn TenantTable(rows: Vec<TenantRow>, superadmin: bool) -> impl IntoView {
    let update = ServerAction::<UpdateQuotas>::new();
    let set_types = ServerAction::<SetProviderTypes>::new();
    let set_workers = ServerAction::<SetDedicatedWorkers>::new();
    // The row forms report above the table. A plain signal, not one `FormErrors`:
    // the quota fields are in the rows, so the whole message (which names the
    // field) shows as well as each field's problems.
    let (update_error, set_types_error, set_workers_error) = (
        action_error(update),
        action_error(set_types),
        action_error(set_workers),
    );
    let error = Signal::derive(move || {
        update_error
            .get()
            .or_else(|| set_types_error.get())
            .or_else(|| set_workers_error.get())
    });
    let rows = rows
        .into_iter()
        .map(|row| {
            let name = row.tenant.name.clone();
            let confirm_href = format!(
                "?confirm=delete-tenant&id={}",
                crate::query::encode_value(&row.tenant.id)
            );
            let local_id = row.tenant.id.clone();
            let workers = dedicated_workers(
                &row.tenant.name,
                row.tenant.dedicated_workers,
                superadmin,
                row.tenant.id.clone(),
                set_workers,
            );
            let quotas = if superadmin {
                view! {
                    <ActionForm action=update attr:class="inline quota-form">
                        <CsrfField/>
                        <input type="hidden" name="id" value=row.tenant.id.clone()/>
                        <label>"Clusters " <input name="max_clusters" inputmode="numeric" size="5" value=limit(row.tenant.max_clusters) placeholder="no limit"/></label>
                        <label>"Nodes " <input name="max_nodes" inputmode="numeric" size="5" value=limit(row.tenant.max_nodes) placeholder="no limit"/></label>
                        <button class="button button-small button-quiet" type="submit">"Save quotas"</button>
                    </ActionForm>
                }
                .into_any()
            } else {
                view! {
                    <span>"Clusters: " {row.tenant.max_clusters.map_or("no limit".to_owned(), |v| v.to_string())}
                    " · Nodes: " {row.tenant.max_nodes.map_or("no limit".to_owned(), |v| v.to_string())}</span>
                }
                .into_any()
            };
            let providers = provider_types(&row.tenant.provider_types, superadmin, local_id, set_types);
            let deletable = superadmin && !row.is_default;
            view! {
                <tr data-tenant=name>
                    <th scope="row">{row.tenant.name}</th>
                    <td>{quotas}</td>
                    <td>{providers}</td>
                    <td>{workers}</td>
                    <td><TenantUsage clusters=row.live_clusters users=row.users/></td>
                    <td>{timestamp(row.tenant.created_at_ms)}</td>
                    // A link to the confirmation, which says what goes with the tenant.
                    <td>{deletable.then(|| view! {
                        <a class="button button-small button-danger" href=confirm_href data-testid="delete-tenant">"Delete…"</a>
                    })}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <section class="card table-card">
            <FormError error/>
            <FieldError error field="max_clusters"/>
            <FieldError error field="max_nodes"/>
            <div class="table-scroll">
                <table class="data">
                    <thead><tr>
                        <th scope="col">"Tenant"</th><th scope="col">"Quotas"</th>
                        <th scope="col" title="The provider types the tenant may build on; local runs node steps on this server's own host">"Providers"</th>
                        <th scope="col" title="Which workers run the tenant's steps: any, or only workers started for it">"Workers"</th>
                        <th scope="col">"Holds"</th>
                        <th scope="col">"Created"</th><th scope="col"></th>
                    </tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
        </section>
    }
}

/// A tenant's live clusters (which block deleting it) and its users.
#[component]
fn TenantUsage(clusters: Vec<String>, users: Vec<String>) -> impl IntoView {
    let clusters = if clusters.is_empty() {
        view! { <li>"no live clusters"</li> }.into_any()
    } else {
        view! {
            <li data-testid="live-clusters">
                {format!("{} live cluster(s): ", clusters.len())}
                {clusters.into_iter().map(|name| view! { <span class="chip">{name}</span> " " }).collect_view()}
            </li>
        }
        .into_any()
    };
    view! {
        <ul class="usage">
            {clusters}
            <li title=users.join(", ")>{format!("{} user(s)", users.len())}</li>
        </ul>
    }
}

#[component]
fn NewTenant(create: ServerAction<CreateTenant>) -> impl IntoView {
    let error = action_error(create);
    view! {
        <section class="card">
            <h2>"New tenant"</h2>
            <AdminForm action=create error submit="Create tenant">
                <TextField label="Name" id="tenant-name" name="name" error required=true pattern="[a-z0-9-]+"/>
                <TextField label="Most clusters" id="tenant-clusters" name="max_clusters" error
                    inputmode="numeric" placeholder="no limit"/>
                <TextField label="Most nodes" id="tenant-nodes" name="max_nodes" error
                    inputmode="numeric" placeholder="no limit"/>
                <TextField label="Start with the catalog and staged scripts of (tenant name, optional)"
                    id="tenant-seed" name="seed"/>
                <div class="field">
                    <label><input type="checkbox" name="local_nodes" value="on" data-testid="tenant-local-nodes"/>
                    " Allow the local provider: its nodes run on this server's own host, so the tenant's admins can run commands here (as an unprivileged user where the server runs as root)"</label>
                </div>
            </AdminForm>
        </section>
    }
}

/// Which provider types the tenant may build on: checkboxes and a Save button for a
/// superadmin, the list for everyone else. `local` says where its steps run.
fn provider_types(
    enabled: &[String],
    superadmin: bool,
    id: String,
    set_types: ServerAction<SetProviderTypes>,
) -> impl IntoView {
    let label = |providertype: &str| match providertype {
        "local" => "local (on this server's host)".to_owned(),
        other => other.to_owned(),
    };
    if !superadmin {
        let list = if enabled.is_empty() {
            "none".to_owned()
        } else {
            enabled
                .iter()
                .map(|t| label(t))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return view! { <span data-testid="provider-types">{list}</span> }.into_any();
    }
    let boxes = domain::catalog::SUPPORTED_PROVIDER_TYPES
        .iter()
        .map(|providertype| {
            let checked = enabled.iter().any(|t| t == providertype);
            let name = providertype.replace('-', "_");
            view! {
                <label class="check">
                    <input type="checkbox" name=name checked=checked/>
                    " " {label(providertype)}
                </label>
            }
        })
        .collect_view();
    view! {
        <ActionForm action=set_types attr:class="inline provider-types-form" attr:data-testid="provider-types">
            <CsrfField/>
            <input type="hidden" name="id" value=id/>
            {boxes}
            <button class="button button-small button-quiet" type="submit">"Save providers"</button>
        </ActionForm>
    }
    .into_any()
}

/// Which workers run the tenant's steps: a checkbox and a Save button for a
/// superadmin, the answer for everyone else. The command that serves a dedicated
/// tenant is spelled out, since nothing else runs its tasks.
fn dedicated_workers(
    name: &str,
    dedicated: bool,
    superadmin: bool,
    id: String,
    set_workers: ServerAction<SetDedicatedWorkers>,
) -> impl IntoView {
    let command = format!("corral worker --tenant {name}");
    if !superadmin {
        let text = if dedicated {
            format!("dedicated: only `{command}` runs its steps")
        } else {
            "shared".to_owned()
        };
        return view! { <span data-testid="dedicated-workers">{text}</span> }.into_any();
    }
    view! {
        <ActionForm action=set_workers attr:class="inline" attr:data-testid="dedicated-workers">
            <CsrfField/>
            <input type="hidden" name="id" value=id/>
            <label class="check" title=format!("Shared workers never take its tasks: start `{command}`")>
                <input type="checkbox" name="dedicated" checked=dedicated/>
                " dedicated only"
            </label>
            {dedicated.then(|| view! { <code class="hint">{command}</code> })}
            <button class="button button-small button-quiet" type="submit">"Save"</button>
        </ActionForm>
    }
    .into_any()
}
