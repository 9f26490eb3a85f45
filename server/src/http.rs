//! The HTTP surface: server-rendered pages, server functions, the JSON API under
//! `/api/v1`, static assets, health. Sessions (cookie + database store) wrap it all.

pub mod bundle;
pub mod csp;
pub mod hardening;
mod health;
mod page_guard;
mod server_fn_status;

use std::sync::LazyLock;

use axum::extract::FromRef;
use axum::routing::get;
use axum::Router;
use engine::service::Service;
use engine::store::Store;
use leptos::prelude::*;
use leptos_axum::{generate_route_list, AxumRouteListing, LeptosRoutes};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::set_header::SetResponseHeaderLayer;

/// What every handler can reach.
#[derive(Clone, FromRef)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    /// The browser bundle served under `/pkg/`.
    pub bundle: bundle::Bundle,
    pub store: Store,
    pub service: Service,
    pub sessions: crate::sessions::SessionBackend,
    /// Whether cookies get the Secure flag (Corral is reached over TLS).
    pub secure_cookies: bool,
    /// A session older than this is refused however active it is.
    pub session_max_age_ms: i64,
    /// Reverse proxies whose `X-Forwarded-For` names the client.
    pub trusted_proxies: hardening::TrustedProxies,
    /// The process's metrics, served at `/metrics`.
    pub metrics: crate::metrics::Metrics,
    /// The shared reads of the jobs whose event streams are open.
    pub job_feeds: crate::api::JobFeeds,
    /// The single sign-on issuers the operator configured (none by default).
    pub sso: crate::sso::Sso,
}

/// The largest request body anything accepts: a resource upload through the console,
/// with room for its form fields. The JSON API sets lower limits per route.
const MAX_REQUEST_BYTES: usize = engine::resources::MAX_RESOURCE_BYTES + 1024 * 1024;

/// Leptos settings naming `bundle`'s scripts' directory, which pages load from
/// (`/pkg/corral-<hash>/corral.js`).
pub fn leptos_options(bundle: &bundle::Bundle) -> LeptosOptions {
    LeptosOptions::builder()
        .output_name(app::OUTPUT_NAME)
        .site_pkg_dir(bundle.pkg_dir())
        .build()
}

/// Pages, API answers and everything else but the hashed bundle files may be stored
/// by the browser but are checked again before each use (`/pkg/` sets its own).
const CACHE_CONTROL: axum::http::HeaderValue = axum::http::HeaderValue::from_static("no-cache");

/// The pages' routes, listed once per process.
///
/// Listing runs the app with resource loading switched off by a flag that is global to
/// the process (Leptos's `SuppressResourceLoad`), and a resource first polled while the
/// flag is up never loads, in any render. Listing again for every router (each test
/// server makes one) let one test's listing stall another test's page for good: the
/// page hang the page tests used to work around. Listed once, before any router can
/// serve a page, the flag is never up while a page renders.
static ROUTES: LazyLock<Vec<AxumRouteListing>> = LazyLock::new(|| generate_route_list(app::App));

/// The whole application router.
pub fn router(state: AppState) -> Router {
    let routes = ROUTES.clone();
    let shell = {
        let assets = state.bundle.shell_assets();
        move |options: LeptosOptions| app::shell(options, assets.clone())
    };
    let context = {
        let store = state.store.clone();
        let service = state.service.clone();
        let policy = app::session::SessionPolicy {
            max_age_ms: state.session_max_age_ms,
        };
        let split_manifest = state.bundle.split_manifest();
        let sso_buttons = crate::sso::app_buttons(&state.sso);
        // What every page and server function finds in its reactive context.
        move || {
            csp::provide_page_nonce();
            provide_context(store.clone());
            provide_context(service.clone());
            provide_context(policy);
            provide_context(sso_buttons.clone());
            if let Some(manifest) = &split_manifest {
                provide_context(manifest.clone());
            }
        }
    };
    let sessions = state.sessions.clone().layer(state.secure_cookies);
    let proxies = state.trusted_proxies.clone();
    let mut router = Router::new()
        .nest("/api/v1", crate::api::router())
        .nest("/auth/sso", crate::sso::router())
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(crate::metrics::scrape_as_superadmin))
        .route("/pkg/{*name}", get(bundle::serve_asset))
        .leptos_routes_with_context(&state, routes, context.clone(), {
            let options = state.leptos_options.clone();
            let shell = shell.clone();
            move || shell(options.clone())
        })
        // Unknown addresses get the app's "not found" page (status 404, set by it).
        .fallback(leptos_axum::render_app_async_with_context(context, {
            let options = state.leptos_options.clone();
            move || shell(options.clone())
        }))
        .layer(axum::middleware::from_fn(page_guard::page_guard))
        .layer(axum::middleware::from_fn(
            server_fn_status::server_fn_status,
        ))
        .layer(axum::middleware::from_fn(
            hardening::refuse_cross_site_writes,
        ))
        .layer(axum::middleware::from_fn_with_state(
            proxies,
            hardening::resolve_client_ip,
        ))
        // Inside the routes, where each request's route pattern is known.
        .layer(axum::middleware::from_fn(crate::metrics::track_requests))
        .with_state(state)
        .layer(sessions)
        .layer(RequestBodyLimitLayer::new(MAX_REQUEST_BYTES));
    router = router.layer(axum::middleware::from_fn(csp::content_security_policy));
    for (name, value) in hardening::security_headers() {
        let on_scripts = name == axum::http::header::X_CONTENT_TYPE_OPTIONS;
        router = router.layer(SetResponseHeaderLayer::if_not_present(
            name,
            move |response: &axum::response::Response| {
                (on_scripts || !hardening::is_script_response(response)).then(|| value.clone())
            },
        ));
    }
    router = router.layer(SetResponseHeaderLayer::if_not_present(
        axum::http::header::CACHE_CONTROL,
        CACHE_CONTROL,
    ));
    // A panicking handler answers 500 instead of dropping the connection unanswered.
    router.layer(CatchPanicLayer::new())
}
