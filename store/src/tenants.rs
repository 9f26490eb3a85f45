//! Tenants: the unit of isolation. Every other row belongs to exactly one.

use sqlx::{Any, Transaction};

use super::{
    conflict_on_unique, now_ms, Backend, IntFlag, Listing, RowLock, Store, StoreError, Window,
};
use crate::found::OrNotFound;

/// Id of the `default` tenant created by the first migration.
pub const DEFAULT_TENANT_ID: &str = "00000000-0000-0000-0000-000000000001";

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Tenant {
    pub id: String,
    pub name: String,
    pub max_clusters: Option<i64>,
    pub max_nodes: Option<i64>,
    pub created_at_ms: i64,
    /// The provider types the tenant may build on, a JSON list (see
    /// [`Tenant::provider_types`]).
    #[sqlx(rename = "provider_types")]
    provider_types_json: String,
    /// Only workers started for this tenant run its tasks (`corral worker --tenant`).
    #[sqlx(try_from = "IntFlag")]
    pub dedicated_workers: bool,
    /// Its users may open SSH sessions to their nodes through Corral.
    #[sqlx(try_from = "IntFlag")]
    pub node_shell: bool,
}

impl Tenant {
    /// The provider types the tenant may build on. A list that does not read (it never
    /// should) allows nothing: refusing is the safe side.
    pub fn provider_types(&self) -> Vec<String> {
        serde_json::from_str(&self.provider_types_json).unwrap_or_default()
    }

    /// Whether the tenant may build on provider type `providertype`.
    pub fn may_use(&self, providertype: &str) -> bool {
        self.provider_types()
            .iter()
            .any(|allowed| allowed == providertype)
    }
}

/// What a superadmin gives to create a tenant.
#[derive(Debug, Clone)]
pub struct NewTenant {
    pub name: String,
    pub max_clusters: Option<i64>,
    pub max_nodes: Option<i64>,
    /// The provider types it may build on.
    pub provider_types: Vec<String>,
}

const COLUMNS: &str =
    "id, name, max_clusters, max_nodes, created_at_ms, provider_types, dedicated_workers, \
     node_shell";

impl NewTenant {
    /// Every provider type Corral has, `local` included (tests and the first tenant).
    pub fn all_provider_types() -> Vec<String> {
        domain::catalog::SUPPORTED_PROVIDER_TYPES
            .iter()
            .map(|providertype| (*providertype).to_owned())
            .collect()
    }
}

fn types_json(provider_types: &[String]) -> String {
    serde_json::Value::from(provider_types.to_vec()).to_string()
}

/// Every tenant, by name (names are unique).
fn every_tenant() -> Listing<'static> {
    Listing {
        columns: COLUMNS,
        from: "tenants",
        order: "name",
        params: &[],
    }
}

/// A tenant's on/off settings, each an integer flag column of `tenants`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TenantSwitch {
    /// Its users may open SSH sessions and terminals to their nodes.
    NodeShell,
    /// Only the tenant's own workers run its tasks.
    DedicatedWorkers,
    /// Its browser terminal sessions are recorded.
    TerminalRecording,
    /// Its admins' SSH keys go on every cluster of the tenant.
    AdminKeysOnAllClusters,
}

impl TenantSwitch {
    /// The switch's word: its column here, and its key in audit entries (and the API's
    /// views), so that one name follows the setting everywhere.
    pub fn name(self) -> &'static str {
        match self {
            TenantSwitch::NodeShell => "node_shell",
            TenantSwitch::DedicatedWorkers => "dedicated_workers",
            TenantSwitch::TerminalRecording => "terminal_recording",
            TenantSwitch::AdminKeysOnAllClusters => "admin_keys_on_all_clusters",
        }
    }
}

