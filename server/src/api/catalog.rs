//! `/api/v1/catalog` and `/api/v1/resources`: the tenant's catalog entity by entity,
//! whole-bundle import and export, and plugin resources.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use engine::service::{
    EntityView, ImportReport, Page, PageRequest, ResourceView, RevisionView, ServiceError,
};
use serde_json::Value;

use super::clusters::DryRun;
use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, ApiPath, ApiQuery, Authenticated};
use crate::http::AppState;

/// The tenant's catalog as a Coopr bundle.
#[utoipa::path(get, path = "/catalog", tag = "catalog",
    responses((status = 200, description = "Coopr bundle", body = Object),
              (status = 401, body = ErrorBody)))]
pub async fn export(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Result<Json<Value>, ApiError> {
    Ok(Json(state.service.export_catalog(&caller).await?))
}

/// Replace the catalog with a Coopr bundle (or only check it, with `dry_run=true`).
/// With errors nothing is saved and every problem is listed.
#[utoipa::path(post, path = "/catalog/import", tag = "catalog", params(DryRun),
    request_body(content = Object, description = "Coopr bundle"),
    responses((status = 200, description = "Imported, or checked (dry run)", body = ImportReport),
              (status = 403, body = ErrorBody),
              (status = 422, description = "The bundle has errors", body = ErrorBody)))]
pub async fn import(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiQuery(dry): ApiQuery<DryRun>,
    ApiJson(bundle): ApiJson<Value>,
) -> Result<Json<ImportReport>, ApiError> {
    let report = state
        .service
        .import_catalog(&caller, bundle, dry.dry_run)
        .await?;
    if !report.errors.is_empty() {
        return Err(ServiceError::Invalid {
            message: format!(
                "the bundle has {} error(s); nothing was saved",
                report.errors.len()
            ),
            details: report.errors,
        }
        .into());
    }
    Ok(Json(report))
}

/// Current entities of one kind.
#[utoipa::path(get, path = "/catalog/{kind}", operation_id = "list_entities", tag = "catalog",
    params(("kind" = String, Path, description = "providers, hardwaretypes, imagetypes, services, clustertemplates or partialtemplates"), PageRequest),
    responses((status = 200, body = Page<EntityView>), (status = 404, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(kind): ApiPath<String>,
    ApiQuery(page): ApiQuery<PageRequest>,
) -> Result<Json<Page<EntityView>>, ApiError> {
    Ok(Json(
        state.service.list_entities(&caller, &kind, page).await?,
    ))
}

#[utoipa::path(get, path = "/catalog/{kind}/{name}", operation_id = "show_entity", tag = "catalog",
    params(("kind" = String, Path, description = "Entity kind"),
           ("name" = String, Path, description = "Entity name")),
    responses((status = 200, body = EntityView), (status = 404, body = ErrorBody)))]
pub async fn show(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath((kind, name)): ApiPath<(String, String)>,
) -> Result<Json<EntityView>, ApiError> {
    Ok(Json(state.service.entity(&caller, &kind, &name).await?))
}

/// Every revision of an entity, oldest first.
#[utoipa::path(get, path = "/catalog/{kind}/{name}/history", tag = "catalog",
    params(("kind" = String, Path, description = "Entity kind"),
           ("name" = String, Path, description = "Entity name")),
    responses((status = 200, body = Vec<RevisionView>), (status = 404, body = ErrorBody)))]
pub async fn history(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath((kind, name)): ApiPath<(String, String)>,
) -> Result<Json<Vec<RevisionView>>, ApiError> {
    Ok(Json(
        state.service.entity_history(&caller, &kind, &name).await?,
    ))
}

/// Create or replace an entity (Coopr JSON); checked against the whole catalog.
#[utoipa::path(put, path = "/catalog/{kind}/{name}", operation_id = "put_entity", tag = "catalog",
    params(("kind" = String, Path, description = "Entity kind"),
           ("name" = String, Path, description = "Entity name")),
    request_body(content = Object, description = "The entity in Coopr JSON"),
    responses((status = 200, body = EntityView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn put(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath((kind, name)): ApiPath<(String, String)>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<EntityView>, ApiError> {
    Ok(Json(
        state
            .service
            .put_entity(&caller, &kind, &name, body)
            .await?,
    ))
}

/// Delete an entity; refused (listing the uses) while something uses it.
#[utoipa::path(delete, path = "/catalog/{kind}/{name}", operation_id = "delete_entity", tag = "catalog",
    params(("kind" = String, Path, description = "Entity kind"),
           ("name" = String, Path, description = "Entity name")),
    responses((status = 204, description = "Deleted"), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn delete(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath((kind, name)): ApiPath<(String, String)>,
) -> Result<StatusCode, ApiError> {
    state.service.delete_entity(&caller, &kind, &name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Every version of every plugin resource of the tenant.
#[utoipa::path(get, path = "/resources", tag = "resources", params(PageRequest),
    responses((status = 200, body = Page<ResourceView>), (status = 401, body = ErrorBody)))]
pub async fn resources(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiQuery(page): ApiQuery<PageRequest>,
) -> Result<Json<Page<ResourceView>>, ApiError> {
    Ok(Json(state.service.list_resources(&caller, page).await?))
}

/// Upload the next version of a resource (the raw bytes are the body).
#[utoipa::path(post, path = "/resources/{kind}/{name}", tag = "resources",
    params(("kind" = String, Path, description = "scripts, archives or files"),
           ("name" = String, Path, description = "Resource name")),
    request_body(content = Vec<u8>, content_type = "application/octet-stream"),
    responses((status = 201, body = ResourceView), (status = 403, body = ErrorBody),
              (status = 413, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn upload(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath((kind, name)): ApiPath<(String, String)>,
    body: Bytes,
) -> Result<(StatusCode, Json<ResourceView>), ApiError> {
    let view = state
        .service
        .upload_resource(&caller, &kind, &name, &body)
        .await?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// Make a version the one nodes get.
#[utoipa::path(post, path = "/resources/{kind}/{name}/versions/{version}/stage", tag = "resources",
    params(("kind" = String, Path, description = "scripts, archives or files"),
           ("name" = String, Path, description = "Resource name"),
           ("version" = i64, Path, description = "Version to stage")),
    responses((status = 200, body = ResourceView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn stage(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath((kind, name, version)): ApiPath<(String, String, i64)>,
) -> Result<Json<ResourceView>, ApiError> {
    Ok(Json(
        state
            .service
            .stage_resource(&caller, &kind, &name, version)
            .await?,
    ))
}
