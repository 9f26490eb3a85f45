//! The HTTP surface: server-rendered pages, server functions, the JSON API under
//! `/api/v1`, static assets, health. Sessions (cookie + database store) wrap it all.

pub mod hardening;
mod health;
mod page_guard;
mod server_fn_status;

use std::path::Path;
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
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

/// What every handler can reach.
#[derive(Clone, FromRef)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    pub store: Store,
    pub service: Service,
    pub sessions: crate::sessions::SessionBackend,
    /// Whether cookies get the Secure flag (Corral is reached over TLS).
    pub secure_cookies: bool,
    /// A session older than this is refused however active it is.
    pub session_max_age_ms: i64,
    /// Reverse proxies whose `X-Forwarded-For` names the client.
    pub trusted_proxies: hardening::TrustedProxies,
}

/// The largest request body anything accepts: a resource upload through the console,
/// with room for its form fields. The JSON API sets lower limits per route.
const MAX_REQUEST_BYTES: usize = engine::resources::MAX_RESOURCE_BYTES + 1024 * 1024;

/// Leptos settings pointing at the bundle the build writes to `site_dir/pkg`.
pub fn leptos_options(site_dir: &Path) -> LeptosOptions {
    LeptosOptions::builder()
        .output_name(app::OUTPUT_NAME)
        .site_root(site_dir.to_string_lossy().into_owned())
        .site_pkg_dir("pkg")
        .build()
}

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
    let pkg_dir = Path::new(state.leptos_options.site_root.as_ref()).join("pkg");
    let context = {
        let store = state.store.clone();
        let service = state.service.clone();
        let policy = app::session::SessionPolicy {
            max_age_ms: state.session_max_age_ms,
        };
        // What every page and server function finds in its reactive context.
        move || {
            provide_context(store.clone());
            provide_context(service.clone());
            provide_context(policy);
        }
    };
    let sessions = state.sessions.clone().layer(state.secure_cookies);
    let proxies = state.trusted_proxies.clone();
    let mut router = Router::new()
        .nest("/api/v1", crate::api::router())
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .nest_service("/pkg", ServeDir::new(pkg_dir))
        .leptos_routes_with_context(&state, routes, context.clone(), {
            let options = state.leptos_options.clone();
            move || app::shell(options.clone())
        })
        .fallback(leptos_axum::file_and_error_handler_with_context::<
            AppState,
            _,
        >(context, app::shell))
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
        .with_state(state)
        .layer(sessions)
        .layer(RequestBodyLimitLayer::new(MAX_REQUEST_BYTES));
    for (name, value) in hardening::security_headers() {
        router = router.layer(SetResponseHeaderLayer::if_not_present(name, value));
    }
    // A panicking handler answers 500 instead of dropping the connection unanswered.
    router.layer(CatchPanicLayer::new())
}
