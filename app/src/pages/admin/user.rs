//! `/admin/users/<username>`: one user, with forms to change their role, set a new
//! password, move them to another tenant (superadmins) and delete them. Every change
//! ends the user's sessions (the service bumps their session epoch), so they sign in
//! again under the new role, password or tenant.
//!
//! Deleting and moving take two steps, with or without JavaScript: a link (a GET form
//! for the move's tenant) opens `?confirm=delete-user` or `?confirm=move-user&tenant=…`,
//! which says what happens to the user's clusters, tokens and sessions, and only the
//! button there posts the change; Cancel goes back to the plain page.

use api_types::{Role, TokenView, MIN_PASSWORD_CHARS};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::Form;
use leptos_router::hooks::{use_params_map, use_query_map};

use crate::components::errors::{action_error, FormError};
use crate::components::form::{AdminForm, Field, TextField};
use crate::components::session::CsrfField;
use crate::components::time::timestamp;
use crate::server_fns::admin::delete_user::DeleteUser;
use crate::server_fns::admin::move_user::MoveUser;
use crate::server_fns::admin::reset_user_password::ResetUserPassword;
use crate::server_fns::admin::revoke_user_token::RevokeUserToken;
use crate::server_fns::admin::set_user_role::SetUserRole;
use crate::server_fns::admin::user::admin_user;
use crate::server_fns::admin::UserDetail;

/// The roles an admin can give, with what each may do.
const ROLES: [(Role, &str); 3] = [
    (Role::User, "user (creates clusters)"),
    (
        Role::TenantAdmin,
        "tenant-admin (manages the catalog and users)",
    ),
    (Role::Superadmin, "superadmin (every tenant)"),
];

#[component]
pub fn UserPage() -> impl IntoView {
    let params = use_params_map();
    let username = move || params.with(|params| params.get("name").unwrap_or_default());
    // Made here so the user reloads after a change: the redirect stays on this
    // route, which a browser with JavaScript does not load again.
    let role = ServerAction::<SetUserRole>::new();
    let password = ServerAction::<ResetUserPassword>::new();
    let moved = ServerAction::<MoveUser>::new();
    let user = Resource::new(
        move || {
            (
                username(),
                role.version().get(),
                password.version().get(),
                moved.version().get(),
            )
        },
        |(username, _, _, _)| admin_user(username),
    );
    let actions = UserActions {
        role,
        password,
        moved,
    };
    view! {
        <Title text=move || format!("{} · Users · Admin · Corral", username())/>
        <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match user.await {
                    Ok(detail) => view! { <UserView detail actions/> }.into_any(),
                    Err(error) => crate::pages::admin::layout::admin_error(error),
                }
            })}
        </Suspense>
    }
}

/// The changes made on the page whose success reloads the user.
#[derive(Clone, Copy)]
struct UserActions {
    role: ServerAction<SetUserRole>,
    password: ServerAction<ResetUserPassword>,
    moved: ServerAction<MoveUser>,
}

/// The user's page, at `/admin/users/<username>`.
fn user_path(username: &str) -> String {
    format!("/admin/users/{}", crate::query::encode_value(username))
}

/// What the page says after a change (`?saved=<field>`).
fn saved_message(what: &str, tenant: &str) -> String {
    match what {
        "password" => "Password set. The user's sessions have ended and their API tokens are revoked; they sign in with the new password.".to_owned(),
        "token" => "Token revoked: it no longer signs anything in.".to_owned(),
        "tenant" => format!("Moved to tenant {tenant}. Their sessions have ended and their API tokens are revoked; the clusters they owned stay with the tenant they left."),
        _ => "Role saved. The user's sessions have ended; they sign in again under the new role.".to_owned(),
    }
}

