//! Tenants: superadmins create them (optionally seeded with a copy of another
//! tenant's catalog and its staged plugin resources) and set their quotas; everyone
//! else sees only their own.

use api_types::AuditAction;

use super::{
    AuditRecord, Caller, DedicatedWorkersUpdate, LocalNodesUpdate, Page, PageRequest, Problem,
    ProviderTypesUpdate, QuotaUpdate, Service, ServiceError, TenantRequest, TenantView,
};
use crate::operations::ClusterState;
use crate::provider::LOCAL_PROVIDER;
use crate::store::now_ms;
use crate::store::tenants::NewTenant;
use crate::store::tenants::Tenant;
use crate::store::tenants::TenantSwitch;
use crate::store::tenants::DEFAULT_TENANT_ID;

/// What a tenant holds: its live clusters (while there are any it cannot be
/// deleted) and its users (deleted with it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TenantUsage {
    pub live_clusters: Vec<String>,
    pub users: Vec<String>,
}

/// What a new tenant may build on when the request does not say: every provider type
/// but `local`, whose node steps run on this server's own host.
fn default_provider_types(local_nodes: bool) -> Vec<String> {
    domain::catalog::SUPPORTED_PROVIDER_TYPES
        .iter()
        .filter(|providertype| local_nodes || **providertype != LOCAL_PROVIDER)
        .map(|providertype| (*providertype).to_owned())
        .collect()
}

/// `requested`, checked against the provider types Corral has, without repeats, in
/// Corral's order.
fn check_provider_types(requested: &[String]) -> Result<Vec<String>, ServiceError> {
    let supported = domain::catalog::SUPPORTED_PROVIDER_TYPES;
    let unknown: Vec<Problem> = requested
        .iter()
        .enumerate()
        .filter(|(_, providertype)| !supported.contains(&providertype.as_str()))
        .map(|(index, providertype)| Problem {
            path: format!("provider_types[{index}]"),
            message: format!(
                "{providertype:?} is not a provider type (they are {})",
                supported.join(", ")
            ),
        })
        .collect();
    if !unknown.is_empty() {
        return Err(ServiceError::Invalid {
            message: format!("{} unknown provider type(s)", unknown.len()),
            details: unknown,
        });
    }
    Ok(supported
        .iter()
        .filter(|providertype| requested.iter().any(|wanted| wanted == *providertype))
        .map(|providertype| (*providertype).to_owned())
        .collect())
}

fn check_quota_value(path: &str, value: Option<i64>) -> Result<(), ServiceError> {
    match value {
        Some(value) if value < 0 => Err(ServiceError::invalid(format!(
            "{path} must be zero or more"
        ))),
        _ => Ok(()),
    }
}

fn check_tenant_name(name: &str) -> Result<(), ServiceError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if ok {
        Ok(())
    } else {
        Err(ServiceError::invalid(format!(
            "invalid tenant name {name:?}: use 1-64 characters of a-z, 0-9 and '-'"
        )))
    }
}

impl Service {
    pub async fn list_tenants(
        &self,
        caller: &Caller,
        page: PageRequest,
    ) -> Result<Page<TenantView>, ServiceError> {
        if !caller.principal.is_superadmin() {
            // Everyone else sees one tenant, their own.
            let own = TenantView::from(self.store.tenant(caller.tenant_id()).await?);
            return page.slice(vec![own]);
        }
        let (tenants, total) = self.store.tenants_window(page.window()?).await?;
        Ok(page.of(tenants.into_iter().map(TenantView::from).collect(), total))
    }

    /// (id, name) of the tenants the caller may switch to, by name: every tenant for a
    /// superadmin, none for anyone else.
    pub async fn switchable_tenants(
        &self,
        caller: &Caller,
    ) -> Result<Vec<(String, String)>, ServiceError> {
        if !caller.principal.is_superadmin() {
            return Ok(Vec::new());
        }
        Ok(self.store.tenant_names().await?)
    }

    pub async fn tenant(&self, caller: &Caller, id: &str) -> Result<TenantView, ServiceError> {
        caller.require_visible(id, || format!("tenant {id:?}"))?;
        Ok(self.store.tenant(id).await?.into())
    }

