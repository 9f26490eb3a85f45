//! Groups and approvals (issue 44, points 2 and 3): the groups of a tenant's users
//! (templates may be limited to them), the approval rules tenant admins write, and the
//! requests that wait for a decision, as the API, the portal and the CLI see them.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::states::{word_enum, Word};

/// What `POST /api/v1/groups` takes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct GroupRequest {
    /// A name like a catalog entity's (`data-team`), unique in the tenant.
    pub name: String,
}

/// What `POST /api/v1/groups/{name}/members` takes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct GroupMemberRequest {
    /// A user of the group's tenant.
    pub username: String,
}

/// A group with its members' usernames (sorted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GroupView {
    pub name: String,
    pub tenant_id: String,
    pub members: Vec<String>,
    pub created_at_ms: i64,
}

word_enum!(
    /// What an approval rule matches a create or grow on.
    ApprovalRuleKind, "approval rule kind" {
        /// A create of (or a grow of a cluster of) the named template.
        Template => "template",
        /// A cluster that would have more than N nodes.
        SizeAbove => "size-above",
        /// A cluster on the named provider.
        Provider => "provider",
        /// A cluster whose estimated cost per month after the operation is above the
        /// value (docs/cost.md).
        CostAbove => "cost-above",
    }
);

/// What `POST /api/v1/approval-rules` takes. `kind` is a word of
/// [`ApprovalRuleKind`] (anything else is refused naming the kinds); `value` is the
/// template or provider name, or the node count.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ApprovalRuleRequest {
    pub kind: String,
    pub value: String,
    /// A group of the tenant whose members may decide too (tenant admins always may).
    #[serde(default)]
    pub approvers: Option<String>,
    /// How long a request waits before it expires, 1 s to 30 days (default 24 h).
    #[serde(default)]
    pub window_secs: Option<u64>,
}

/// A stored rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApprovalRuleView {
    pub id: String,
    pub tenant_id: String,
    pub kind: ApprovalRuleKind,
    pub value: String,
    /// What it matches, in words (`size above 3`).
    pub description: String,
    pub approvers: Option<String>,
    pub window_secs: u64,
    pub created_at_ms: i64,
}

word_enum!(
    /// What a request that waits would do.
    ApprovalOperation, "approval operation" {
        /// Create the cluster.
        Create => "create",
        /// Add nodes to the cluster.
        Grow => "grow",
    }
);

word_enum!(
    /// Where an approval request is.
    ApprovalState, "approval state" {
        /// Waiting for a decision; the cluster is `awaiting-approval`.
        Pending => "pending",
        /// Approved: its job was submitted (`job_id`).
        Approved => "approved",
        /// Denied with a reason; nothing was made.
        Denied => "denied",
        /// Not decided within the rule's window; nothing was made.
        Expired => "expired",
    }
);

/// A request for approval, with the plan it was asked with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApprovalView {
    pub id: String,
    pub tenant_id: String,
    pub cluster_id: String,
    pub cluster: String,
    pub operation: ApprovalOperation,
    pub template: String,
    pub provider: String,
    /// The cluster's size if approved.
    pub size: u64,
    /// The nodes it would add.
    pub growth: u64,
    /// Tasks the plan would run, and how many of each step (the plan's preview when
    /// it was asked; an approval plans again against the catalog of then).
    pub tasks: usize,
    pub steps: Vec<crate::StepCount>,
    /// The rule that matched, in words.
    pub rule: String,
    pub approvers: Option<String>,
    pub state: ApprovalState,
    pub requested_by: Option<String>,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
    pub decided_by: Option<String>,
    pub decided_at_ms: Option<i64>,
    /// Why it was denied (or that it expired).
    pub reason: Option<String>,
    /// The job an approval submitted.
    pub job_id: Option<String>,
}

/// What denying takes: a reason the requester sees (required, not blank).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ApprovalDenial {
    /// Missing reads as blank, which the API refuses with 400 naming the field.
    #[serde(default)]
    pub reason: String,
}
