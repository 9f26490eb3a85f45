//! Reading the audit log: tenant admins see their tenant's entries, superadmins
//! every tenant's (or one, by filter).

use serde::Deserialize;
use utoipa::IntoParams;

use super::{AuditView, Caller, Service, ServiceError, MAX_PAGE};
use crate::store::audit::AuditFilter;

/// Filters for the audit log, newest entries first.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Only this user's actions.
    #[serde(default)]
    pub actor: Option<String>,
    /// Only actions starting with this, e.g. `cluster.` or `catalog.services.`.
    #[serde(default)]
    pub action: Option<String>,
    /// Superadmins only: one tenant's entries (by id).
    #[serde(default)]
    pub tenant_id: Option<String>,
    /// Entries before this time (Unix ms), to page back.
    #[serde(default)]
    pub before_ms: Option<i64>,
    /// With `before_ms`: entries at exactly that time whose id is smaller are older too.
    /// Pass the last entry's `at_ms` and `id` to go on right after it.
    #[serde(default)]
    pub before_id: Option<String>,
    /// At most this many (1-500, default 100).
    #[serde(default)]
    pub limit: Option<u32>,
}

impl Service {
    pub async fn audit_log(
        &self,
        caller: &Caller,
        query: &AuditQuery,
    ) -> Result<Vec<AuditView>, ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        let limit = query.limit.unwrap_or(100);
        if limit == 0 || limit > MAX_PAGE {
            return Err(ServiceError::invalid(format!(
                "limit must be between 1 and {MAX_PAGE}"
            )));
        }
        let tenant_id = if caller.principal.is_superadmin() {
            query.tenant_id.clone()
        } else {
            match &query.tenant_id {
                Some(other) if other != caller.tenant_id() => {
                    return Err(ServiceError::NotFound(format!("tenant {other:?}")))
                }
                _ => Some(caller.tenant_id().to_owned()),
            }
        };
        let filter = AuditFilter {
            tenant_id,
            actor_name: query.actor.clone(),
            action_prefix: query.action.clone(),
            before_ms: query.before_ms,
            before_id: query.before_id.clone(),
            limit: i64::from(limit),
        };
        Ok(self
            .store
            .audit_entries(&filter)
            .await?
            .into_iter()
            .map(AuditView::try_from)
            .collect::<Result<_, _>>()?)
    }
}