impl Store {
    pub async fn create_tenant(&self, new: &NewTenant) -> Result<Tenant, StoreError> {
        let tenant = Tenant {
            id: uuid::Uuid::new_v4().to_string(),
            name: new.name.clone(),
            max_clusters: new.max_clusters,
            max_nodes: new.max_nodes,
            created_at_ms: now_ms(),
            provider_types_json: types_json(&new.provider_types),
            dedicated_workers: false,
            node_shell: true,
        };
        let result = sqlx::query(
            "INSERT INTO tenants (id, name, max_clusters, max_nodes, created_at_ms, \
             provider_types) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&tenant.id)
        .bind(&tenant.name)
        .bind(tenant.max_clusters)
        .bind(tenant.max_nodes)
        .bind(tenant.created_at_ms)
        .bind(&tenant.provider_types_json)
        .execute(&self.pool)
        .await;
        conflict_on_unique(result, || format!("tenant {:?}", new.name))?;
        Ok(tenant)
    }

    pub async fn tenant_by_name(&self, name: &str) -> Result<Tenant, StoreError> {
        sqlx::query_as(&format!("SELECT {COLUMNS} FROM tenants WHERE name = $1"))
            .bind(name)
            .fetch_optional(&self.pool)
            .await?
            .or_not_found(|| format!("tenant {name:?}"))
    }

    pub async fn list_tenants(&self) -> Result<Vec<Tenant>, StoreError> {
        self.listed(&every_tenant()).await
    }

    /// (id, name) of every tenant, by name: the superadmin's tenant switcher, on every
    /// admin page, reads two columns instead of whole rows.
    pub async fn tenant_names(&self) -> Result<Vec<(String, String)>, StoreError> {
        Ok(
            sqlx::query_as("SELECT id, name FROM tenants ORDER BY name, id")
                .fetch_all(&self.pool)
                .await?,
        )
    }

    /// One window of every tenant, by name.
    pub async fn tenants_window(&self, window: Window) -> Result<(Vec<Tenant>, u64), StoreError> {
        self.windowed(&every_tenant(), window).await
    }

    pub async fn tenant(&self, id: &str) -> Result<Tenant, StoreError> {
        sqlx::query_as(&format!("SELECT {COLUMNS} FROM tenants WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .or_not_found(|| format!("tenant {id:?}"))
    }

    /// Sets the tenant's quotas (`None` = no limit).
    pub async fn set_tenant_quotas(
        &self,
        id: &str,
        max_clusters: Option<i64>,
        max_nodes: Option<i64>,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE tenants SET max_clusters = $2, max_nodes = $3 WHERE id = $1")
            .bind(id)
            .bind(max_clusters)
            .bind(max_nodes)
            .execute(&self.pool)
            .await?
            .or_not_found(|| format!("tenant {id:?}"))
    }

    /// Sets the provider types the tenant may build on.
    pub async fn set_tenant_provider_types(
        &self,
        id: &str,
        provider_types: &[String],
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE tenants SET provider_types = $2 WHERE id = $1")
            .bind(id)
            .bind(types_json(provider_types))
            .execute(&self.pool)
            .await?
            .or_not_found(|| format!("tenant {id:?}"))
    }

    /// Whether one of the tenant's switches is on.
    pub async fn tenant_switch(&self, id: &str, switch: TenantSwitch) -> Result<bool, StoreError> {
        let on: Option<i64> = sqlx::query_scalar(&format!(
            "SELECT {} FROM tenants WHERE id = $1",
            switch.name()
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        on.map(|on| on != 0)
            .or_not_found(|| format!("tenant {id:?}"))
    }

    /// Turns one of the tenant's switches on or off.
    pub async fn set_tenant_switch(
        &self,
        id: &str,
        switch: TenantSwitch,
        on: bool,
    ) -> Result<(), StoreError> {
        sqlx::query(&format!(
            "UPDATE tenants SET {} = $2 WHERE id = $1",
            switch.name()
        ))
        .bind(id)
        .bind(i64::from(on))
        .execute(&self.pool)
        .await?
        .or_not_found(|| format!("tenant {id:?}"))
    }

    /// Deletes the tenant and, by cascade, its users, tokens, catalog, resources and
    /// cluster records (the caller makes sure no cluster still runs).
    pub async fn delete_tenant(&self, id: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM tenants WHERE id = $1")
            .bind(id)
            .execute(&self.pool)
            .await?
            .or_not_found(|| format!("tenant {id:?}"))
    }
}

/// A tenant's quotas, read with its row locked for the rest of `tx`, so two
/// transactions that grow the tenant check its quotas one after the other.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct LockedQuotas {
    pub name: String,
    pub max_clusters: Option<i64>,
    pub max_nodes: Option<i64>,
}

pub async fn lock_quotas(
    tx: &mut Transaction<'static, Any>,
    backend: Backend,
    tenant_id: &str,
) -> Result<LockedQuotas, StoreError> {
    sqlx::query_as(&format!(
        "SELECT name, max_clusters, max_nodes FROM tenants WHERE id = $1{}",
        backend.lock_clause(RowLock::Wait)
    ))
    .bind(tenant_id)
    .fetch_optional(&mut **tx)
    .await?
    .or_not_found(|| format!("tenant {tenant_id:?}"))
}

/// What a live cluster of a tenant takes up, for quotas: its layout, the layout its
/// unfinished job is heading for, and how many node rows exist.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ClusterFootprint {
    pub layout_json: Option<String>,
    pub planned_layout_json: Option<String>,
    pub existing_nodes: i64,
}

pub async fn live_cluster_footprints(
    tx: &mut Transaction<'static, Any>,
    tenant_id: &str,
) -> Result<Vec<ClusterFootprint>, StoreError> {
    sqlx::query_as(
        "SELECT c.layout_json, (SELECT d.to_layout_json FROM jobs j \
           JOIN job_documents d ON d.job_id = j.id WHERE j.cluster_id = c.id \
           AND j.state IN ('queued', 'running', 'cancelling') \
           ORDER BY j.created_at_ms DESC LIMIT 1) AS planned_layout_json, \
           (SELECT COUNT(*) FROM nodes n WHERE n.cluster_id = c.id) AS existing_nodes \
         FROM clusters c WHERE c.tenant_id = $1 AND c.state <> 'deleted'",
    )
    .bind(tenant_id)
    .fetch_all(&mut **tx)
    .await
    .map_err(StoreError::from)
}
