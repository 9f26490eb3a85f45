//! The approvals page's data and actions: the tenant's requests (pending first), its
//! rules and groups; approve, deny with a reason, add and remove a rule.

use api_types::{ApprovalRuleView, ApprovalView, GroupView};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::UiError;

/// What `/admin/approvals` shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalsPageData {
    pub requests: Vec<ApprovalView>,
    pub rules: Vec<ApprovalRuleView>,
    pub groups: Vec<GroupView>,
}

#[server(prefix = "/sfn", endpoint = "admin-approvals")]
pub async fn approvals_page() -> Result<ApprovalsPageData, UiError> {
    let caller = super::caller::caller().await?;
    super::caller::require_admin(&caller)?;
    let service = crate::session::service()?;
    Ok(ApprovalsPageData {
        requests: service.list_approvals(&caller, false).await?,
        rules: service.list_approval_rules(&caller).await?,
        groups: service.list_groups(&caller).await?,
    })
}

/// Approve a request: its job is submitted.
#[server(prefix = "/sfn", endpoint = "admin-approve")]
pub async fn approve_request(csrf: String, id: String) -> Result<(), UiError> {
    let caller = super::caller::admin_checked(&csrf).await?;
    crate::session::service()?.approve(&caller, &id).await?;
    leptos_axum::redirect("/admin/approvals?approved=1");
    Ok(())
}

/// Deny a request with a reason the requester sees.
#[server(prefix = "/sfn", endpoint = "admin-deny")]
pub async fn deny_request(csrf: String, id: String, reason: String) -> Result<(), UiError> {
    let caller = super::caller::admin_checked(&csrf).await?;
    crate::session::service()?
        .deny(&caller, &id, &api_types::ApprovalDenial { reason })
        .await?;
    leptos_axum::redirect("/admin/approvals?denied=1");
    Ok(())
}

/// Add a rule (`kind` size-above, template or provider; `approvers` a group or blank).
#[server(prefix = "/sfn", endpoint = "admin-add-approval-rule")]
pub async fn add_approval_rule(
    csrf: String,
    kind: String,
    value: String,
    approvers: String,
    window_hours: String,
) -> Result<(), UiError> {
    let caller = super::caller::admin_checked(&csrf).await?;
    let window_secs = match window_hours.trim() {
        "" => None,
        hours => Some(
            hours.parse::<u64>().map_err(|_| UiError::Invalid {
                message: format!("window: {hours:?} is not a whole number of hours"),
                problems: vec![crate::error::FieldProblem {
                    field: "window_secs".to_owned(),
                    message: "a whole number of hours".to_owned(),
                }],
            })? * 3600,
        ),
    };
    let approvers = Some(approvers.trim().to_owned()).filter(|group| !group.is_empty());
    crate::session::service()?
        .add_approval_rule(
            &caller,
            &api_types::ApprovalRuleRequest {
                kind,
                value: value.trim().to_owned(),
                approvers,
                window_secs,
            },
        )
        .await?;
    leptos_axum::redirect("/admin/approvals?rule=added");
    Ok(())
}

#[server(prefix = "/sfn", endpoint = "admin-remove-approval-rule")]
pub async fn remove_approval_rule(csrf: String, id: String) -> Result<(), UiError> {
    let caller = super::caller::admin_checked(&csrf).await?;
    crate::session::service()?
        .remove_approval_rule(&caller, &id)
        .await?;
    leptos_axum::redirect("/admin/approvals?rule=removed");
    Ok(())
}