#[component]
fn UserView(detail: UserDetail, actions: UserActions) -> impl IntoView {
    let query = use_query_map();
    let saved = move || query.with(|query| query.get("saved"));
    let confirm = move || query.with(|query| query.get("confirm"));
    let target = move || query.with(|query| query.get("tenant"));
    let user = detail.user.clone();
    let tenant = user.tenant.clone();
    let body = if detail.is_me {
        view! {
            <p class="banner banner-info" role="status" data-testid="user-is-me">
                "This is you: another admin changes your role or password, and you cannot delete yourself."
            </p>
        }.into_any()
    } else if !detail.may_change() {
        view! {
            <p class="banner banner-info" role="status" data-testid="user-is-superadmin">
                "A superadmin's account is changed only by superadmins."
            </p>
        }
        .into_any()
    } else {
        // The confirmation, when one is asked for, instead of the forms.
        (move || match confirm().as_deref() {
            Some("delete-user") => view! { <DeleteConfirm detail=detail.clone()/> }.into_any(),
            Some("move-user") => {
                view! { <MoveConfirm detail=detail.clone() target=target() action=actions.moved/> }
                    .into_any()
            }
            _ => manage_view(&detail, actions),
        })
        .into_any()
    };
    view! {
        <nav class="crumbs" aria-label="Breadcrumb">
            <a href="/admin/users">"Users"</a> " / " <span>{user.username.clone()}</span>
        </nav>
        <div class="page-head">
            <div>
                <h1>{user.username.clone()}</h1>
                <p class="muted" data-testid="user-summary">
                    <span class="chip">{user.role.as_str()}</span>
                    " in tenant " <strong>{user.tenant.clone()}</strong>
                    " · since " {timestamp(user.created_at_ms)}
                </p>
            </div>
        </div>
        {move || saved().map(|what| view! {
            <p class="banner banner-ok" role="status" data-testid="user-saved">{saved_message(&what, &tenant)}</p>
        })}
        {body}
    }
}

/// The forms of a user the viewer may change.
fn manage_view(detail: &UserDetail, actions: UserActions) -> AnyView {
    let user = &detail.user;
    view! {
        <div class="grid">
            <RoleForm action=actions.role id=user.id.clone() role=user.role superadmin=detail.viewer_is_superadmin/>
            <PasswordForm action=actions.password id=user.id.clone()/>
        </div>
        <UserTokens user_id=user.id.clone() tokens=detail.tokens.clone()/>
        {(!detail.move_targets.is_empty()).then(|| view! {
            <MoveStart tenant=user.tenant.clone() targets=detail.move_targets.clone()/>
        })}
        <DeleteStart username=user.username.clone()/>
    }
    .into_any()
}
#[component]
fn RoleForm(
    action: ServerAction<SetUserRole>,
    id: String,
    role: Role,
    superadmin: bool,
) -> impl IntoView {
    let error = action_error(action);
    // A tenant admin never sees superadmin offered (the service refuses it anyway).
    let options = ROLES
        .into_iter()
        .filter(|(value, _)| superadmin || *value != Role::Superadmin || role == *value)
        .map(|(value, label)| {
            let selected = role == value;
            view! { <option value=value.as_str() selected=selected>{label}</option> }
        })
        .collect_view();
    view! {
        <section class="card">
            <h2>"Role"</h2>
            <AdminForm action error submit="Save role" class="stack" testid="role-form">
                <input type="hidden" name="id" value=id/>
                <Field label="Role" id="user-role" error field="role">
                    <select id="user-role" name="role">{options}</select>
                </Field>
            </AdminForm>
        </section>
    }
}

#[component]
fn PasswordForm(action: ServerAction<ResetUserPassword>, id: String) -> impl IntoView {
    let error = action_error(action);
    view! {
        <section class="card">
            <h2>"New password"</h2>
            <AdminForm action error submit="Set password" class="stack" testid="password-form">
                <input type="hidden" name="id" value=id/>
                <TextField label="Password" id="user-password" name="password" error
                    password=true required=true minlength=MIN_PASSWORD_CHARS autocomplete="new-password"
                    hint=format!("At least {MIN_PASSWORD_CHARS} characters. Tell the user over a safe channel.")/>
            </AdminForm>
        </section>
    }
}

