//! `/admin/users/<username>`: one user, with forms to change their role, set a new
//! password and delete them. Every change ends the user's sessions (the service
//! bumps their session epoch), so they sign in again under the new role or password.

use api_types::{Role, TokenView, MIN_PASSWORD_CHARS};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};

use crate::components::errors::{action_error, FormError};
use crate::components::form::{AdminForm, Field, TextField};
use crate::components::session::CsrfField;
use crate::components::time::timestamp;
use crate::server_fns::admin::delete_user::DeleteUser;
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
    let user = Resource::new(
        move || (username(), role.version().get(), password.version().get()),
        |(username, _, _)| admin_user(username),
    );
    view! {
        <Title text=move || format!("{} · Users · Admin · Corral", username())/>
        <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match user.await {
                    Ok(detail) => view! { <UserView detail role password/> }.into_any(),
                    Err(error) => crate::pages::admin::layout::admin_error(error),
                }
            })}
        </Suspense>
    }
}

#[component]
fn UserView(
    detail: UserDetail,
    role: ServerAction<SetUserRole>,
    password: ServerAction<ResetUserPassword>,
) -> impl IntoView {
    let query = use_query_map();
    let saved = move || query.with(|query| query.get("saved"));
    let user = detail.user;
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
        {move || saved().map(|what| {
            let message = if what == "password" {
                "Password set. The user's sessions have ended and their API tokens are revoked; they sign in with the new password."
            } else if what == "token" {
                "Token revoked: it no longer signs anything in."
            } else {
                "Role saved. The user's sessions have ended; they sign in again under the new role."
            };
            view! { <p class="banner banner-ok" role="status" data-testid="user-saved">{message}</p> }
        })}
        {if detail.is_me {
            view! {
                <p class="banner banner-info" role="status" data-testid="user-is-me">
                    "This is you: another admin changes your role or password, and you cannot delete yourself."
                </p>
            }.into_any()
        } else if user.role == Role::Superadmin && !detail.viewer_is_superadmin {
            view! {
                <p class="banner banner-info" role="status" data-testid="user-is-superadmin">
                    "A superadmin's account is changed only by superadmins."
                </p>
            }.into_any()
        } else {
            view! {
                <div class="grid">
                    <RoleForm action=role id=user.id.clone() role=user.role superadmin=detail.viewer_is_superadmin/>
                    <PasswordForm action=password id=user.id.clone()/>
                </div>
                <UserTokens user_id=user.id.clone() tokens=detail.tokens/>
                <DeleteForm id=user.id.clone() username=user.username.clone()/>
            }.into_any()
        }}
    }
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

#[component]
fn DeleteForm(id: String, username: String) -> impl IntoView {
    let action = ServerAction::<DeleteUser>::new();
    let error = action_error(action);
    view! {
        <section class="card card-danger">
            <h2>"Delete"</h2>
            <p class="muted">"The user's sessions and API tokens end with them. Their clusters stay with the tenant."</p>
            <ActionForm action attr:class="inline" attr:data-testid="delete-user-form">
                <CsrfField/>
                <input type="hidden" name="id" value=id/>
                <button class="button button-danger" type="submit" data-testid="delete-user">
                    "Delete " {username}
                </button>
            </ActionForm>
            <FormError error/>
        </section>
    }
}
