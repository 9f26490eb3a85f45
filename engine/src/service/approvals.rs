//! Groups, template visibility and approvals (issue 44, points 2 and 3).
//!
//! Tenant admins manage their tenant's groups and approval rules. A template limited
//! to groups is invisible to everyone else (lists leave it out, reads and creates
//! answer as for a template that does not exist); admins see every template. A user's
//! groups come from [`Service::groups_of`], the one place a later source (SSO claims)
//! adds to. Creates and grows that a rule holds wait as requests (see
//! [`crate::operations::approval`]); here approvers list them and approve or deny,
//! and every step is audited.

use std::collections::BTreeSet;

use api_types::{
    ApprovalDenial, ApprovalOperation, ApprovalRuleRequest, ApprovalRuleView, ApprovalState,
    ApprovalView, AuditAction, ClusterChangeRequest, ClusterCreateRequest, GroupMemberRequest,
    GroupRequest, GroupView, StepCount,
};
use domain::catalog::Catalog;
use domain::names::GroupName;
use serde::{Deserialize, Serialize};

use super::{AuditRecord, Caller, Service, ServiceError, SubmittedJob};
use crate::operations::approval::{
    self, Approval, Decider, Rule, RuleMatch, DEFAULT_WINDOW_MS, MAX_WINDOW_MS,
};
use crate::store::approvals::{Group, RequestRow, RuleRow};
use crate::store::{now_ms, Store, StoreError};

/// The most requests a list returns.
const MAX_LISTED: u32 = 500;

/// What a held operation's preview showed, kept with its request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct HeldPreview {
    pub template: String,
    pub provider: String,
    pub size: u64,
    pub growth: u64,
    pub tasks: usize,
    pub steps: Vec<StepCount>,
}

fn rule_view(row: RuleRow) -> ApprovalRuleView {
    let description = RuleMatch::parse(row.kind.as_str(), &row.value).map_or_else(
        |_| format!("{} {}", row.kind, row.value),
        |rule| rule.describe(),
    );
    ApprovalRuleView {
        id: row.id,
        tenant_id: row.tenant_id,
        kind: row.kind,
        value: row.value,
        description,
        approvers: row.approver_group,
        window_secs: u64::try_from(row.window_ms / 1000).unwrap_or(0),
        created_at_ms: row.created_at_ms,
    }
}

/// The rule as [`approval::decide`] takes it; a row that no longer reads (it was
/// checked when written) is left out, with a warning.
fn rule_of(row: &RuleRow) -> Option<Rule> {
    let matches = RuleMatch::parse(row.kind.as_str(), &row.value)
        .map_err(|error| tracing::warn!(rule = %row.id, %error, "approval rule unreadable"))
        .ok()?;
    Some(Rule {
        id: row.id.clone(),
        matches,
        approvers: row
            .approver_group
            .as_deref()
            .and_then(|group| GroupName::parse(group).ok()),
        window_ms: row.window_ms,
    })
}

pub(super) fn approval_view(row: RequestRow) -> ApprovalView {
    let preview: Option<HeldPreview> = serde_json::from_str(&row.preview_json).ok();
    let preview = preview.unwrap_or(HeldPreview {
        template: String::new(),
        provider: String::new(),
        size: 0,
        growth: 0,
        tasks: 0,
        steps: Vec::new(),
    });
    ApprovalView {
        id: row.id,
        tenant_id: row.tenant_id,
        cluster_id: row.cluster_id,
        cluster: row.cluster_name,
        operation: row.operation,
        template: preview.template,
        provider: preview.provider,
        size: preview.size,
        growth: preview.growth,
        tasks: preview.tasks,
        steps: preview.steps,
        rule: row.rule,
        approvers: row.approver_group,
        state: row.state,
        requested_by: row.requested_by_name,
        created_at_ms: row.created_at_ms,
        expires_at_ms: row.expires_at_ms,
        decided_by: row.decided_by_name,
        decided_at_ms: row.decided_at_ms,
        reason: row.reason,
        job_id: row.job_id,
    }
}

fn parse_group(raw: &str, path: &str) -> Result<GroupName, ServiceError> {
    GroupName::parse(raw).map_err(|error| super::clusters::field_problem(path, error.to_string()))
}

