//! The cost ledger and tenant budgets (docs/cost.md).
//!
//! `cost_intervals` holds one row per stretch a cluster ran at one hourly rate. When a
//! job that moves a cluster ends, [`reprice_in`] (in the job's closing transaction)
//! prices the cluster's committed layout from its catalog snapshot; when the rate
//! differs from the open row's, that row is closed and one at the new rate opened. The
//! sums over the rows are pure ([`domain::cost`]). `tenant_budgets` holds a tenant's
//! monthly budget (no row: none).

use api_types::{BudgetAction, ClusterState};
use domain::cost::{estimate, Interval, LedgerEntry, Micros};
use domain::layout::Layout;
use sqlx::{Any, Row, Transaction};

use super::{Store, StoreError};

/// A tenant's budget as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    pub monthly_micros: Micros,
    pub action: BudgetAction,
}

/// The hourly rate of a cluster's committed layout: 0 once it is deleted or when its
/// snapshot or layout does not read (a warning says so: the ledger must not stop a job
/// from ending).
fn cluster_rate(
    cluster_id: &str,
    state: &str,
    provider: &str,
    layout_json: &str,
    catalog_json: &str,
) -> Micros {
    if state == ClusterState::Deleted.as_str() {
        return 0;
    }
    let layout = match serde_json::from_str::<Layout>(layout_json) {
        Ok(layout) if layout.size() > 0 => layout,
        Ok(_) => return 0,
        Err(error) => {
            tracing::warn!(cluster_id, %error, "cost ledger: the layout does not read");
            return 0;
        }
    };
    match domain::catalog::coopr::import_bundle(catalog_json) {
        Ok(snapshot) => estimate(&snapshot, provider, &layout).per_hour,
        Err(error) => {
            tracing::warn!(cluster_id, %error, "cost ledger: the catalog snapshot does not read");
            0
        }
    }
}

/// Brings the cluster's ledger up to its committed layout at `now_ms`: closes the open
/// interval when the rate changed and opens one at the new rate (none at 0).
pub async fn reprice_in(
    tx: &mut Transaction<'static, Any>,
    cluster_id: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    let Some(row) = sqlx::query(
        "SELECT c.tenant_id, c.owner_id, u.username, c.template_name, c.provider, c.state, \
         c.layout_json, c.catalog_json FROM clusters c LEFT JOIN users u ON u.id = c.owner_id \
         WHERE c.id = $1",
    )
    .bind(cluster_id)
    .fetch_optional(&mut **tx)
    .await?
    else {
        return Ok(());
    };
    let tenant_id: String = row.try_get("tenant_id")?;
    let owner_id: Option<String> = row.try_get("owner_id")?;
    let owner: Option<String> = row.try_get("username")?;
    let template: String = row.try_get("template_name")?;
    let provider: String = row.try_get("provider")?;
    let state: String = row.try_get("state")?;
    let layout_json: String = row.try_get("layout_json")?;
    let catalog_json: String = row.try_get("catalog_json")?;
    let rate = cluster_rate(cluster_id, &state, &provider, &layout_json, &catalog_json);
    let open: Option<(String, i64)> = sqlx::query_as(
        "SELECT id, per_hour_micros FROM cost_intervals WHERE cluster_id = $1 AND end_ms IS NULL",
    )
    .bind(cluster_id)
    .fetch_optional(&mut **tx)
    .await?;
    if let Some((id, open_rate)) = &open {
        if *open_rate == rate {
            return Ok(());
        }
        sqlx::query("UPDATE cost_intervals SET end_ms = $2 WHERE id = $1")
            .bind(id)
            .bind(now_ms)
            .execute(&mut **tx)
            .await?;
    }
    if rate > 0 {
        sqlx::query(
            "INSERT INTO cost_intervals (id, tenant_id, cluster_id, owner_id, owner, template, \
             per_hour_micros, start_ms, end_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL)",
        )
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(&tenant_id)
        .bind(cluster_id)
        .bind(&owner_id)
        .bind(owner.unwrap_or_else(|| "(no owner)".to_owned()))
        .bind(&template)
        .bind(rate)
        .bind(now_ms)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

fn entry_of(row: &sqlx::any::AnyRow) -> Result<LedgerEntry, sqlx::Error> {
    Ok(LedgerEntry {
        owner: row.try_get("owner")?,
        template: row.try_get("template")?,
        interval: Interval {
            per_hour: row.try_get("per_hour_micros")?,
            start_ms: row.try_get("start_ms")?,
            end_ms: row.try_get("end_ms")?,
        },
    })
}

impl Store {
    /// Records a cluster's current rate (see [`reprice_in`]) in its own transaction.
    pub async fn reprice_cluster(&self, cluster_id: &str, now_ms: i64) -> Result<(), StoreError> {
        let (_turn, mut tx) = self.begin_write().await?;
        reprice_in(&mut tx, cluster_id, now_ms).await?;
        tx.commit().await?;
        Ok(())
    }

    /// A cluster's intervals, oldest first.
    pub async fn cluster_cost_intervals(
        &self,
        cluster_id: &str,
    ) -> Result<Vec<Interval>, StoreError> {
        let rows = sqlx::query(
            "SELECT owner, template, per_hour_micros, start_ms, end_ms FROM cost_intervals \
             WHERE cluster_id = $1 ORDER BY start_ms, id",
        )
        .bind(cluster_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .iter()
            .map(entry_of)
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .map(|entry| entry.interval)
            .collect())
    }

    /// The tenant's intervals that overlap `[from_ms, to_ms)`.
    pub async fn tenant_cost_entries(
        &self,
        tenant_id: &str,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<Vec<LedgerEntry>, StoreError> {
        let rows = sqlx::query(
            "SELECT owner, template, per_hour_micros, start_ms, end_ms FROM cost_intervals \
             WHERE tenant_id = $1 AND start_ms < $3 AND (end_ms IS NULL OR end_ms > $2) \
             ORDER BY start_ms, id",
        )
        .bind(tenant_id)
        .bind(from_ms)
        .bind(to_ms)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.iter().map(entry_of).collect::<Result<Vec<_>, _>>()?)
    }

    pub async fn tenant_budget(&self, tenant_id: &str) -> Result<Option<Budget>, StoreError> {
        let row: Option<(i64, String)> = sqlx::query_as(
            "SELECT monthly_budget_micros, budget_action FROM tenant_budgets WHERE tenant_id = $1",
        )
        .bind(tenant_id)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|(monthly_micros, action)| Budget {
            monthly_micros,
            // The column's CHECK allows only the two words; refusing is the safe side.
            action: action.parse().unwrap_or_default(),
        }))
    }

    /// Sets (or, with `None`, removes) the tenant's budget.
    pub async fn set_tenant_budget(
        &self,
        tenant_id: &str,
        budget: Option<&Budget>,
        updated_by: &str,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        let (_turn, mut tx) = self.begin_write().await?;
        sqlx::query("DELETE FROM tenant_budgets WHERE tenant_id = $1")
            .bind(tenant_id)
            .execute(&mut *tx)
            .await?;
        if let Some(budget) = budget {
            sqlx::query(
                "INSERT INTO tenant_budgets (tenant_id, monthly_budget_micros, budget_action, \
                 updated_by, updated_at_ms) VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(tenant_id)
            .bind(budget.monthly_micros)
            .bind(budget.action.as_str())
            .bind(updated_by)
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}