    pub async fn create_tenant(
        &self,
        caller: &Caller,
        request: &TenantRequest,
    ) -> Result<TenantView, ServiceError> {
        caller.require_superadmin()?;
        check_tenant_name(&request.name)?;
        check_quota_value("max_clusters", request.max_clusters)?;
        check_quota_value("max_nodes", request.max_nodes)?;
        let provider_types = match &request.provider_types {
            Some(requested) => {
                let mut types = check_provider_types(requested)?;
                if request.local_nodes && !types.iter().any(|t| t == LOCAL_PROVIDER) {
                    types.insert(0, LOCAL_PROVIDER.to_owned());
                }
                types
            }
            None => default_provider_types(request.local_nodes),
        };
        let seed = match &request.seed_catalog_from {
            Some(name) => {
                let source = self.store.tenant_by_name(name).await?;
                let catalog = crate::catalog::load(&self.store, &source.id).await?;
                // Checked before the tenant exists, so a refusal leaves nothing behind.
                let report = domain::catalog::validate::validate(&catalog);
                if report.has_errors() {
                    return Err(crate::catalog::CatalogError::Invalid(report).into());
                }
                Some((source.id, catalog))
            }
            None => None,
        };
        let tenant = self
            .store
            .create_tenant(&NewTenant {
                name: request.name.clone(),
                max_clusters: request.max_clusters,
                // None asked for is the server's default, not unlimited: a superadmin
                // lifts it afterwards, on purpose (see `update_quotas`).
                max_nodes: request
                    .max_nodes
                    .or(Some(i64::from(self.limits.default_tenant_max_nodes))),
                provider_types,
            })
            .await?;
        if let Some((source_id, catalog)) = seed {
            crate::catalog::import(
                &self.store,
                &tenant.id,
                &catalog,
                Some(&caller.principal.user_id),
                now_ms(),
            )
            .await?;
            // The catalog's scripts come along: without them every step naming one
            // would fail on the node with "not on this node".
            self.resources
                .copy_staged(&self.store, &source_id, &tenant.id, now_ms())
                .await?;
        }
        self.audit(
            caller,
            AuditRecord::new(
                &tenant.id,
                AuditAction::TenantCreate,
                "tenant",
                &tenant.name,
            ),
        )
        .await;
        Ok(tenant.into())
    }

    pub async fn update_quotas(
        &self,
        caller: &Caller,
        id: &str,
        update: &QuotaUpdate,
    ) -> Result<TenantView, ServiceError> {
        caller.require_visible(id, || format!("tenant {id:?}"))?;
        caller.require_superadmin()?;
        check_quota_value("max_clusters", update.max_clusters)?;
        check_quota_value("max_nodes", update.max_nodes)?;
        let before = self.store.tenant(id).await?;
        self.store
            .set_tenant_quotas(id, update.max_clusters, update.max_nodes)
            .await?;
        self.audit_tenant_settings(
            caller,
            &before,
            AuditAction::TenantQuotas,
            serde_json::json!({"max_clusters": before.max_clusters, "max_nodes": before.max_nodes}),
            serde_json::json!({"max_clusters": update.max_clusters, "max_nodes": update.max_nodes}),
        )
        .await;
        Ok(self.store.tenant(id).await?.into())
    }

    /// Allows or forbids a tenant the `local` provider (superadmins): its nodes run
    /// on this server's host, so whoever edits the tenant's service steps runs code
    /// there. Clusters already built stay; creating and changing them is refused.
    pub async fn set_local_nodes(
        &self,
        caller: &Caller,
        id: &str,
        update: &LocalNodesUpdate,
    ) -> Result<TenantView, ServiceError> {
        caller.require_visible(id, || format!("tenant {id:?}"))?;
        caller.require_superadmin()?;
        let mut types = self.store.tenant(id).await?.provider_types();
        types.retain(|providertype| providertype != LOCAL_PROVIDER);
        if update.local_nodes {
            types.push(LOCAL_PROVIDER.to_owned());
        }
        self.set_provider_types(
            caller,
            id,
            &ProviderTypesUpdate {
                provider_types: types,
            },
        )
        .await
    }

    /// Sets the provider types a tenant may build on (superadmins). Clusters already
    /// built on a type taken away stay; creating and changing them is refused.
    pub async fn set_provider_types(
        &self,
        caller: &Caller,
        id: &str,
        update: &ProviderTypesUpdate,
    ) -> Result<TenantView, ServiceError> {
        caller.require_visible(id, || format!("tenant {id:?}"))?;
        caller.require_superadmin()?;
        let types = check_provider_types(&update.provider_types)?;
        let before = self.store.tenant(id).await?;
        self.store.set_tenant_provider_types(id, &types).await?;
        self.audit_tenant_settings(
            caller,
            &before,
            AuditAction::TenantProviderTypes,
            serde_json::json!({"provider_types": before.provider_types()}),
            serde_json::json!({"provider_types": types}),
        )
        .await;
        Ok(self.store.tenant(id).await?.into())
    }

