//! The frame of every admin page: the console's navigation with the tenant being
//! administered (a superadmin's tenant switcher) for admins; for tenant users only
//! the page, which shows them the 403 card.

use leptos::prelude::*;
use leptos::server_fn::ServerFn;
use leptos_router::components::A;
use leptos_router::hooks::use_location;

use crate::components::errors::{set_status, PageError};
use crate::components::session::CsrfField;
use crate::error::UiError;
use crate::server_fns::admin::scope::current_admin_scope;
use crate::server_fns::admin::switch_tenant::SwitchTenant;
use crate::server_fns::admin::{ConsoleKind, EntityKind};

#[component]
pub fn AdminLayout(children: Children) -> impl IntoView {
    // The scope is made before the page's own resources, so server and browser
    // number them alike. The role check is the pages' own: their server functions
    // refuse non-admins and the page shows that with [`admin_error`] (a 403 page);
    // the frame only leaves the sidebar out then.
    let scope = Resource::new(|| (), |_| current_admin_scope());
    view! {
        <div class="admin">
            <Suspense fallback=|| view! { <aside class="admin-side"><AdminNav/></aside> }>
                {move || Suspend::new(async move {
                    match scope.await {
                        Err(UiError::Forbidden(_)) => ().into_any(),
                        scope => view! {
                            <aside class="admin-side">
                                {scope.ok().map(|scope| view! { <TenantSwitcher scope/> })}
                                <AdminNav/>
                            </aside>
                        }.into_any(),
                    }
                })}
            </Suspense>
            <div class="admin-main">{children()}</div>
        </div>
    }
}

/// How an admin page shows its load error: a 403 page for a tenant user, else
/// the usual page error.
pub fn admin_error(error: UiError) -> AnyView {
    match error {
        UiError::Forbidden(_) => view! { <Forbidden/> }.into_any(),
        error => view! { <PageError error/> }.into_any(),
    }
}

#[component]
fn Forbidden() -> impl IntoView {
    set_status(403);
    view! {
        <section class="card error-card" role="alert" data-testid="forbidden">
            <h1>"403 · Admins only"</h1>
            <p>"The admin console is for tenant admins and superadmins. Your account can create and manage clusters."</p>
            <p><a href="/clusters">"Back to your clusters"</a></p>
        </section>
    }
}

#[component]
fn AdminNav() -> impl IntoView {
    let catalog = EntityKind::ALL
        .into_iter()
        .map(|kind| {
            view! { <li><A href=format!("/admin/{}", kind.path())>{kind.title()}</A></li> }
        })
        .collect_view();
    view! {
        <nav class="admin-nav" aria-label="Admin">
            <ul>
                <li><A href="/admin" exact=true>"Overview"</A></li>
            </ul>
            <h2 class="admin-nav-head">"Catalog"</h2>
            <ul>
                {catalog}
                <li><A href="/admin/catalog">"Import / export"</A></li>
                <li><A href="/admin/resources">"Resources"</A></li>
                <li><A href="/admin/rollouts">"Rollouts"</A></li>
                <li><A href="/admin/hooks">"Hooks"</A></li>
                <li><A href="/admin/hosts">"Pool hosts"</A></li>
            </ul>
            <h2 class="admin-nav-head">"Access"</h2>
            <ul>
                <li><A href="/admin/tenants">"Tenants"</A></li>
                <li><A href="/admin/users">"Users"</A></li>
                <li><A href="/admin/tokens">"API tokens"</A></li>
                <li><A href="/admin/approvals">"Approvals"</A></li>
                <li><A href="/admin/showback">"Showback"</A></li>
                <li><A href="/admin/audit">"Audit log"</A></li>
            </ul>
        </nav>
    }
}

/// The tenant being administered; a superadmin can switch to another.
#[component]
pub fn TenantSwitcher(scope: crate::server_fns::admin::AdminScope) -> impl IntoView {
    let location = use_location();
    if scope.tenants.is_empty() {
        return view! {
            <p class="admin-tenant">"Tenant " <strong>{scope.tenant_name}</strong></p>
        }
        .into_any();
    }
    let current = scope.tenant_id.clone();
    let options = scope
        .tenants
        .into_iter()
        .map(|(id, name)| {
            let selected = id == current;
            view! { <option value=id selected=selected>{name}</option> }
        })
        .collect_view();
    view! {
        // A plain form: switching changes every page's data, so the whole page
        // reloads (with or without JavaScript) in the chosen tenant.
        <form method="post" action=SwitchTenant::url() class="admin-tenant">
            <CsrfField/>
            <input type="hidden" name="next" value=move || location.pathname.get()/>
            <label for="admin-tenant">"Tenant"</label>
            <div class="inline">
                <select id="admin-tenant" name="tenant" data-testid="tenant-switcher">{options}</select>
                <button class="button button-small button-quiet" type="submit">"Switch"</button>
            </div>
        </form>
    }
    .into_any()
}
