//! `/admin/users`: users with their roles, and a form to add one (the password is
//! set here and never shown again). Each name leads to the user's page, where the
//! role and password are changed and the user deleted.

use api_types::{Role, MIN_PASSWORD_CHARS};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::errors::action_error;
use crate::components::form::{AdminForm, Field, TextField};
use crate::components::session::use_me;
use crate::components::table::DataTable;
use crate::components::time::timestamp;
use crate::pages::admin::loaded::{Loaded, OnceLoaded};
use crate::server_fns::admin::create_user::CreateUser;
use crate::server_fns::admin::users::list_users;
use crate::server_fns::admin::UserRow;

#[component]
pub fn UsersPage() -> impl IntoView {
    let create = ServerAction::<CreateUser>::new();
    // Reloads after an add: its redirect stays on this route, which a browser
    // with JavaScript does not load again.
    let users = Resource::new(move || create.version().get(), |_| list_users());
    let me = use_me();
    let query = use_query_map();
    let deleted = move || query.with(|query| query.get("deleted"));
    let error = action_error(create);
    view! {
        <Title text="Users · Admin · Corral"/>
        <div class="page-head"><h1>"Users"</h1></div>
        {move || deleted().map(|name| view! {
            <p class="banner banner-ok" role="status" data-testid="user-deleted">"User " <strong>{name}</strong> " deleted."</p>
        })}
        <Loaded data=users render={|rows: Vec<UserRow>| {
            let rows = rows.into_iter().map(|row| view! {
                <tr data-user=row.username.clone()>
                    <th scope="row"><a href=format!("/admin/users/{}", crate::query::encode_value(&row.username))>{row.username.clone()}</a></th>
                    <td><span class="chip">{row.role.as_str()}</span></td>
                    <td>{row.tenant}</td>
                    <td>{timestamp(row.created_at_ms)}</td>
                </tr>
            }).collect_view();
            view! {
                <DataTable card=true testid="user-table" columns=&["User", "Role", "Tenant", "Created"]>
                    {rows}
                </DataTable>
            }.into_any()
        }}/>
        <OnceLoaded data=users>
            <section class="card">
                <h2>"Add a user"</h2>
                <AdminForm action=create error submit="Add user">
                    <TextField label="Username" id="user-name" name="username" error
                        required=true autocomplete="off"/>
                    <TextField label="Password" id="user-password" name="password" error
                        password=true required=true minlength=MIN_PASSWORD_CHARS autocomplete="new-password"
                        hint=format!("At least {MIN_PASSWORD_CHARS} characters.")/>
                    <Field label="Role" id="user-role">
                        <select id="user-role" name="role">
                            <option value=Role::User.as_str()>"user (creates clusters)"</option>
                            <option value=Role::TenantAdmin.as_str()>"tenant-admin (manages the catalog and users)"</option>
                            <Suspense>
                                {move || Suspend::new(async move {
                                    matches!(me.await, Ok(Some(me)) if me.role == Role::Superadmin)
                                        .then(|| view! { <option value=Role::Superadmin.as_str()>"superadmin"</option> })
                                })}
                            </Suspense>
                        </select>
                    </Field>
                    <TextField label="Tenant" id="user-tenant" name="tenant" placeholder="the administered tenant"/>
                </AdminForm>
            </section>
        </OnceLoaded>
    }
}
