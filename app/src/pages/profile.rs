//! `/profile`: the signed-in user's own page, for every user. It says who they are
//! (username, tenant, role) and holds their SSH public keys, which Corral puts on the
//! nodes of their clusters: the list with a Remove button each, and a form to add one.
//! For a tenant's admins, a switch puts the admins' keys on every cluster of the tenant.
//!
//! Every form is a plain post (with the session's CSRF field), so the page works
//! without JavaScript; with it, the forms answer in place. After a change the page
//! says which clusters got a `sync-keys` job (linking to the job) or why one did not.

use api_types::{KeySync, UserKeyView};
use leptos::prelude::*;
use leptos_meta::Title;

use crate::components::errors::{action_error, FormError, PageError};
use crate::components::form::Field;
use crate::components::session::CsrfField;
use crate::components::table::DataTable;
use crate::components::time::timestamp;
use crate::server_fns::profile::add_key::AddKey;
use crate::server_fns::profile::admin_keys::SetAdminKeys;
use crate::server_fns::profile::load::load_profile;
use crate::server_fns::profile::remove_key::RemoveKey;
use crate::server_fns::profile::{KeyChangeKind, KeyNotice, ProfilePage as Profile, KEY_FIELD};

/// The changes made on the page.
#[derive(Clone, Copy)]
struct Actions {
    add: ServerAction<AddKey>,
    remove: ServerAction<RemoveKey>,
    admin_keys: ServerAction<SetAdminKeys>,
}

/// How many times `action` succeeded (with JavaScript): the page reloads after a
/// change, but not after a refusal, so a key being fixed stays in its field.
fn successes<S>(action: ServerAction<S>) -> Memo<usize>
where
    S: leptos::server_fn::ServerFn<Output = (), Error = crate::error::UiError>
        + Clone
        + Send
        + Sync
        + 'static,
{
    Memo::new(move |previous: Option<&usize>| {
        let version = action.version().get();
        if action.value().with(|value| matches!(value, Some(Ok(())))) {
            version
        } else {
            previous.copied().unwrap_or(0)
        }
    })
}