/// The user's API tokens, each revocable (a lost laptop, a leaked CI secret).
#[component]
fn UserTokens(user_id: String, tokens: Vec<TokenView>) -> impl IntoView {
    let action = ServerAction::<RevokeUserToken>::new();
    let error = action_error(action);
    let live: Vec<TokenView> = tokens
        .into_iter()
        .filter(|token| token.revoked_at_ms.is_none())
        .collect();
    let rows = live
        .into_iter()
        .map(|token| {
            let user_id = user_id.clone();
            view! {
                <li data-testid="user-token">
                    <strong>{token.name}</strong>
                    " · " {token.scope.as_str()}
                    " · created " {timestamp(token.created_at_ms)}
                    " · last used " {token.last_used_at_ms.map_or_else(|| "never".to_owned(), timestamp)}
                    " "
                    <ActionForm action attr:class="inline">
                        <CsrfField/>
                        <input type="hidden" name="user_id" value=user_id/>
                        <input type="hidden" name="id" value=token.id/>
                        <button class="button button-small button-danger" type="submit">"Revoke"</button>
                    </ActionForm>
                </li>
            }
        })
        .collect::<Vec<_>>();
    let empty = rows.is_empty();
    view! {
        <section class="card">
            <h2>"API tokens"</h2>
            {if empty {
                view! { <p class="muted">"No live tokens."</p> }.into_any()
            } else {
                view! { <ul class="plain">{rows}</ul> }.into_any()
            }}
            <FormError error/>
        </section>
    }
}

/// What becomes of the user's live API tokens: `one` or `many` says it ("stops
/// working", "stop working").
fn tokens_line(tokens: &[TokenView], one: &str, many: &str) -> String {
    match tokens
        .iter()
        .filter(|token| token.revoked_at_ms.is_none())
        .count()
    {
        0 => "They have no live API tokens.".to_owned(),
        1 => format!("Their API token {one}"),
        count => format!("Their {count} API tokens {many}"),
    }
}

/// What becomes of the user's clusters: they stay with `tenant` either way.
fn clusters_stay(clusters: &[String], tenant: &str, after: &str) -> AnyView {
    if clusters.is_empty() {
        return view! { <li data-testid="owned-clusters">"They own no live clusters."</li> }
            .into_any();
    }
    let names = clusters
        .iter()
        .map(|name| view! { <span class="chip">{name.clone()}</span> " " })
        .collect_view();
    view! {
        <li data-testid="owned-clusters">
            {match clusters.len() {
                1 => format!("The cluster they own stays in tenant {tenant} and remains {tenant}'s{after}: "),
                count => format!("The {count} clusters they own stay in tenant {tenant} and remain {tenant}'s{after}: "),
            }}
            {names}
        </li>
    }
    .into_any()
}

/// The two buttons that end a confirmation: the change itself, and Cancel back to
/// the user's page.
fn confirm_buttons(label: String, testid: &'static str, back: String) -> impl IntoView {
    view! {
        <div class="actions">
            <button class="button button-danger" type="submit" data-testid=testid>{label}</button>
            <a class="button button-quiet" href=back data-testid="cancel">"Cancel"</a>
        </div>
    }
}

/// The first step of a delete: a link to the confirmation.
#[component]
fn DeleteStart(username: String) -> impl IntoView {
    view! {
        <section class="card card-danger">
            <h2>"Delete"</h2>
            <p class="muted">"The next step shows what goes with the user, before anything is deleted."</p>
            <a class="button button-danger" href="?confirm=delete-user" data-testid="delete-user-start">
                "Delete " {username} "…"
            </a>
        </section>
    }
}

