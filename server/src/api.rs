//! `/api/v1`: the JSON interface scripts and the `corral` CLI use, over
//! [`engine::service`]. Handlers are grouped by resource, one module each; they only
//! extract, call the service and shape the response.
//!
//! The OpenAPI 3 document is generated from the handlers' annotations ([`ApiDoc`])
//! and served at `/api/v1/openapi.json`, with a reference page rendered from it at
//! `/api/v1/docs`.

mod accounts;
mod catalog;
mod clusters;
mod docs;
pub mod error;
pub mod extract;
mod jobs;
mod pool_hosts;
mod session;

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post, put};
use axum::{Json, Router};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

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
    paths(
        session::login, session::current, session::logout, session::logout_everywhere,
        clusters::list, clusters::create, clusters::show, clusters::plan, clusters::change,
        clusters::extend_lease, clusters::delete,
        jobs::show, jobs::tasks, jobs::attempts, jobs::events, jobs::stream, jobs::cancel, jobs::retry,
        catalog::export, catalog::import, catalog::list, catalog::show, catalog::history,
        catalog::put, catalog::delete, catalog::resources, catalog::upload, catalog::stage,
        accounts::me, accounts::change_password,
        accounts::list_users, accounts::create_user, accounts::show_user, accounts::update_user,
        accounts::delete_user, accounts::list_user_tokens, accounts::revoke_user_token,
        accounts::list_tenants, accounts::create_tenant, accounts::show_tenant, accounts::delete_tenant,
        accounts::update_quotas, accounts::set_local_nodes,
        accounts::list_tokens, accounts::create_token, accounts::revoke_token,
        accounts::audit,
        pool_hosts::list, pool_hosts::register, pool_hosts::show, pool_hosts::update,
        pool_hosts::remove,
    ),
    modifiers(&Security),
    security(("bearer" = []), ("session" = [])),
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

async fn openapi_json() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}

async fn no_such_endpoint() -> ApiError {
    ApiError::not_found("no such API endpoint; see /api/v1/docs")
}

/// The `/api/v1` routes (to be nested under `/api/v1`).
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/openapi.json", get(openapi_json))
        .route("/docs", get(docs::page))
        .route(
            "/session",
            post(session::login)
                .get(session::current)
                .delete(session::logout),
        )
        .route(
            "/session/logout-everywhere",
            post(session::logout_everywhere),
        )
        .route("/clusters", get(clusters::list).post(clusters::create))
        .route(
            "/clusters/{id}",
            get(clusters::show).delete(clusters::delete),
        )
        .route("/clusters/{id}/plan", post(clusters::plan))
        .route("/clusters/{id}/changes", post(clusters::change))
        .route("/clusters/{id}/lease", put(clusters::extend_lease))
        .route("/jobs/{id}", get(jobs::show))
        .route("/jobs/{id}/tasks", get(jobs::tasks))
        .route("/jobs/{id}/tasks/{task_id}/attempts", get(jobs::attempts))
        .route("/jobs/{id}/events", get(jobs::events))
        .route("/jobs/{id}/stream", get(jobs::stream))
        .route("/jobs/{id}/cancel", post(jobs::cancel))
        .route("/jobs/{id}/retry", post(jobs::retry))
        .route("/catalog", get(catalog::export))
        .route("/catalog/import", post(catalog::import))
        .route("/catalog/{kind}", get(catalog::list))
        .route(
            "/catalog/{kind}/{name}",
            get(catalog::show).put(catalog::put).delete(catalog::delete),
        )
        .route("/catalog/{kind}/{name}/history", get(catalog::history))
        .route("/resources", get(catalog::resources))
        .route(
            "/resources/{kind}/{name}",
            post(catalog::upload).layer(DefaultBodyLimit::max(
                engine::resources::MAX_RESOURCE_BYTES + 1,
            )),
        )
        .route(
            "/resources/{kind}/{name}/versions/{version}/stage",
            post(catalog::stage),
        )
        .route("/me", get(accounts::me))
        .route("/me/password", post(accounts::change_password))
        .route(
            "/users",
            get(accounts::list_users).post(accounts::create_user),
        )
        .route(
            "/users/{id}",
            get(accounts::show_user)
                .patch(accounts::update_user)
                .delete(accounts::delete_user),
        )
        .route("/users/{id}/tokens", get(accounts::list_user_tokens))
        .route(
            "/users/{id}/tokens/{token_id}",
            axum::routing::delete(accounts::revoke_user_token),
        )
        .route(
            "/tenants",
            get(accounts::list_tenants).post(accounts::create_tenant),
        )
        .route(
            "/tenants/{id}",
            get(accounts::show_tenant).delete(accounts::delete_tenant),
        )
        .route("/tenants/{id}/quotas", put(accounts::update_quotas))
        .route("/tenants/{id}/local-nodes", put(accounts::set_local_nodes))
        .route(
            "/tokens",
            get(accounts::list_tokens).post(accounts::create_token),
        )
        .route(
            "/tokens/{id}",
            axum::routing::delete(accounts::revoke_token),
        )
        .route("/audit", get(accounts::audit))
        .route(
            "/pool-hosts",
            get(pool_hosts::list).post(pool_hosts::register),
        )
        .route(
            "/pool-hosts/{id}",
            get(pool_hosts::show)
                .patch(pool_hosts::update)
                .delete(pool_hosts::remove),
        )
        .fallback(no_such_endpoint)
        .layer(DefaultBodyLimit::max(MAX_JSON_BYTES))
}
