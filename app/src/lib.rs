//! Corral's user interface: Leptos components, pages and server functions.
//!
//! The same code renders on the server (feature `ssr`) and hydrates in the browser
//! (feature `hydrate`, built to wasm by the `frontend` crate). Server functions are
//! thin: they parse, call `engine::service` as the signed-in user, and map errors;
//! rules live in `engine`/`domain`. Every route renders completely on the server
//! (`SsrMode::Async`), so each page works with JavaScript off and gets better with it.

pub mod components;
pub mod error;
#[cfg(feature = "hydrate")]
mod live;
pub mod model;
pub mod pages;
pub mod server_fns;
#[cfg(feature = "ssr")]
pub mod session;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::components::{ParentRoute, Route, Router, Routes};
use leptos_router::{path, SsrMode};

/// The wasm/JS/CSS bundle name the server announces and the build writes.
pub const OUTPUT_NAME: &str = "corral";

/// The HTML document around every page, rendered on the server only.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link rel="icon" type="image/svg+xml" href="/pkg/favicon.svg"/>
                <HydrationScripts options/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// The application root: routes to pages.
#[component]
pub fn App() -> impl IntoView {
    use pages::clusters::{
        job::JobShowPage, list::ClusterListPage, new::NewClusterPage, show::ClusterShowPage,
    };

    provide_meta_context();
    view! {
        <Stylesheet id="corral" href="/pkg/corral.css"/>
        <Title text="Corral"/>
        <Router>
            <components::layout::Layout>
                <Routes fallback=pages::not_found::NotFound>
                    <Route path=path!("/login") view=pages::login::LoginPage ssr=SsrMode::Async/>
                    <Route path=path!("/clusters") view=ClusterListPage ssr=SsrMode::Async/>
                    <Route path=path!("/clusters/new") view=NewClusterPage ssr=SsrMode::Async/>
                    <Route path=path!("/clusters/:id") view=ClusterShowPage ssr=SsrMode::Async/>
                    <Route path=path!("/clusters/:id/jobs/:job") view=JobShowPage ssr=SsrMode::Async/>
                    <AdminRoutes/>
                </Routes>
            </components::layout::Layout>
        </Router>
    }
}

/// The admin console's routes under `/admin`, inside its layout (role check,
/// navigation).
#[component(transparent)]
fn AdminRoutes() -> impl leptos_router::MatchNestedRoutes + Clone {
    use model::admin::Kind;
    use pages::admin::{audit, import, layout, overview, resources, tenants, tokens, users};

    view! {
        <ParentRoute path=path!("/admin") view=layout::AdminLayout ssr=SsrMode::Async>
            <Route path=path!("") view=overview::OverviewPage ssr=SsrMode::Async/>
            <KindRoutes kind=Kind::Providers/>
            <KindRoutes kind=Kind::Hardware/>
            <KindRoutes kind=Kind::Images/>
            <KindRoutes kind=Kind::Services/>
            <KindRoutes kind=Kind::Templates/>
            <Route path=path!("/catalog") view=import::CatalogPage ssr=SsrMode::Async/>
            <Route path=path!("/resources") view=resources::ResourcesPage ssr=SsrMode::Async/>
            <Route path=path!("/tenants") view=tenants::TenantsPage ssr=SsrMode::Async/>
            <Route path=path!("/users") view=users::UsersPage ssr=SsrMode::Async/>
            <Route path=path!("/tokens") view=tokens::TokensPage ssr=SsrMode::Async/>
            <Route path=path!("/audit") view=audit::AuditPage ssr=SsrMode::Async/>
        </ParentRoute>
    }
    .into_inner()
}

/// One catalog kind's pages: its list, `/new` (`?from=` clones), `/{name}` and
/// `/{name}/edit`.
#[component(transparent)]
fn KindRoutes(kind: model::admin::Kind) -> impl leptos_router::MatchNestedRoutes + Clone {
    use leptos_router::components::Outlet;
    use leptos_router::{ParamSegment, StaticSegment};
    use pages::admin::catalog::form::{EntityEditPage, EntityNewPage};
    use pages::admin::catalog::list::EntityListPage;
    use pages::admin::catalog::show::EntityShowPage;

    view! {
        <ParentRoute path=StaticSegment(kind.path()) view=Outlet ssr=SsrMode::Async>
            <Route path=path!("") view=move || view! { <EntityListPage kind/> } ssr=SsrMode::Async/>
            <Route path=path!("/new") view=move || view! { <EntityNewPage kind/> } ssr=SsrMode::Async/>
            <Route path=(ParamSegment("name"),) view=move || view! { <EntityShowPage kind/> } ssr=SsrMode::Async/>
            <Route path=(ParamSegment("name"), StaticSegment("edit")) view=move || view! { <EntityEditPage kind/> } ssr=SsrMode::Async/>
        </ParentRoute>
    }
    .into_inner()
}