/// Ends every pending request whose window has passed (the janitor's round): each is
/// marked `expired` and its cluster put back. Returns how many it ended.
pub async fn expire_due(store: &Store, now_ms: i64) -> Result<usize, StoreError> {
    let mut expired = 0;
    for row in store.due_approval_requests(now_ms, 100).await? {
        match approval::settle(
            store,
            &row,
            ApprovalState::Expired,
            None,
            "not decided within the rule's window",
            now_ms,
        )
        .await
        {
            Ok(true) => expired += 1,
            Ok(false) => {}
            Err(error) => tracing::warn!(request = %row.id, %error, "expiring an approval failed"),
        }
    }
    Ok(expired)
}

impl Service {
    /// The names of the groups `caller` is in: the stored memberships (a later
    /// identity source, such as SSO group claims, adds its groups here).
    pub async fn groups_of(&self, caller: &Caller) -> Result<Vec<String>, ServiceError> {
        Ok(self.store.groups_of_user(&caller.principal.user_id).await?)
    }

    /// The templates of `catalog` the caller may not see: those limited to groups the
    /// caller is not in (none for tenant admins).
    pub(super) async fn hidden_templates(
        &self,
        caller: &Caller,
        catalog: &Catalog,
    ) -> Result<BTreeSet<String>, ServiceError> {
        if caller.principal.can_administer_tenant(caller.tenant_id()) {
            return Ok(BTreeSet::new());
        }
        let limited: Vec<_> = catalog
            .clustertemplates
            .values()
            .filter_map(|template| {
                // A child inherits its parent's groups: ask the resolved template.
                let resolved = catalog.resolved_template(&template.name).ok();
                let groups = resolved.map_or_else(|| template.groups.clone(), |t| t.groups);
                (!groups.is_empty()).then(|| (template.name.to_string(), groups))
            })
            .collect();
        if limited.is_empty() {
            return Ok(BTreeSet::new());
        }
        let mine: Vec<GroupName> = self
            .groups_of(caller)
            .await?
            .iter()
            .filter_map(|name| GroupName::parse(name.as_str()).ok())
            .collect();
        Ok(limited
            .into_iter()
            .filter(|(_, groups)| !groups.iter().any(|group| mine.contains(group)))
            .map(|(name, _)| name)
            .collect())
    }

    /// `NotFound` (as for a template that does not exist) when the caller may not see
    /// template `name`.
    pub(super) async fn check_template_visible(
        &self,
        caller: &Caller,
        name: &str,
    ) -> Result<(), ServiceError> {
        if caller.principal.can_administer_tenant(caller.tenant_id()) {
            return Ok(());
        }
        let catalog = crate::catalog::load(&self.store, caller.tenant_id()).await?;
        if self
            .hidden_templates(caller, &catalog)
            .await?
            .contains(name)
        {
            return Err(ServiceError::NotFound(format!("clustertemplates {name:?}")));
        }
        Ok(())
    }

    async fn group_view(&self, group: Group) -> Result<GroupView, ServiceError> {
        let members = self.store.group_members(&group.id).await?;
        Ok(GroupView {
            name: group.name,
            tenant_id: group.tenant_id,
            members,
            created_at_ms: group.created_at_ms,
        })
    }

