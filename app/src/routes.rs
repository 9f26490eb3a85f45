//! Every page's view as a split point of the browser bundle.
//!
//! Each route below is a [`LazyRoute`]: in the browser its page's code is not in the
//! wasm every page loads but in a chunk fetched the first time the route renders, so
//! a user of the portal never downloads the admin console, the in-browser solver or
//! the DAG editor. On the server nothing changes: a route renders as before.
//!
//! One page is not here: the cluster list, `/clusters`, where every user lands. Its
//! code is in the main module, so the most visited page loads no chunk at all (a
//! chunk costs a request and compresses worse than the same code in one module).
//!
//! `data()` is empty because each page starts its own resources as it always did;
//! the chunk and the page's data are then fetched one after the other, which costs a
//! round trip on a client-side navigation only (a first visit is rendered whole on the
//! server, and the page's chunk is fetched while it hydrates).
//!
//! The split itself happens after compiling (`wasm-split`, run by `scripts/build.sh`);
//! see docs/bundle.md.

// Each split point's generated loader declares a `static` built with `unsafe` and the
// imports and exports that tie the chunks together: the macros' code, not ours, and
// only in the browser build.
#![cfg_attr(feature = "hydrate", allow(unsafe_code))]

use leptos::prelude::*;
use leptos_router::{lazy_route, LazyRoute};

use crate::pages;

/// One route: a unit struct whose lazily loaded view is the page component.
macro_rules! lazy_page {
    ($(#[$doc:meta])* $route:ident => $page:path) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $route;

        #[lazy_route]
        impl LazyRoute for $route {
            fn data() -> Self {
                Self
            }

            fn view(this: Self) -> AnyView {
                let _ = this;
                $page().into_any()
            }
        }
    };
}

lazy_page!(
    /// `/login`.
    LoginRoute => pages::login::LoginPage
);
lazy_page!(
    /// `/clusters/new`, with the in-browser estimate.
    NewClusterRoute => pages::clusters::new::NewClusterPage
);
lazy_page!(
    /// `/clusters/:id`.
    ClusterShowRoute => pages::clusters::show::ClusterShowPage
);
lazy_page!(
    /// `/clusters/:id/jobs/:job`, with the live view.
    JobShowRoute => pages::clusters::job::JobShowPage
);
lazy_page!(
    /// `/profile`: the signed-in user's own page and SSH keys.
    ProfileRoute => pages::profile::ProfilePage
);
lazy_page!(
    /// `/admin`.
    AdminHomeRoute => pages::admin::sections::AdminHome
);
lazy_page!(
    /// `/admin/:section`.
    AdminSectionRoute => pages::admin::sections::AdminSectionPage
);
lazy_page!(
    /// `/admin/users/:name`: a user's page.
    AdminUserRoute => pages::admin::sections::AdminUserPage
);
lazy_page!(
    /// `/admin/:section/new`: a create form, with the structured editors.
    AdminNewRoute => pages::admin::sections::AdminNewPage
);
lazy_page!(
    /// `/admin/:section/:name`: an entity's page (for templates, the try-it solver).
    AdminEntityRoute => pages::admin::sections::AdminEntityPage
);
lazy_page!(
    /// `/admin/:section/:name/edit`, with the DAG editor and the try-it solver.
    AdminEditRoute => pages::admin::sections::AdminEditPage
);