    /// Sets whether only workers started for the tenant (`corral worker --tenant`) run
    /// its tasks (superadmins). Tasks already running finish where they are.
    pub async fn set_dedicated_workers(
        &self,
        caller: &Caller,
        id: &str,
        update: &DedicatedWorkersUpdate,
    ) -> Result<TenantView, ServiceError> {
        caller.require_visible(id, || format!("tenant {id:?}"))?;
        caller.require_superadmin()?;
        let tenant = self
            .switch_tenant(
                caller,
                id,
                TenantSwitch::DedicatedWorkers,
                update.dedicated_workers,
            )
            .await?;
        Ok(tenant.into())
    }

    /// Turns the tenant's `switch` to `on` and audits it, as `{"<switch>": before}` then
    /// `{"<switch>": on}`; whoever may was checked by the caller. Returns the tenant as
    /// it is now.
    pub(super) async fn switch_tenant(
        &self,
        caller: &Caller,
        tenant_id: &str,
        switch: TenantSwitch,
        on: bool,
    ) -> Result<Tenant, ServiceError> {
        let before = self.store.tenant_switch(tenant_id, switch).await?;
        self.store.set_tenant_switch(tenant_id, switch, on).await?;
        let tenant = self.store.tenant(tenant_id).await?;
        let action = match switch {
            TenantSwitch::NodeShell => AuditAction::TenantNodeShell,
            TenantSwitch::DedicatedWorkers => AuditAction::TenantDedicatedWorkers,
            TenantSwitch::TerminalRecording => AuditAction::TenantTerminalRecording,
            TenantSwitch::AdminKeysOnAllClusters => AuditAction::TenantAdminKeys,
        };
        let setting = |on: bool| serde_json::json!({ switch.name(): on });
        self.audit_tenant_settings(caller, &tenant, action, setting(before), setting(on))
            .await;
        Ok(tenant)
    }

    /// Audits a change of the tenant's settings: `before` and `after` are JSON objects
    /// of the settings it changed, by name.
    async fn audit_tenant_settings(
        &self,
        caller: &Caller,
        tenant: &Tenant,
        action: AuditAction,
        before: serde_json::Value,
        after: serde_json::Value,
    ) {
        let mut record = AuditRecord::new(&tenant.id, action, "tenant", &tenant.name);
        record.before = Some(before.to_string());
        record.after = Some(after.to_string());
        self.audit(caller, record).await;
    }

    /// What the tenant `id` holds, for its admins (names sorted).
    pub async fn tenant_usage(
        &self,
        caller: &Caller,
        id: &str,
    ) -> Result<TenantUsage, ServiceError> {
        caller.require_visible(id, || format!("tenant {id:?}"))?;
        caller.require_tenant_admin(id)?;
        let mut live_clusters: Vec<String> = self
            .store
            .list_clusters(id)
            .await?
            .into_iter()
            .filter(|cluster| cluster.state != ClusterState::Deleted)
            .map(|cluster| cluster.name)
            .collect();
        live_clusters.sort();
        let mut users: Vec<String> = self
            .store
            .list_users(id)
            .await?
            .into_iter()
            .map(|user| user.username)
            .collect();
        users.sort();
        Ok(TenantUsage {
            live_clusters,
            users,
        })
    }

    /// Deletes a tenant with everything it owns. Refused for the default tenant and
    /// while the tenant has clusters that are not deleted (they are listed).
    pub async fn delete_tenant(&self, caller: &Caller, id: &str) -> Result<(), ServiceError> {
        caller.require_visible(id, || format!("tenant {id:?}"))?;
        caller.require_superadmin()?;
        if id == DEFAULT_TENANT_ID {
            return Err(ServiceError::invalid(
                "the default tenant cannot be deleted",
            ));
        }
        let tenant = self.store.tenant(id).await?;
        let live = self.tenant_usage(caller, id).await?.live_clusters;
        if !live.is_empty() {
            return Err(ServiceError::Conflict(format!(
                "tenant {} still has {} cluster(s): {}; delete them first",
                tenant.name,
                live.len(),
                live.join(", ")
            )));
        }
        self.store.delete_tenant(id).await?;
        // Recorded under the caller's tenant: the deleted tenant's log goes with it.
        self.audit(
            caller,
            AuditRecord::new(
                caller.tenant_id(),
                AuditAction::TenantDelete,
                "tenant",
                &tenant.name,
            ),
        )
        .await;
        Ok(())
    }
}