#[component]
pub fn ProfilePage() -> impl IntoView {
    let actions = Actions {
        add: ServerAction::<AddKey>::new(),
        remove: ServerAction::<RemoveKey>::new(),
        admin_keys: ServerAction::<SetAdminKeys>::new(),
    };
    let (added, removed, switched) = (
        successes(actions.add),
        successes(actions.remove),
        successes(actions.admin_keys),
    );
    let page = Resource::new(
        move || (added.get(), removed.get(), switched.get()),
        |_| load_profile(),
    );
    view! {
        <Title text="Profile · Corral"/>
        <Transition fallback=|| view! { <p class="muted">"Loading your profile…"</p> }>
            {move || Suspend::new(async move {
                match page.await {
                    Ok(profile) => view! { <ProfileView profile actions/> }.into_any(),
                    Err(error) => view! { <PageError error/> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn ProfileView(profile: Profile, actions: Actions) -> impl IntoView {
    let Profile {
        username,
        tenant,
        role,
        keys,
        max_keys,
        admin_keys_on_all_clusters,
        notice,
    } = profile;
    view! {
        <div class="page-head">
            <div>
                <h1>{username}</h1>
                <p class="muted" data-testid="profile-summary">
                    <span class="chip">{role.as_str()}</span>
                    " in tenant " <strong>{tenant}</strong>
                </p>
            </div>
        </div>
        {notice.map(|notice| view! { <NoticeBanner notice/> })}
        <KeyList keys max_keys action=actions.remove/>
        <AddKeyForm action=actions.add/>
        {admin_keys_on_all_clusters.map(|on| view! { <AdminKeysSwitch on action=actions.admin_keys/> })}
    }
}

/// What the last change did, and the `sync-keys` job on each cluster it concerns.
#[component]
fn NoticeBanner(notice: KeyNotice) -> impl IntoView {
    let KeyNotice { change, clusters } = notice;
    let (said, none) = match &change {
        KeyChangeKind::Added(fingerprint) => (
            format!("Key {fingerprint} added."),
            "You have no active clusters: the key goes on the nodes of the clusters you create.",
        ),
        KeyChangeKind::Removed(fingerprint) => (
            format!("Key {fingerprint} removed."),
            "You have no active clusters to take it off.",
        ),
        KeyChangeKind::AdminKeys(true) => (
            "Tenant admins' keys now go on every cluster of the tenant.".to_owned(),
            "The tenant has no active clusters: new ones get them when they are made.",
        ),
        KeyChangeKind::AdminKeys(false) => (
            "Tenant admins' keys now go only on their own clusters.".to_owned(),
            "The tenant has no active clusters.",
        ),
    };
    let unsynced = clusters.iter().any(|cluster| cluster.job_id.is_none());
    let class = if unsynced {
        "banner banner-busy"
    } else {
        "banner banner-ok"
    };
    let body = if clusters.is_empty() {
        view! { <p>{none}</p> }.into_any()
    } else {
        let rows = clusters.into_iter().map(sync_row).collect_view();
        view! {
            <p>"A sync-keys job puts the change on the nodes of each cluster:"</p>
            <ul class="plain sync-list" data-testid="key-syncs">{rows}</ul>
        }
        .into_any()
    };
    view! {
        <div class=class role="status" data-testid="key-notice">
            <p><strong>{said}</strong></p>
            {body}
        </div>
    }
}

/// One cluster of a change: a link to its `sync-keys` job, or why none started.
fn sync_row(sync: KeySync) -> impl IntoView {
    let KeySync {
        cluster_id,
        cluster_name,
        job_id,
        note,
    } = sync;
    let cluster_href = format!("/clusters/{}", crate::query::encode_value(&cluster_id));
    let what = match job_id {
        Some(job) => {
            let href = format!("{cluster_href}/jobs/{}", crate::query::encode_value(&job));
            let short: String = job.chars().take(8).collect();
            view! {
                " · " <a href=href data-testid="sync-job">"sync-keys job " <code>{short}</code></a>
            }
            .into_any()
        }
        None => view! {
            " · " <span class="state state-busy">"not synced"</span>
            " " <span data-testid="sync-note">{note.unwrap_or_default()}</span>
        }
        .into_any(),
    };
    let name = cluster_name.clone();
    view! {
        <li data-cluster=cluster_name>
            <a href=cluster_href><strong>{name}</strong></a>
            {what}
        </li>
    }
}

/// The user's keys, each with its Remove button.
#[component]
fn KeyList(
    keys: Vec<UserKeyView>,
    max_keys: i64,
    action: ServerAction<RemoveKey>,
) -> impl IntoView {
    let error = action_error(action);
    let count = keys.len();
    let list = if keys.is_empty() {
        view! {
            <p class="muted" data-testid="no-keys">
                "No keys yet. Add the public half of a key you already use, and your clusters' nodes let it in."
            </p>
        }
        .into_any()
    } else {
        let rows = keys
            .into_iter()
            .map(|key| key_row(key, action))
            .collect_view();
        view! {
            <DataTable testid="key-table" columns=&["Fingerprint", "Type", "Comment", "Added", ""]>
                {rows}
            </DataTable>
        }
        .into_any()
    };
    view! {
        <section class="card" data-testid="ssh-keys">
            <h2>"SSH keys"</h2>
            <p class="muted">
                "Corral puts these keys on the nodes of your clusters (in the node user's "
                <code>"~/.ssh/authorized_keys"</code>
                "), so plain ssh, scp and your editor's remote mode work with them. "
                {format!("You have {count} of at most {max_keys}.")}
            </p>
            {list}
            <FormError error/>
        </section>
    }
}

fn key_row(key: UserKeyView, action: ServerAction<RemoveKey>) -> impl IntoView {
    let comment = if key.comment.is_empty() {
        view! { <span class="muted">"(none)"</span> }.into_any()
    } else {
        view! { {key.comment.clone()} }.into_any()
    };
    let label = format!("Remove key {}", key.fingerprint);
    let fingerprint = key.fingerprint.clone();
    view! {
        <tr data-testid="key-row" data-fingerprint=key.fingerprint>
            <td><code class="fingerprint">{fingerprint}</code></td>
            <td>{key.algorithm}</td>
            <td>{comment}</td>
            <td>{timestamp(key.created_at_ms)}</td>
            <td class="num">
                <ActionForm action attr:class="inline">
                    <CsrfField/>
                    <input type="hidden" name="id" value=key.id/>
                    <button class="button button-small button-danger" type="submit"
                        aria-label=label data-testid="remove-key">"Remove"</button>
                </ActionForm>
            </td>
        </tr>
    }
}

/// The form that keeps a new key; its refusals show under the field.
#[component]
fn AddKeyForm(action: ServerAction<AddKey>) -> impl IntoView {
    let error = action_error(action);
    // With JavaScript the form answers in place: a kept key leaves the field empty for
    // the next one (a refused one stays, to be fixed).
    let form = NodeRef::<leptos::html::Form>::new();
    Effect::new(move |_| {
        if matches!(action.value().get(), Some(Ok(()))) {
            if let Some(form) = form.get() {
                form.reset();
            }
        }
    });
    view! {
        <section class="card">
            <h2>"Add a key"</h2>
            <ActionForm action node_ref=form attr:class="stack" attr:data-testid="add-key-form">
                <CsrfField/>
                <Field label="Public key" id="public-key" error field=KEY_FIELD
                    hint="One line from your .pub file, as cat ~/.ssh/id_ed25519.pub prints it: ssh-ed25519 AAAA… you@laptop. Never the private key.">
                    <textarea id="public-key" name=KEY_FIELD class="code key-line" rows="3" required
                        spellcheck="false" autocomplete="off"
                        placeholder="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA… you@laptop"></textarea>
                </Field>
                <FormError error/>
                <button class="button" type="submit" data-testid="add-key">"Add key"</button>
            </ActionForm>
        </section>
    }
}

/// For the tenant's admins: whether their keys go on every cluster of the tenant, with
/// an On and an Off button (the current one pressed).
#[component]
fn AdminKeysSwitch(on: bool, action: ServerAction<SetAdminKeys>) -> impl IntoView {
    let error = action_error(action);
    let state = if on {
        "On: every tenant admin's keys are on every cluster of the tenant."
    } else {
        "Off: each cluster has its owner's keys only."
    };
    let buttons = [("on", "On", true), ("off", "Off", false)]
        .into_iter()
        .map(|(choice, label, means)| {
            let current = means == on;
            view! {
                <ActionForm action attr:class="inline">
                    <CsrfField/>
                    <input type="hidden" name="choice" value=choice/>
                    <button class="button button-small" class:button-quiet=!current type="submit"
                        aria-pressed=current.to_string() disabled=current
                        data-testid="admin-keys-switch" data-choice=choice>{label}</button>
                </ActionForm>
            }
        })
        .collect_view();
    view! {
        <section class="card" data-testid="admin-keys">
            <h2>"Tenant admins' keys"</h2>
            <p>"Put tenant admins' keys on every cluster of the tenant"</p>
            <div class="actions">
                <span data-testid="admin-keys-state" data-on=on.to_string()>{state}</span>
                <span class="switch">{buttons}</span>
            </div>
            <p class="hint">"A change syncs every active cluster of the tenant. Off by default."</p>
            <FormError error/>
        </section>
    }
}
