//! Corral's user interface: Leptos components, pages and server functions.
//!
//! The same code renders on the server (feature `ssr`) and hydrates in the browser
//! (feature `hydrate`, built to wasm by the `frontend` crate). Server functions are
//! thin: they parse, call `engine::service` as the signed-in user, and map errors;
//! rules live in `engine`/`domain`. Every route renders completely on the server
//! (`SsrMode::Async`), so each page works with JavaScript off and gets better with it.

// Hydrating the larger pages nests view types deeper than the default limit allows.
#![recursion_limit = "256"]

pub mod components;
pub mod error;
#[cfg(feature = "hydrate")]
mod live;
pub mod pages;
pub mod query;
pub mod routes;
pub mod server_fns;
#[cfg(feature = "ssr")]
pub mod session;
#[cfg(feature = "hydrate")]
mod terminal;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Title};
use leptos_router::components::{Route, Router, Routes};
use leptos_router::{path, Lazy, SsrMode};

/// The wasm/JS/CSS bundle name the build writes (the server publishes it hashed).
pub const OUTPUT_NAME: &str = "corral";

/// What the page shell links to, chosen by the server from the bundle it serves
/// (content-hashed names). A server without a bundle links nothing: its pages still
/// work, without scripts.
#[derive(Debug, Clone, Default)]
pub struct ShellAssets {
    /// Whether to load the wasm (named by `LeptosOptions::output_name`).
    pub hydrate: bool,
    pub stylesheet: Option<String>,
    pub icon: Option<String>,
}

/// The HTML document around every page, rendered on the server only.
///
/// The stylesheet is linked here rather than through `leptos_meta` inside [`App`]: its
/// name is known to the server only, and the browser never re-renders the head.
pub fn shell(options: LeptosOptions, assets: ShellAssets) -> impl IntoView {
    let ShellAssets {
        hydrate,
        stylesheet,
        icon,
    } = assets;
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                {icon.map(|href| view! { <link rel="icon" type="image/svg+xml" href=href/> })}
                {stylesheet.map(|href| view! { <link rel="stylesheet" id="corral" href=href/> })}
                <meta name="csrf-token" content=components::session::csrf_token()/>
                {hydrate.then(|| view! { <HydrationScripts options/> })}
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
    use routes::{
        AdminEditRoute, AdminEntityRoute, AdminHomeRoute, AdminNewRoute, AdminSectionRoute,
        AdminUserRoute, ClusterShowRoute, JobShowRoute, LoginRoute, NewClusterRoute, ProfileRoute,
    };

    provide_meta_context();
    view! {
        <Title text="Corral"/>
        <Router>
            <components::layout::Layout>
                <Routes fallback=pages::not_found::NotFound>
                    <Route path=path!("/login") view={Lazy::<LoginRoute>::new()} ssr=SsrMode::Async/>
                    <Route path=path!("/clusters") view=pages::clusters::list::ClusterListPage ssr=SsrMode::Async/>
                    <Route path=path!("/clusters/new") view={Lazy::<NewClusterRoute>::new()} ssr=SsrMode::Async/>
                    <Route path=path!("/clusters/:id") view={Lazy::<ClusterShowRoute>::new()} ssr=SsrMode::Async/>
                    <Route path=path!("/clusters/:id/jobs/:job") view={Lazy::<JobShowRoute>::new()} ssr=SsrMode::Async/>
                    <Route path=path!("/profile") view={Lazy::<ProfileRoute>::new()} ssr=SsrMode::Async/>
                    // The admin console: flat shapes whose first segment names the
                    // section (see `pages::admin::sections`), flat like the portal's
                    // so they render and hydrate in the same order.
                    <Route path=path!("/admin") view={Lazy::<AdminHomeRoute>::new()} ssr=SsrMode::Async/>
                    <Route path=path!("/admin/:section") view={Lazy::<AdminSectionRoute>::new()} ssr=SsrMode::Async/>
                    // Before the entity route, which their paths match too: a user's
                    // page and the create forms are split points of their own.
                    <Route path=path!("/admin/users/:name") view={Lazy::<AdminUserRoute>::new()} ssr=SsrMode::Async/>
                    <Route path=path!("/admin/:section/new") view={Lazy::<AdminNewRoute>::new()} ssr=SsrMode::Async/>
                    <Route path=path!("/admin/:section/:name") view={Lazy::<AdminEntityRoute>::new()} ssr=SsrMode::Async/>
                    <Route path=path!("/admin/:section/:name/edit") view={Lazy::<AdminEditRoute>::new()} ssr=SsrMode::Async/>
                </Routes>
            </components::layout::Layout>
        </Router>
    }
}