/// The second step of a delete: what goes, and the button that deletes.
#[component]
fn DeleteConfirm(detail: UserDetail) -> impl IntoView {
    let action = ServerAction::<DeleteUser>::new();
    let error = action_error(action);
    let user = detail.user;
    let tokens = tokens_line(&detail.tokens, "stops working.", "stop working.");
    view! {
        <section class="card card-danger" data-testid="confirm-delete-user">
            <h2>"Delete " {user.username.clone()} "?"</h2>
            <ul>
                <li>"Their account goes for good: they cannot sign in, and their sessions end now."</li>
                <li data-testid="owned-tokens">{tokens}</li>
                {clusters_stay(&detail.owned_clusters, &user.tenant, ", with no owner")}
                {detail.only_tenant_admin.then(|| view! {
                    <li>{format!("They are the only tenant admin of {}: after this, only superadmins administer it.", user.tenant)}</li>
                })}
            </ul>
            <ActionForm action attr:data-testid="delete-user-form">
                <CsrfField/>
                <input type="hidden" name="id" value=user.id.clone()/>
                <FormError error/>
                {confirm_buttons(format!("Delete {}", user.username), "delete-user", user_path(&user.username))}
            </ActionForm>
        </section>
    }
}

/// The first step of a move (superadmins): choose the tenant, then see what the move does.
#[component]
fn MoveStart(tenant: String, targets: Vec<String>) -> impl IntoView {
    let options = targets
        .into_iter()
        .map(|name| view! { <option value=name.clone()>{name.clone()}</option> })
        .collect_view();
    view! {
        <section class="card">
            <h2>"Move to another tenant"</h2>
            <p class="muted">{format!("Their clusters stay in {tenant}; the next step shows what moves and what ends, before anything changes.")}</p>
            <Form method="GET" action="" attr:class="inline" attr:data-testid="move-user-start">
                <input type="hidden" name="confirm" value="move-user"/>
                <label for="move-tenant">"Tenant"</label>
                <select id="move-tenant" name="tenant">{options}</select>
                <button class="button button-quiet" type="submit">"Review the move"</button>
            </Form>
        </section>
    }
}

/// The second step of a move: what happens to the user's sessions, tokens, clusters
/// and role, and the button that moves them.
#[component]
fn MoveConfirm(
    detail: UserDetail,
    target: Option<String>,
    action: ServerAction<MoveUser>,
) -> impl IntoView {
    let user = detail.user.clone();
    let back = user_path(&user.username);
    let Some(target) = target.filter(|target| detail.move_targets.contains(target)) else {
        return view! {
            <section class="card" data-testid="confirm-move-user">
                <p class="banner banner-bad" role="alert">
                    {format!("Choose a tenant to move {} to: every tenant but {} is offered.", user.username, user.tenant)}
                </p>
                <a class="button button-quiet" href=back data-testid="cancel">"Back"</a>
            </section>
        }
        .into_any();
    };
    let error = action_error(action);
    let from = user.tenant.clone();
    // A token acts in its user's tenant: left live, a script set up for the old
    // tenant would carry on in the new one.
    let why = format!(
        "revoked: a token acts in its user's tenant, so a script set up for {from} would carry on in {target}. They make new ones after the move."
    );
    let tokens = tokens_line(&detail.tokens, &format!("is {why}"), &format!("are {why}"));
    let role = match user.role {
        Role::TenantAdmin => {
            format!("Their role stays tenant-admin: they will administer {target}.")
        }
        _ => format!(
            "Their role stays {}: they create clusters in {target}.",
            user.role.as_str()
        ),
    };
    view! {
        <section class="card card-danger" data-testid="confirm-move-user">
            <h2>{format!("Move {} from {from} to {target}?", user.username)}</h2>
            <ul>
                <li>{format!("Their sessions end: they sign in again, into {target}.")}</li>
                <li data-testid="owned-tokens">{tokens}</li>
                {clusters_stay(&detail.owned_clusters, &from, &format!("; they will not see them from {target}"))}
                <li>{role}</li>
                {detail.only_tenant_admin.then(|| view! {
                    <li>{format!("They are the only tenant admin of {from}: after the move, only superadmins administer it.")}</li>
                })}
            </ul>
            <ActionForm action=action attr:data-testid="move-user-form">
                <CsrfField/>
                <input type="hidden" name="id" value=user.id.clone()/>
                <input type="hidden" name="tenant" value=target.clone()/>
                <FormError error/>
                {confirm_buttons(format!("Move {} to {target}", user.username), "move-user", back)}
            </ActionForm>
        </section>
    }
    .into_any()
}
