//! The audit log: who did what to which thing, when and from where. Rows are only
//! ever added, and removed only once older than the audit retention
//! ([`Store::prune_audit`](super::Store::prune_audit)).
//!
//! Entries are written with an [`AuditAction`] and read back with the action's name as
//! stored ([`StoredAuditEntry`]): rows older versions wrote may name actions no version
//! writes now, and the log must still read whole.

use api_types::AuditAction;

use super::{Store, StoreError};

/// One entry: `Action` is an [`AuditAction`] for what is written, the stored name
/// (text) for what is read back.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, sqlx::FromRow)]
pub struct AuditEntry<Action = AuditAction> {
    pub id: String,
    pub tenant_id: String,
    pub actor_id: Option<String>,
    pub actor_name: String,
    /// What was done, e.g. `cluster.create`, `catalog.services.update`.
    pub action: Action,
    pub target_kind: String,
    pub target: String,
    /// The client address the request came from, when it came over HTTP.
    pub address: Option<String>,
    /// Catalog changes: the entity's JSON before and after.
    pub before_json: Option<String>,
    pub after_json: Option<String>,
    pub at_ms: i64,
}

/// Which entries to read, newest first.
#[derive(Debug, Clone, Default)]
pub struct AuditFilter {
    /// `None` reads every tenant (superadmins only; the service layer decides).
    pub tenant_id: Option<String>,
    pub actor_name: Option<String>,
    /// Matches actions starting with this, e.g. `cluster.`.
    pub action_prefix: Option<String>,
    pub before_ms: Option<i64>,
    /// With `before_ms`: entries at exactly that time with a smaller id are older too
    /// (the time and id of the last entry a page showed, so the next page starts right
    /// after it even when many entries share one millisecond).
    pub before_id: Option<String>,
    pub limit: i64,
}

/// An entry as read back: its action as the name stored (see the module's overview).
pub type StoredAuditEntry = AuditEntry<String>;

const COLUMNS: &str = "id, tenant_id, actor_id, actor_name, action, target_kind, target, \
     address, before_json, after_json, at_ms";

impl Store {
    pub async fn append_audit(&self, entry: &AuditEntry) -> Result<(), StoreError> {
        sqlx::query(&format!(
            "INSERT INTO audit_log ({COLUMNS}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
        ))
        .bind(&entry.id)
        .bind(&entry.tenant_id)
        .bind(&entry.actor_id)
        .bind(&entry.actor_name)
        .bind(entry.action.as_str())
        .bind(&entry.target_kind)
        .bind(&entry.target)
        .bind(&entry.address)
        .bind(&entry.before_json)
        .bind(&entry.after_json)
        .bind(entry.at_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub async fn audit_entries(
        &self,
        filter: &AuditFilter,
    ) -> Result<Vec<StoredAuditEntry>, StoreError> {
        // Unset filters compare a bound NULL, so one statement serves every combination.
        sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM audit_log \
             WHERE ($1 IS NULL OR tenant_id = $1) AND ($2 IS NULL OR actor_name = $2) \
               AND ($3 IS NULL OR action LIKE $3) \
               AND ($4 IS NULL OR at_ms < $4 OR (at_ms = $4 AND id < $6)) \
             ORDER BY at_ms DESC, id DESC LIMIT $5"
        ))
        .bind(&filter.tenant_id)
        .bind(&filter.actor_name)
        .bind(
            filter
                .action_prefix
                .as_ref()
                .map(|prefix| format!("{prefix}%")),
        )
        .bind(filter.before_ms)
        .bind(filter.limit)
        .bind(&filter.before_id)
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::from)
    }
}
