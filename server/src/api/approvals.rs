//! `/api/v1/groups`, `/api/v1/approval-rules`, `/api/v1/approvals`: a tenant's user
//! groups (templates may be limited to them), its approval rules, and the creates and
//! grows that wait for a decision (issue 44).

use api_types::{
    ApprovalDenial, ApprovalRuleRequest, ApprovalRuleView, ApprovalView, GroupMemberRequest,
    GroupRequest, GroupView, SubmittedJob,
};
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;

use super::error::{ApiError, ErrorBody};
use super::extract::{ApiJson, ApiPath, ApiQuery, Authenticated};
use crate::http::AppState;

/// Your tenant's groups with their members (tenant admins).
#[utoipa::path(get, path = "/groups", operation_id = "list_groups", tag = "approvals",
    responses((status = 200, body = Vec<GroupView>), (status = 403, body = ErrorBody)))]
pub async fn list_groups(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Result<Json<Vec<GroupView>>, ApiError> {
    Ok(Json(state.service.list_groups(&caller).await?))
}

/// Add a group to your tenant (tenant admins).
#[utoipa::path(post, path = "/groups", operation_id = "add_group", tag = "approvals",
    request_body = GroupRequest,
    responses((status = 201, body = GroupView), (status = 403, body = ErrorBody),
              (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn add_group(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiJson(request): ApiJson<GroupRequest>,
) -> Result<(StatusCode, Json<GroupView>), ApiError> {
    let group = state.service.add_group(&caller, &request).await?;
    Ok((StatusCode::CREATED, Json(group)))
}

#[utoipa::path(get, path = "/groups/{name}", operation_id = "show_group", tag = "approvals",
    params(("name" = String, Path, description = "Group name")),
    responses((status = 200, body = GroupView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn show_group(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(name): ApiPath<String>,
) -> Result<Json<GroupView>, ApiError> {
    Ok(Json(state.service.group(&caller, &name).await?))
}

/// Remove a group and its memberships.
#[utoipa::path(delete, path = "/groups/{name}", operation_id = "remove_group", tag = "approvals",
    params(("name" = String, Path, description = "Group name")),
    responses((status = 204, description = "Removed"), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn remove_group(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(name): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    state.service.remove_group(&caller, &name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Put a user of your tenant into the group.
#[utoipa::path(post, path = "/groups/{name}/members", operation_id = "add_group_member",
    tag = "approvals", request_body = GroupMemberRequest,
    params(("name" = String, Path, description = "Group name")),
    responses((status = 200, body = GroupView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn add_member(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(name): ApiPath<String>,
    ApiJson(request): ApiJson<GroupMemberRequest>,
) -> Result<Json<GroupView>, ApiError> {
    Ok(Json(
        state
            .service
            .add_group_member(&caller, &name, &request)
            .await?,
    ))
}

/// Take a user out of the group.
#[utoipa::path(delete, path = "/groups/{name}/members/{username}",
    operation_id = "remove_group_member", tag = "approvals",
    params(("name" = String, Path, description = "Group name"),
           ("username" = String, Path, description = "Member")),
    responses((status = 200, body = GroupView), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn remove_member(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath((name, username)): ApiPath<(String, String)>,
) -> Result<Json<GroupView>, ApiError> {
    Ok(Json(
        state
            .service
            .remove_group_member(&caller, &name, &username)
            .await?,
    ))
}

/// Your tenant's approval rules, oldest first (the first that matches holds a request).
#[utoipa::path(get, path = "/approval-rules", operation_id = "list_approval_rules",
    tag = "approvals",
    responses((status = 200, body = Vec<ApprovalRuleView>), (status = 403, body = ErrorBody)))]
pub async fn list_rules(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
) -> Result<Json<Vec<ApprovalRuleView>>, ApiError> {
    Ok(Json(state.service.list_approval_rules(&caller).await?))
}

/// Add a rule: `kind` is `template`, `size-above` or `provider` (422 names the kinds
/// otherwise), `value` what it matches.
#[utoipa::path(post, path = "/approval-rules", operation_id = "add_approval_rule",
    tag = "approvals", request_body = ApprovalRuleRequest,
    responses((status = 201, body = ApprovalRuleView), (status = 403, body = ErrorBody),
              (status = 422, body = ErrorBody)))]
pub async fn add_rule(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiJson(request): ApiJson<ApprovalRuleRequest>,
) -> Result<(StatusCode, Json<ApprovalRuleView>), ApiError> {
    let rule = state.service.add_approval_rule(&caller, &request).await?;
    Ok((StatusCode::CREATED, Json(rule)))
}

/// Remove a rule (requests it held keep waiting).
#[utoipa::path(delete, path = "/approval-rules/{id}", operation_id = "remove_approval_rule",
    tag = "approvals", params(("id" = String, Path, description = "Rule id")),
    responses((status = 204, description = "Removed"), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody)))]
pub async fn remove_rule(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    state.service.remove_approval_rule(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Which requests to list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ApprovalFilter {
    /// Only those still waiting.
    #[serde(default)]
    pub pending: bool,
}

/// Requests for approval, pending first: a tenant admin (or a member of a rule's
/// approver group) sees the tenant's, others their own.
#[utoipa::path(get, path = "/approvals", operation_id = "list_approvals", tag = "approvals",
    params(ApprovalFilter),
    responses((status = 200, body = Vec<ApprovalView>)))]
pub async fn list(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiQuery(filter): ApiQuery<ApprovalFilter>,
) -> Result<Json<Vec<ApprovalView>>, ApiError> {
    Ok(Json(
        state
            .service
            .list_approvals(&caller, filter.pending)
            .await?,
    ))
}

#[utoipa::path(get, path = "/approvals/{id}", operation_id = "show_approval", tag = "approvals",
    params(("id" = String, Path, description = "Request id")),
    responses((status = 200, body = ApprovalView), (status = 404, body = ErrorBody)))]
pub async fn show(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<ApprovalView>, ApiError> {
    Ok(Json(state.service.approval(&caller, &id).await?))
}

/// Approve: the operation is planned again and its job submitted. 403 for your own
/// request or when you are no approver, 409 when it is decided or expired.
#[utoipa::path(post, path = "/approvals/{id}/approve", operation_id = "approve", tag = "approvals",
    params(("id" = String, Path, description = "Request id")),
    responses((status = 202, body = SubmittedJob), (status = 403, body = ErrorBody),
              (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn approve(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<(StatusCode, Json<SubmittedJob>), ApiError> {
    let submitted = state.service.approve(&caller, &id).await?;
    Ok((StatusCode::ACCEPTED, Json(submitted)))
}

/// Deny with a reason the requester sees (400 without one); nothing is made.
#[utoipa::path(post, path = "/approvals/{id}/deny", operation_id = "deny", tag = "approvals",
    params(("id" = String, Path, description = "Request id")), request_body = ApprovalDenial,
    responses((status = 200, body = ApprovalView), (status = 400, body = ErrorBody),
              (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
              (status = 409, body = ErrorBody)))]
pub async fn deny(
    State(state): State<AppState>,
    Authenticated(caller): Authenticated,
    ApiPath(id): ApiPath<String>,
    ApiJson(denial): ApiJson<ApprovalDenial>,
) -> Result<Json<ApprovalView>, ApiError> {
    // A denial is only as useful as its reason: a missing or blank one is a malformed
    // request, refused before anything is looked up.
    if denial.reason.trim().is_empty() {
        return Err(ApiError::bad_request(
            "a denial needs a reason: send {\"reason\": \"...\"} (the requester sees it)",
        ));
    }
    Ok(Json(state.service.deny(&caller, &id, &denial).await?))
}
