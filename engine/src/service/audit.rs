//! Reading the audit log: tenant admins see their tenant's entries, superadmins
//! every tenant's (or one, by filter). Also the action a catalog entity's write is
//! audited under, which depends on the entity's kind.
//!
//! The filter's `action` is a prefix (`cluster.`), not an [`AuditAction`], and entries
//! read back keep their stored action names: older versions wrote names no version
//! writes now, and those entries still list.

use api_types::AuditAction;
use domain::catalog::EntityKind;
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

/// What a catalog write did to one entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EntityChange {
    Create,
    Update,
    Delete,
}

/// `catalog.<kind>.<change>`, e.g. `catalog.services.update`.
pub(super) fn entity_audit_action(kind: EntityKind, change: EntityChange) -> AuditAction {
    use AuditAction as A;
    use EntityChange::{Create, Delete, Update};
    match (kind, change) {
        (EntityKind::Provider, Create) => A::CatalogProvidersCreate,
        (EntityKind::Provider, Update) => A::CatalogProvidersUpdate,
        (EntityKind::Provider, Delete) => A::CatalogProvidersDelete,
        (EntityKind::HardwareType, Create) => A::CatalogHardwaretypesCreate,
        (EntityKind::HardwareType, Update) => A::CatalogHardwaretypesUpdate,
        (EntityKind::HardwareType, Delete) => A::CatalogHardwaretypesDelete,
        (EntityKind::ImageType, Create) => A::CatalogImagetypesCreate,
        (EntityKind::ImageType, Update) => A::CatalogImagetypesUpdate,
        (EntityKind::ImageType, Delete) => A::CatalogImagetypesDelete,
        (EntityKind::Service, Create) => A::CatalogServicesCreate,
        (EntityKind::Service, Update) => A::CatalogServicesUpdate,
        (EntityKind::Service, Delete) => A::CatalogServicesDelete,
        (EntityKind::ClusterTemplate, Create) => A::CatalogClustertemplatesCreate,
        (EntityKind::ClusterTemplate, Update) => A::CatalogClustertemplatesUpdate,
        (EntityKind::ClusterTemplate, Delete) => A::CatalogClustertemplatesDelete,
        (EntityKind::PartialTemplate, Create) => A::CatalogPartialtemplatesCreate,
        (EntityKind::PartialTemplate, Update) => A::CatalogPartialtemplatesUpdate,
        (EntityKind::PartialTemplate, Delete) => A::CatalogPartialtemplatesDelete,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entity_write_is_named_after_its_kind_and_change() {
        for kind in EntityKind::ALL {
            for (change, word) in [
                (EntityChange::Create, "create"),
                (EntityChange::Update, "update"),
                (EntityChange::Delete, "delete"),
            ] {
                assert_eq!(
                    entity_audit_action(kind, change).as_str(),
                    format!("catalog.{}.{word}", kind.key())
                );
            }
        }
    }
}
