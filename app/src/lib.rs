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
pub mod server_fns;
#[cfg(feature = "ssr")]
pub mod session;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::components::{Route, Router, Routes};
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
                <meta name="csrf-token" content=components::session::csrf_token()/>
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
    use pages::admin::sections::{AdminEditPage, AdminEntityPage, AdminHome, AdminSectionPage};
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
                    // The admin console: four flat shapes whose first segment names
                    // the section (see `pages::admin::sections`), flat like the
                    // portal's so they render and hydrate in the same order.
                    <Route path=path!("/admin") view=AdminHome ssr=SsrMode::Async/>
                    <Route path=path!("/admin/:section") view=AdminSectionPage ssr=SsrMode::Async/>
                    <Route path=path!("/admin/:section/:name") view=AdminEntityPage ssr=SsrMode::Async/>
                    <Route path=path!("/admin/:section/:name/edit") view=AdminEditPage ssr=SsrMode::Async/>
                </Routes>
            </components::layout::Layout>
        </Router>
    }
}