    async fn administered_group(&self, caller: &Caller, name: &str) -> Result<Group, ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        Ok(self.store.group(caller.tenant_id(), name).await?)
    }

    /// The caller's tenant's groups with their members (tenant admins).
    pub async fn list_groups(&self, caller: &Caller) -> Result<Vec<GroupView>, ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        let mut views = Vec::new();
        for group in self.store.groups(caller.tenant_id()).await? {
            views.push(self.group_view(group).await?);
        }
        Ok(views)
    }

    pub async fn group(&self, caller: &Caller, name: &str) -> Result<GroupView, ServiceError> {
        let group = self.administered_group(caller, name).await?;
        self.group_view(group).await
    }

    pub async fn add_group(
        &self,
        caller: &Caller,
        request: &GroupRequest,
    ) -> Result<GroupView, ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        let name = parse_group(&request.name, "name")?;
        let group = self
            .store
            .insert_group(caller.tenant_id(), name.as_str(), now_ms())
            .await?;
        self.audit(
            caller,
            AuditRecord::new(
                caller.tenant_id(),
                AuditAction::GroupAdd,
                "group",
                name.as_str(),
            ),
        )
        .await;
        self.group_view(group).await
    }

    /// Removes the group; templates and rules naming it stay (a template limited to
    /// it is then open to admins only, a rule's requests to admins to decide).
    pub async fn remove_group(&self, caller: &Caller, name: &str) -> Result<(), ServiceError> {
        let group = self.administered_group(caller, name).await?;
        self.store.delete_group(&group.id).await?;
        self.audit(
            caller,
            AuditRecord::new(
                caller.tenant_id(),
                AuditAction::GroupRemove,
                "group",
                &group.name,
            ),
        )
        .await;
        Ok(())
    }

    /// Puts a user of the tenant into the group (already in it: nothing changes).
    pub async fn add_group_member(
        &self,
        caller: &Caller,
        name: &str,
        request: &GroupMemberRequest,
    ) -> Result<GroupView, ServiceError> {
        let group = self.administered_group(caller, name).await?;
        let user = self.tenant_user(caller, &request.username).await?;
        let added = self
            .store
            .set_group_member(&group.id, &user.id, true)
            .await?;
        if added {
            let mut record = AuditRecord::new(
                caller.tenant_id(),
                AuditAction::GroupMemberAdd,
                "group",
                &group.name,
            );
            record.after = Some(user.username.clone());
            self.audit(caller, record).await;
        }
        self.group_view(group).await
    }

    pub async fn remove_group_member(
        &self,
        caller: &Caller,
        name: &str,
        username: &str,
    ) -> Result<GroupView, ServiceError> {
        let group = self.administered_group(caller, name).await?;
        let user = self.tenant_user(caller, username).await?;
        let removed = self
            .store
            .set_group_member(&group.id, &user.id, false)
            .await?;
        if !removed {
            return Err(ServiceError::NotFound(format!(
                "member {username:?} of group {:?}",
                group.name
            )));
        }
        let mut record = AuditRecord::new(
            caller.tenant_id(),
            AuditAction::GroupMemberRemove,
            "group",
            &group.name,
        );
        record.before = Some(user.username.clone());
        self.audit(caller, record).await;
        self.group_view(group).await
    }

    /// A user of the caller's tenant by name (another tenant's is not found).
    async fn tenant_user(
        &self,
        caller: &Caller,
        username: &str,
    ) -> Result<crate::store::users::User, ServiceError> {
        let what = || format!("user {username:?}");
        match self.store.user_by_username(username).await {
            Ok(user) if user.tenant_id == caller.tenant_id() => Ok(user),
            Ok(_) | Err(StoreError::NotFound(_)) => Err(ServiceError::NotFound(what())),
            Err(error) => Err(error.into()),
        }
    }

    pub async fn list_approval_rules(
        &self,
        caller: &Caller,
    ) -> Result<Vec<ApprovalRuleView>, ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        Ok(self
            .store
            .approval_rules(caller.tenant_id())
            .await?
            .into_iter()
            .map(rule_view)
            .collect())
    }

    /// Adds a rule: its kind and value are read as [`RuleMatch`] (an unknown kind is
    /// refused naming the kinds), the approvers must be a group of the tenant.
    pub async fn add_approval_rule(
        &self,
        caller: &Caller,
        request: &ApprovalRuleRequest,
    ) -> Result<ApprovalRuleView, ServiceError> {
        use super::clusters::field_problem;
        caller.require_tenant_admin(caller.tenant_id())?;
        let matches = RuleMatch::parse(&request.kind, &request.value).map_err(|message| {
            let path = if request.kind.parse::<api_types::ApprovalRuleKind>().is_ok() {
                "value"
            } else {
                "kind"
            };
            field_problem(path, message)
        })?;
        if let Some(group) = &request.approvers {
            let group = parse_group(group, "approvers")?;
            match self.store.group(caller.tenant_id(), group.as_str()).await {
                Ok(_) => {}
                Err(StoreError::NotFound(_)) => {
                    return Err(field_problem(
                        "approvers",
                        format!("no group named {group:?} (corral group add {group})"),
                    ));
                }
                Err(error) => return Err(error.into()),
            }
        }
        let window_ms = match request.window_secs {
            None => DEFAULT_WINDOW_MS,
            Some(secs) => {
                let ms = i64::try_from(secs).unwrap_or(i64::MAX).saturating_mul(1000);
                if secs == 0 || ms > MAX_WINDOW_MS {
                    return Err(field_problem(
                        "window_secs",
                        format!("must be between 1 and {}", MAX_WINDOW_MS / 1000),
                    ));
                }
                ms
            }
        };
        let row = RuleRow {
            id: uuid::Uuid::new_v4().to_string(),
            tenant_id: caller.tenant_id().to_owned(),
            kind: matches.kind(),
            value: matches.value(),
            approver_group: request.approvers.clone(),
            window_ms,
            created_by: Some(caller.principal.user_id.clone()),
            created_at_ms: now_ms(),
        };
        self.store.insert_approval_rule(&row).await?;
        let view = rule_view(row);
        let mut record = AuditRecord::new(
            caller.tenant_id(),
            AuditAction::ApprovalRuleAdd,
            "approval-rule",
            &view.id,
        );
        record.after = Some(view.description.clone());
        self.audit(caller, record).await;
        Ok(view)
    }

    pub async fn remove_approval_rule(
        &self,
        caller: &Caller,
        id: &str,
    ) -> Result<(), ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        let what = || format!("approval rule {id:?}");
        let row = match self.store.approval_rule(id).await {
            Ok(row) if caller.principal.can_see_tenant(&row.tenant_id) => row,
            Ok(_) | Err(StoreError::NotFound(_)) => return Err(ServiceError::NotFound(what())),
            Err(error) => return Err(error.into()),
        };
        caller.require_tenant_admin(&row.tenant_id)?;
        self.store.delete_approval_rule(&row.id).await?;
        let mut record = AuditRecord::new(
            &row.tenant_id,
            AuditAction::ApprovalRuleRemove,
            "approval-rule",
            &row.id,
        );
        record.before = Some(rule_view(row.clone()).description);
        self.audit(caller, record).await;
        Ok(())
    }

    /// The rule (if any) that holds an operation, given its plan.
    pub(super) async fn holding_rule(
        &self,
        caller: &Caller,
        tenant_id: &str,
        ask: approval::Ask<'_>,
    ) -> Result<Option<Rule>, ServiceError> {
        let rows = self.store.approval_rules(tenant_id).await?;
        if rows.is_empty() {
            return Ok(None);
        }
        let rules: Vec<Rule> = rows.iter().filter_map(rule_of).collect();
        let ask = approval::Ask {
            by_admin: caller.principal.can_administer_tenant(tenant_id),
            ..ask
        };
        Ok(match approval::decide(&rules, &ask) {
            approval::Decision::Proceed => None,
            approval::Decision::Wait(rule) => Some(rule.clone()),
        })
    }

    /// Whether the tenant has any rule (without one, nothing is previewed twice).
    pub(super) async fn has_approval_rules(&self, tenant_id: &str) -> Result<bool, ServiceError> {
        Ok(!self.store.approval_rules(tenant_id).await?.is_empty())
    }

    /// Requests the caller may see: admins (and a rule's approver group) every one of
    /// the tenant, others their own; pending first, then newest.
    pub async fn list_approvals(
        &self,
        caller: &Caller,
        pending_only: bool,
    ) -> Result<Vec<ApprovalView>, ServiceError> {
        let admin = caller.principal.can_administer_tenant(caller.tenant_id());
        let groups = self.groups_of(caller).await?;
        Ok(self
            .store
            .approval_requests(caller.tenant_id(), pending_only, MAX_LISTED)
            .await?
            .into_iter()
            .filter(|row| {
                admin
                    || row.requested_by == caller.principal.user_id
                    || row
                        .approver_group
                        .as_ref()
                        .is_some_and(|group| groups.contains(group))
            })
            .map(approval_view)
            .collect())
    }

    /// A request of the caller's tenant (another tenant's is not found).
    async fn visible_request(&self, caller: &Caller, id: &str) -> Result<RequestRow, ServiceError> {
        let what = || format!("approval request {id:?}");
        match self.store.approval_request(id).await {
            Ok(row) if caller.principal.can_see_tenant(&row.tenant_id) => Ok(row),
            Ok(_) | Err(StoreError::NotFound(_)) => Err(ServiceError::NotFound(what())),
            Err(error) => Err(error.into()),
        }
    }

    pub async fn approval(&self, caller: &Caller, id: &str) -> Result<ApprovalView, ServiceError> {
        Ok(approval_view(self.visible_request(caller, id).await?))
    }

    /// The request, still pending and not past its window (one past it is expired
    /// now), if the caller may decide it.
    async fn decidable_request(
        &self,
        caller: &Caller,
        id: &str,
    ) -> Result<RequestRow, ServiceError> {
        let row = self.visible_request(caller, id).await?;
        let now = now_ms();
        if row.state == ApprovalState::Pending && row.expires_at_ms <= now {
            expire_due(&self.store, now).await?;
            return Err(ServiceError::Conflict(format!(
                "approval request {id} expired: it was not decided within its rule's window"
            )));
        }
        if row.state != ApprovalState::Pending {
            return Err(ServiceError::Conflict(format!(
                "approval request {id} is already {}",
                row.state
            )));
        }
        let groups = self.groups_of(caller).await?;
        let decider = Decider {
            user_id: &caller.principal.user_id,
            is_admin: caller.principal.can_administer_tenant(&row.tenant_id),
            groups: &groups,
        };
        approval::may_decide(&decider, &row.requested_by, row.approver_group.as_deref())
            .map_err(|refusal| ServiceError::Forbidden(refusal.to_string()))?;
        Ok(row)
    }

    /// Approves the request: its operation is planned again and its job submitted, in
    /// the transaction that marks it approved.
    pub async fn approve(&self, caller: &Caller, id: &str) -> Result<SubmittedJob, ServiceError> {
        let row = self.decidable_request(caller, id).await?;
        let decision = Approval {
            request_id: &row.id,
            decided_by: &caller.principal.user_id,
        };
        let invalid = |error: serde_json::Error| {
            ServiceError::internal(format!("request {} is unreadable: {error}", row.id))
        };
        let job_id = match row.operation {
            ApprovalOperation::Create => {
                let request: ClusterCreateRequest =
                    serde_json::from_str(&row.request_json).map_err(invalid)?;
                let operation = super::clusters::create_operation(
                    &request,
                    &row.tenant_id,
                    Some(row.requested_by.clone()),
                )?;
                crate::operations::create_held(
                    &self.queue,
                    &operation,
                    &row.cluster_id,
                    &decision,
                    now_ms(),
                )
                .await?
            }
            ApprovalOperation::Grow => {
                let request: ClusterChangeRequest =
                    serde_json::from_str(&row.request_json).map_err(invalid)?;
                let change = crate::operations::ClusterChange::try_from(&request)?;
                crate::operations::submit_held_change(
                    &self.queue,
                    &row.cluster_id,
                    &change,
                    Some(&row.requested_by),
                    &decision,
                    now_ms(),
                )
                .await?
            }
        };
        self.wake_workers();
        let mut record = AuditRecord::new(
            &row.tenant_id,
            AuditAction::ApprovalApprove,
            "cluster",
            &row.cluster_name,
        );
        record.after = Some(format!(
            "request {} ({}): job {job_id}",
            row.id, row.operation
        ));
        self.audit(caller, record).await;
        let cluster = self.store.cluster(&row.cluster_id).await?;
        Ok(SubmittedJob {
            cluster: super::ClusterView::try_from(cluster)?,
            job_id: job_id.into_string(),
            approval: Some(approval_view(self.store.approval_request(&row.id).await?)),
        })
    }

    /// Denies the request with a reason the requester sees; nothing is made and the
    /// cluster goes back to where it was (a held create's ends `deleted`).
    pub async fn deny(
        &self,
        caller: &Caller,
        id: &str,
        denial: &ApprovalDenial,
    ) -> Result<ApprovalView, ServiceError> {
        let reason = denial.reason.trim();
        if reason.is_empty() {
            return Err(super::clusters::field_problem(
                "reason",
                "say why the request is denied (the requester sees it)",
            ));
        }
        let row = self.decidable_request(caller, id).await?;
        let settled = approval::settle(
            &self.store,
            &row,
            ApprovalState::Denied,
            Some(&caller.principal.user_id),
            reason,
            now_ms(),
        )
        .await?;
        if !settled {
            return Err(ServiceError::Conflict(format!(
                "approval request {id} was decided meanwhile"
            )));
        }
        let mut record = AuditRecord::new(
            &row.tenant_id,
            AuditAction::ApprovalDeny,
            "cluster",
            &row.cluster_name,
        );
        record.after = Some(format!("request {} ({}): {reason}", row.id, row.operation));
        self.audit(caller, record).await;
        Ok(approval_view(self.store.approval_request(&row.id).await?))
    }

    /// Holds an operation the rule matched: stores the request and audits it.
    pub(super) async fn audit_held(&self, caller: &Caller, view: &ApprovalView) {
        let mut record = AuditRecord::new(
            &view.tenant_id,
            AuditAction::ApprovalRequest,
            "cluster",
            &view.cluster,
        );
        record.after = Some(format!(
            "request {} ({} to {} node(s)): needs approval, {}",
            view.id, view.operation, view.size, view.rule
        ));
        self.audit(caller, record).await;
    }
}
