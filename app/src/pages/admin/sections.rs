//! The admin console's routes, dispatched on their first segment: `/admin`,
//! `/admin/<section>` (a catalog kind's list, `catalog`, `resources`, `tenants`,
//! `users`, `tokens`, `audit`, `approvals`, `rollouts`, `hooks`, `showback`), `/admin/users/<username>` (a
//! user's page),
//! `/admin/<kind>/new` (the create form), `/admin/<kind>/<name>` and
//! `/admin/<kind>/<name>/edit`. Each shape is one flat route (a split point of the
//! browser bundle, see `crate::routes`), and the page inside the admin frame follows
//! the URL as it changes.

use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use super::catalog::form::EntityFormPage;
use super::catalog::list::EntityListPage;
use super::catalog::show::EntityShowPage;
use super::layout::AdminLayout;
use super::{audit, import, overview, resources, tenants, tokens, user, users};
use crate::pages::not_found::NotFound;
use crate::server_fns::admin::{ConsoleKind, EntityKind};

fn param(name: &'static str) -> Memo<String> {
    let params = use_params_map();
    Memo::new(move |_| params.with(|params| params.get(name).unwrap_or_default()))
}

#[component]
pub fn AdminHome() -> impl IntoView {
    view! { <AdminLayout><overview::OverviewPage/></AdminLayout> }
}

#[component]
pub fn AdminSectionPage() -> impl IntoView {
    let section = param("section");
    view! {
        <AdminLayout>
            {move || {
                let section = section.get();
                match section.as_str() {
                    "catalog" => view! { <import::CatalogPage/> }.into_any(),
                    "resources" => view! { <resources::ResourcesPage/> }.into_any(),
                    "hosts" => view! { <super::hosts::HostsPage/> }.into_any(),
                    "tenants" => view! { <tenants::TenantsPage/> }.into_any(),
                    "users" => view! { <users::UsersPage/> }.into_any(),
                    "tokens" => view! { <tokens::TokensPage/> }.into_any(),
                    "audit" => view! { <audit::AuditPage/> }.into_any(),
                    "approvals" => view! { <super::approvals::ApprovalsPage/> }.into_any(),
                    "rollouts" => view! { <super::rollouts::RolloutsPage/> }.into_any(),
                    "hooks" => view! { <super::hooks::HooksPage/> }.into_any(),
                    "showback" => view! { <super::showback::ShowbackPage/> }.into_any(),
                    other => match EntityKind::parse(other) {
                        Some(kind) => view! { <EntityListPage kind/> }.into_any(),
                        None => view! { <NotFound/> }.into_any(),
                    },
                }
            }}
        </AdminLayout>
    }
}

/// `/admin/<kind>/<name>`. A user's page and the create forms have routes of their own
/// (before this one), so this route's code is only the entity pages'.
#[component]
pub fn AdminEntityPage() -> impl IntoView {
    let section = param("section");
    view! {
        <AdminLayout>
            {move || match EntityKind::parse(&section.get()) {
                Some(kind) => view! { <EntityShowPage kind/> }.into_any(),
                None => view! { <NotFound/> }.into_any(),
            }}
        </AdminLayout>
    }
}

/// `/admin/<kind>/new`.
#[component]
pub fn AdminNewPage() -> impl IntoView {
    entity_form(false)
}

/// `/admin/<kind>/<name>/edit`.
#[component]
pub fn AdminEditPage() -> impl IntoView {
    entity_form(true)
}

/// The create or edit form of the entity kind the URL's section names.
fn entity_form(editing: bool) -> impl IntoView {
    let section = param("section");
    view! {
        <AdminLayout>
            {move || match EntityKind::parse(&section.get()) {
                Some(kind) => view! { <EntityFormPage kind editing/> }.into_any(),
                None => view! { <NotFound/> }.into_any(),
            }}
        </AdminLayout>
    }
}

/// `/admin/users/<username>`.
#[component]
pub fn AdminUserPage() -> impl IntoView {
    view! { <AdminLayout><user::UserPage/></AdminLayout> }
}
