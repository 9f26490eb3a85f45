//! `/api/v1`: the JSON interface scripts and the `corral` CLI use, over
//! [`engine::service`]. Handlers are grouped by resource, one module each; they only
//! extract, call the service and shape the response.
//!
//! The OpenAPI 3 document is generated from the handlers' annotations ([`ApiDoc`])
//! and served at `/api/v1/openapi.json`, with a reference page rendered from it at
//! `/api/v1/docs`.

mod accounts;
mod approvals;
mod catalog;
mod clusters;
mod cost;
mod docs;
pub mod error;
pub mod extract;
mod hooks;
mod jobs;
pub use jobs::{JobFeeds, DEFAULT_STREAMS_PER_USER};
mod node_shell;
mod node_terminal;
mod pool_hosts;
mod providers;
mod rollouts;
mod session;
mod user_keys;

use std::sync::LazyLock;

use axum::extract::DefaultBodyLimit;
use axum::routing::get;
use axum::{Json, Router};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::http::AppState;
use error::ApiError;

/// Largest JSON body (a whole catalog bundle fits with room to spare).
pub const MAX_JSON_BYTES: usize = 8 * 1024 * 1024;

#[derive(OpenApi)]
#[openapi(
    info(title = "Corral API", version = "1", description = "Self-service cluster provisioning. \
        Authenticate with `Authorization: Bearer <token>` (create tokens at /api/v1/tokens) or \
        with the session cookie from POST /api/v1/session plus the X-CSRF-Token header on \
        state-changing requests. Errors are `{error, message, details}`."),
    modifiers(&Security),
    security(("bearer" = []), ("session" = [])),
    // What hooks are sent and answer, which no route returns (docs/integrations.md).
    components(schemas(api_types::HookEventBody, api_types::GateRequestBody, api_types::GateAnswer)),
)]
pub struct ApiDoc;

struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::new(
                crate::sessions::COOKIE_NAME,
            ))),
        );
    }
}

/// The OpenAPI document: [`ApiDoc`]'s description with every route [`routes`] serves,
/// under `/api/v1`. Built once, from the same list that builds the router.
pub fn document() -> &'static utoipa::openapi::OpenApi {
    static DOCUMENT: LazyLock<utoipa::openapi::OpenApi> =
        LazyLock::new(|| ApiDoc::openapi().nest("/api/v1", routes().split_for_parts().1));
    &DOCUMENT
}

async fn openapi_json() -> Json<&'static utoipa::openapi::OpenApi> {
    Json(document())
}

async fn no_such_endpoint() -> ApiError {
    ApiError::not_found("no such API endpoint; see /api/v1/docs")
}

/// Every documented route, each handler listed once: `routes!` reads the method and
/// path from the handler's `#[utoipa::path]`, so the router and the document agree.
fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(session::login, session::current, session::logout))
        .routes(routes!(session::logout_everywhere))
        .routes(routes!(clusters::list, clusters::create))
        .routes(routes!(clusters::show, clusters::delete))
        .routes(routes!(clusters::plan))
        .routes(routes!(clusters::change))
        .routes(routes!(clusters::extend_lease))
        .routes(routes!(clusters::set_healing))
        .routes(routes!(clusters::set_pinned))
        .routes(routes!(jobs::show))
        .routes(routes!(jobs::tasks))
        .routes(routes!(jobs::attempts))
        .routes(routes!(jobs::events))
        .routes(routes!(jobs::stream))
        .routes(routes!(jobs::cancel))
        .routes(routes!(jobs::retry))
        .routes(routes!(catalog::export))
        .routes(routes!(catalog::import))
        .routes(routes!(rollouts::start, rollouts::list))
        .routes(routes!(rollouts::show))
        .routes(routes!(catalog::list))
        .routes(routes!(catalog::show, catalog::put, catalog::delete))
        .routes(routes!(catalog::history))
        .routes(routes!(catalog::resources))
        .merge(
            OpenApiRouter::new()
                .routes(routes!(catalog::upload))
                .layer(DefaultBodyLimit::max(
                    engine::resources::MAX_RESOURCE_BYTES + 1,
                )),
        )
        .routes(routes!(catalog::stage))
        .routes(routes!(accounts::me))
        .routes(routes!(accounts::change_password))
        .routes(routes!(user_keys::list, user_keys::add))
        .routes(routes!(user_keys::remove))
        .routes(routes!(user_keys::show_setting, user_keys::set_setting))
        .routes(routes!(accounts::list_users, accounts::create_user))
        .routes(routes!(
            accounts::show_user,
            accounts::update_user,
            accounts::delete_user
        ))
        .routes(routes!(accounts::move_user))
        .routes(routes!(accounts::list_user_tokens))
        .routes(routes!(accounts::revoke_user_token))
        .routes(routes!(accounts::list_tenants, accounts::create_tenant))
        .routes(routes!(accounts::show_tenant, accounts::delete_tenant))
        .routes(routes!(accounts::update_quotas))
        .routes(routes!(accounts::set_local_nodes))
        .routes(routes!(accounts::set_provider_types))
        .routes(routes!(accounts::set_dedicated_workers))
        .routes(routes!(accounts::list_tokens, accounts::create_token))
        .routes(routes!(accounts::revoke_token))
        .routes(routes!(accounts::audit))
        .routes(routes!(pool_hosts::list, pool_hosts::register))
        .routes(routes!(
            pool_hosts::show,
            pool_hosts::update,
            pool_hosts::remove
        ))
        .routes(routes!(
            providers::show_credentials,
            providers::set_credentials,
            providers::delete_credentials
        ))
        .routes(routes!(
            providers::show_my_credentials,
            providers::set_my_credentials,
            providers::delete_my_credentials
        ))
        .routes(routes!(providers::test))
        .routes(routes!(hooks::list, hooks::add))
        .routes(routes!(hooks::show, hooks::remove))
        .routes(routes!(hooks::test))
        .routes(routes!(hooks::deliveries))
        .routes(routes!(hooks::redeliver))
        .routes(routes!(approvals::list_groups, approvals::add_group))
        .routes(routes!(approvals::show_group, approvals::remove_group))
        .routes(routes!(approvals::add_member))
        .routes(routes!(approvals::remove_member))
        .routes(routes!(approvals::list_rules, approvals::add_rule))
        .routes(routes!(approvals::remove_rule))
        .routes(routes!(approvals::list))
        .routes(routes!(approvals::show))
        .routes(routes!(approvals::approve))
        .routes(routes!(approvals::deny))
        .routes(routes!(cost::show_budget, cost::set_budget))
        .routes(routes!(cost::showback))
        .routes(routes!(node_shell::certificate))
        .routes(routes!(node_shell::tunnel))
        .routes(routes!(node_shell::set_node_shell))
        .routes(routes!(node_terminal::terminal))
        .routes(routes!(node_terminal::set_terminal_recording))
        .routes(routes!(node_terminal::recording))
}

/// The `/api/v1` routes (to be nested under `/api/v1`).
pub fn router() -> Router<AppState> {
    let (documented, _) = routes().split_for_parts();
    Router::new()
        .route("/openapi.json", get(openapi_json))
        .route("/docs", get(docs::page))
        .merge(documented)
        .fallback(no_such_endpoint)
        .layer(DefaultBodyLimit::max(MAX_JSON_BYTES))
}
