//! Groups of a tenant's users, approval rules, and approval requests (issue 44).
//!
//! A request leaves `pending` with one conditional `UPDATE` ([`decide_in`]) inside the
//! transaction that acts on the decision (submits the job, or puts the cluster back),
//! so two deciders, or a decider and the janitor, never both win and a decision never
//! stands without its effect.

use api_types::{ApprovalOperation, ApprovalRuleKind, ApprovalState, ClusterState};
use sqlx::{Any, Transaction};

use super::{conflict_on_unique, Store, StoreError};
use crate::found::OrNotFound;

/// A group of users of one tenant.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Group {
    pub id: String,
    pub tenant_id: String,
    pub name: String,
    pub created_at_ms: i64,
}

/// A stored approval rule (its kind and value are checked when it is written).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RuleRow {
    pub id: String,
    pub tenant_id: String,
    pub kind: ApprovalRuleKind,
    pub value: String,
    pub approver_group: Option<String>,
    pub window_ms: i64,
    pub created_by: Option<String>,
    pub created_at_ms: i64,
}

/// A request as stored, with the names the views show (cluster, requester, decider).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RequestRow {
    pub id: String,
    pub tenant_id: String,
    pub cluster_id: String,
    pub cluster_name: String,
    pub operation: ApprovalOperation,
    pub request_json: String,
    pub preview_json: String,
    pub rule_id: String,
    pub rule: String,
    pub approver_group: Option<String>,
    pub resume_state: ClusterState,
    pub state: ApprovalState,
    pub requested_by: String,
    pub requested_by_name: Option<String>,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
    pub decided_by: Option<String>,
    pub decided_by_name: Option<String>,
    pub decided_at_ms: Option<i64>,
    pub reason: Option<String>,
    pub job_id: Option<String>,
}

/// What holding an operation stores.
#[derive(Debug, Clone)]
pub struct NewRequest {
    pub tenant_id: String,
    pub cluster_id: String,
    pub operation: ApprovalOperation,
    pub request_json: String,
    pub preview_json: String,
    pub rule_id: String,
    pub rule: String,
    pub approver_group: Option<String>,
    /// The cluster's state to go back to when the request is denied or expires.
    pub resume_state: ClusterState,
    pub requested_by: String,
    pub expires_at_ms: i64,
}

/// How a pending request ends.
#[derive(Debug, Clone)]
pub struct Decision<'a> {
    pub state: ApprovalState,
    pub decided_by: Option<&'a str>,
    pub reason: Option<&'a str>,
    pub job_id: Option<&'a str>,
}

const REQUEST_SELECT: &str = "SELECT r.id, r.tenant_id, r.cluster_id, c.name AS cluster_name, \
     r.operation, r.request_json, r.preview_json, r.rule_id, r.rule, r.approver_group, \
     r.resume_state, r.state, r.requested_by, u.username AS requested_by_name, \
     r.created_at_ms, r.expires_at_ms, r.decided_by, d.username AS decided_by_name, \
     r.decided_at_ms, r.reason, r.job_id \
     FROM approval_requests r JOIN clusters c ON c.id = r.cluster_id \
     LEFT JOIN users u ON u.id = r.requested_by LEFT JOIN users d ON d.id = r.decided_by";

const RULE_COLUMNS: &str =
    "id, tenant_id, kind, value, approver_group, window_ms, created_by, created_at_ms";

impl Store {
    pub async fn insert_group(
        &self,
        tenant_id: &str,
        name: &str,
        now_ms: i64,
    ) -> Result<Group, StoreError> {
        let group = Group {
            id: uuid::Uuid::new_v4().to_string(),
            tenant_id: tenant_id.to_owned(),
            name: name.to_owned(),
            created_at_ms: now_ms,
        };
        let _turn = self.write_turn().await;
        let result = sqlx::query(
            "INSERT INTO user_groups (id, tenant_id, name, created_at_ms) VALUES ($1, $2, $3, $4)",
        )
        .bind(&group.id)
        .bind(&group.tenant_id)
        .bind(&group.name)
        .bind(group.created_at_ms)
        .execute(&self.pool)
        .await;
        conflict_on_unique(result, || format!("group {name:?}"))?;
        Ok(group)
    }

    /// The tenant's groups by name.
    pub async fn groups(&self, tenant_id: &str) -> Result<Vec<Group>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT id, tenant_id, name, created_at_ms FROM user_groups \
             WHERE tenant_id = $1 ORDER BY name",
        )
        .bind(tenant_id)
        .fetch_all(&self.pool)
        .await?)
    }

    pub async fn group(&self, tenant_id: &str, name: &str) -> Result<Group, StoreError> {
        sqlx::query_as(
            "SELECT id, tenant_id, name, created_at_ms FROM user_groups \
             WHERE tenant_id = $1 AND name = $2",
        )
        .bind(tenant_id)
        .bind(name)
        .fetch_optional(&self.pool)
        .await?
        .or_not_found(|| format!("group {name:?}"))
    }

    /// Removes the group and its memberships.
    pub async fn delete_group(&self, group_id: &str) -> Result<(), StoreError> {
        let _turn = self.write_turn().await;
        let mut tx = self.pool.begin().await?;
        sqlx::query("DELETE FROM user_group_members WHERE group_id = $1")
            .bind(group_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM user_groups WHERE id = $1")
            .bind(group_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Puts the user into the group (`member`) or takes them out of it; false when
    /// they were in it already, or not in it.
    pub async fn set_group_member(
        &self,
        group_id: &str,
        user_id: &str,
        member: bool,
    ) -> Result<bool, StoreError> {
        let sql = if member {
            "INSERT INTO user_group_members (group_id, user_id) VALUES ($1, $2)"
        } else {
            "DELETE FROM user_group_members WHERE group_id = $1 AND user_id = $2"
        };
        let _turn = self.write_turn().await;
        let result = sqlx::query(sql)
            .bind(group_id)
            .bind(user_id)
            .execute(&self.pool)
            .await;
        // Adding a member twice is a unique conflict, not an error.
        match conflict_on_unique(result, String::new) {
            Ok(done) => Ok(done.rows_affected() > 0),
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(other) => Err(other),
        }
    }

    /// The usernames in the group, sorted.
    pub async fn group_members(&self, group_id: &str) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT u.username FROM user_group_members m JOIN users u ON u.id = m.user_id \
             WHERE m.group_id = $1 ORDER BY u.username",
        )
        .bind(group_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// The names of the groups the user is in (stored memberships only).
    pub async fn groups_of_user(&self, user_id: &str) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT g.name FROM user_group_members m JOIN user_groups g ON g.id = m.group_id \
             WHERE m.user_id = $1 ORDER BY g.name",
        )
        .bind(user_id)
        .fetch_all(&self.pool)
        .await?)
    }

    pub async fn insert_approval_rule(&self, rule: &RuleRow) -> Result<(), StoreError> {
        let _turn = self.write_turn().await;
        sqlx::query(&format!(
            "INSERT INTO approval_rules ({RULE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
        ))
        .bind(&rule.id)
        .bind(&rule.tenant_id)
        .bind(rule.kind.as_str())
        .bind(&rule.value)
        .bind(&rule.approver_group)
        .bind(rule.window_ms)
        .bind(&rule.created_by)
        .bind(rule.created_at_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The tenant's rules, oldest first (the first that matches is the one a request
    /// names).
    pub async fn approval_rules(&self, tenant_id: &str) -> Result<Vec<RuleRow>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {RULE_COLUMNS} FROM approval_rules WHERE tenant_id = $1 \
             ORDER BY created_at_ms, id"
        ))
        .bind(tenant_id)
        .fetch_all(&self.pool)
        .await?)
    }

    pub async fn approval_rule(&self, id: &str) -> Result<RuleRow, StoreError> {
        sqlx::query_as(&format!(
            "SELECT {RULE_COLUMNS} FROM approval_rules WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .or_not_found(|| format!("approval rule {id:?}"))
    }

    /// Removes a rule; requests it already held keep waiting.
    pub async fn delete_approval_rule(&self, id: &str) -> Result<(), StoreError> {
        let _turn = self.write_turn().await;
        sqlx::query("DELETE FROM approval_rules WHERE id = $1")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn approval_request(&self, id: &str) -> Result<RequestRow, StoreError> {
        sqlx::query_as(&format!("{REQUEST_SELECT} WHERE r.id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .or_not_found(|| format!("approval request {id:?}"))
    }

    /// The tenant's requests, pending ones first, then newest first; at most `limit`.
    pub async fn approval_requests(
        &self,
        tenant_id: &str,
        pending_only: bool,
        limit: u32,
    ) -> Result<Vec<RequestRow>, StoreError> {
        let filter = if pending_only {
            " AND r.state = 'pending'"
        } else {
            ""
        };
        Ok(sqlx::query_as(&format!(
            "{REQUEST_SELECT} WHERE r.tenant_id = $1{filter} \
             ORDER BY CASE WHEN r.state = 'pending' THEN 0 ELSE 1 END, r.created_at_ms DESC, r.id \
             LIMIT {limit}"
        ))
        .bind(tenant_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// The cluster's requests, newest first.
    pub async fn cluster_approval_requests(
        &self,
        cluster_id: &str,
    ) -> Result<Vec<RequestRow>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "{REQUEST_SELECT} WHERE r.cluster_id = $1 ORDER BY r.created_at_ms DESC, r.id"
        ))
        .bind(cluster_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Pending requests whose window ended before `now_ms`, at most `limit`.
    pub async fn due_approval_requests(
        &self,
        now_ms: i64,
        limit: u32,
    ) -> Result<Vec<RequestRow>, StoreError> {
        Ok(sqlx::query_as(&format!(
            "{REQUEST_SELECT} WHERE r.state = 'pending' AND r.expires_at_ms <= $1 \
             ORDER BY r.expires_at_ms LIMIT {limit}"
        ))
        .bind(now_ms)
        .fetch_all(&self.pool)
        .await?)
    }
}

/// Stores a pending request inside `tx` (with the cluster it holds); returns its id.
pub async fn insert_request_in(
    tx: &mut Transaction<'static, Any>,
    new: &NewRequest,
    now_ms: i64,
) -> Result<String, StoreError> {
    let id = uuid::Uuid::new_v4().to_string();
    sqlx::query(
        "INSERT INTO approval_requests (id, tenant_id, cluster_id, operation, request_json, \
         preview_json, rule_id, rule, approver_group, resume_state, state, requested_by, \
         created_at_ms, expires_at_ms) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', $11, $12, $13)",
    )
    .bind(&id)
    .bind(&new.tenant_id)
    .bind(&new.cluster_id)
    .bind(new.operation.as_str())
    .bind(&new.request_json)
    .bind(&new.preview_json)
    .bind(&new.rule_id)
    .bind(&new.rule)
    .bind(&new.approver_group)
    .bind(new.resume_state.as_str())
    .bind(&new.requested_by)
    .bind(now_ms)
    .bind(new.expires_at_ms)
    .execute(&mut **tx)
    .await?;
    Ok(id)
}

/// Moves a pending request to `decision.state`; false when it was no longer pending
/// (someone else decided it, or it expired, first).
pub async fn decide_in(
    tx: &mut Transaction<'static, Any>,
    id: &str,
    decision: &Decision<'_>,
    now_ms: i64,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE approval_requests SET state = $2, decided_by = $3, decided_at_ms = $4, \
         reason = $5, job_id = $6 WHERE id = $1 AND state = 'pending'",
    )
    .bind(id)
    .bind(decision.state.as_str())
    .bind(decision.decided_by)
    .bind(now_ms)
    .bind(decision.reason)
    .bind(decision.job_id)
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Sets the cluster's state inside `tx` if it is still `from`; false otherwise.
pub async fn move_cluster_state_in(
    tx: &mut Transaction<'static, Any>,
    cluster_id: &str,
    from: ClusterState,
    to: ClusterState,
    now_ms: i64,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE clusters SET state = $3, updated_at_ms = $4 WHERE id = $1 AND state = $2",
    )
    .bind(cluster_id)
    .bind(from.as_str())
    .bind(to.as_str())
    .bind(now_ms)
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Writes a held create's fresh plan (re-planned at approval: the catalog may have
/// changed while it waited) over its cluster row inside `tx`; the job submitted next
/// moves its state on.
pub async fn refresh_held_cluster_in(
    tx: &mut Transaction<'static, Any>,
    cluster_id: &str,
    new: &super::clusters::NewCluster,
    now_ms: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "UPDATE clusters SET template_version = $2, template_json = $3, layout_json = $4, \
         config_json = $5, catalog_json = $6, provider = $7, lease_expires_ms = $8, \
         catalog_version = catalog_version + 1, updated_at_ms = $9 WHERE id = $1",
    )
    .bind(cluster_id)
    .bind(new.template_version)
    .bind(&new.template_json)
    .bind(&new.layout_json)
    .bind(&new.config_json)
    .bind(&new.catalog_json)
    .bind(&new.provider)
    .bind(new.lease_expires_ms)
    .bind(now_ms)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
