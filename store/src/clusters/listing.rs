//! The cluster list in pages, as SQL: a tenant's live clusters expiring first (the
//! soonest lease deadline, then the rest; by name within), cut by keyset (a cursor
//! after the last row shown) so a page reads only its rows whatever the list's size,
//! and a page boundary holds still when clusters are added before or after it.
//!
//! Beside a page: the whole list's count and cost together (aggregates, not the rows),
//! the templates and states of the tenant's live clusters (for filters), and the
//! counts the admin overview shows.

use api_types::ClusterState;
use base64::Engine as _;
use domain::cost::{Interval, Month};
use sqlx::Any;

use super::{Cluster, COLUMNS};
use crate::{Backend, Store, StoreError};

/// The list's first sort key: when the lease next matters (a lease stop's deletion,
/// else the lease's end), clusters without a lease last. The index
/// `clusters_tenant_list` is on exactly this expression.
const DEADLINE: &str = "COALESCE(lease_deletes_at_ms, lease_expires_ms, 9223372036854775807)";
/// The deadline of a cluster without a lease in [`DEADLINE`].
const NO_DEADLINE: i64 = i64::MAX;
const MS_PER_HOUR: i64 = 3_600_000;

/// Which of a tenant's live clusters a list holds; unset fields keep every cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterFilter {
    pub tenant_id: String,
    pub state: Option<ClusterState>,
    pub template: Option<String>,
    /// Part of the name, in any case.
    pub name_contains: Option<String>,
    pub owner_id: Option<String>,
}

/// Where a page ends: the list's sort key of its last cluster. The next page starts
/// right after it, so clusters added or removed meanwhile neither repeat nor skip the
/// rows that stayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterCursor {
    deadline_ms: i64,
    name: String,
    id: String,
}

impl ClusterCursor {
    /// The cursor right after `cluster`.
    pub fn after(cluster: &Cluster) -> Self {
        Self {
            deadline_ms: cluster
                .lease_deletes_at_ms
                .or(cluster.lease_expires_ms)
                .unwrap_or(NO_DEADLINE),
            name: cluster.name.clone(),
            id: cluster.id.clone(),
        }
    }

    /// As clients carry it: opaque, URL-safe.
    pub fn encode(&self) -> String {
        // The id (a UUID) has no space; the name, last, may hold anything.
        let plain = format!("{} {} {}", self.deadline_ms, self.id, self.name);
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(plain)
    }

    /// `None` for anything [`Self::encode`] did not write.
    pub fn decode(text: &str) -> Option<Self> {
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(text)
            .ok()?;
        let plain = String::from_utf8(bytes).ok()?;
        let mut parts = plain.splitn(3, ' ');
        let deadline_ms = parts.next()?.parse().ok()?;
        let id = parts.next()?.to_owned();
        let name = parts.next()?.to_owned();
        if id.is_empty() || name.is_empty() {
            return None;
        }
        Some(Self {
            deadline_ms,
            name,
            id,
        })
    }
}

/// One page: its clusters in list order, and the cursor of the next one (`None` on the
/// last page).
#[derive(Debug, Clone)]
pub struct ClusterPage {
    pub clusters: Vec<Cluster>,
    pub next: Option<ClusterCursor>,
}

/// The whole filtered list's size and cost (every page's clusters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClusterTotals {
    pub clusters: u64,
    /// How many cost intervals its clusters have (0: none is priced).
    pub cost_intervals: u64,
    /// Micro-units: the open intervals' rates, everything so far, this month so far.
    pub per_hour: i64,
    pub so_far: i64,
    pub this_month: i64,
}

/// A tenant's live clusters in one state: how many, and their layouts' nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateCount {
    pub state: ClusterState,
    pub clusters: u64,
    pub nodes: u64,
}

/// A value bound to a statement built here.
enum Bind {
    Text(String),
    Int(i64),
}

/// The `WHERE` of the filtered list (live clusters only), its parameters pushed onto
/// `binds` (numbered after those already there).
fn conditions(filter: &ClusterFilter, binds: &mut Vec<Bind>) -> String {
    let next = |bind: Bind, binds: &mut Vec<Bind>| {
        binds.push(bind);
        format!("${}", binds.len())
    };
    let mut sql = format!(
        "tenant_id = {} AND state <> 'deleted'",
        next(Bind::Text(filter.tenant_id.clone()), binds)
    );
    if let Some(state) = filter.state {
        let p = next(Bind::Text(state.as_str().to_owned()), binds);
        sql.push_str(&format!(" AND state = {p}"));
    }
    if let Some(template) = &filter.template {
        let p = next(Bind::Text(template.clone()), binds);
        sql.push_str(&format!(" AND template_name = {p}"));
    }
    if let Some(text) = &filter.name_contains {
        // LIKE's wildcards in the text are matched as themselves.
        let escaped = text
            .to_lowercase()
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        let p = next(Bind::Text(format!("%{escaped}%")), binds);
        sql.push_str(&format!(" AND LOWER(name) LIKE {p} ESCAPE '\\'"));
    }
    if let Some(owner) = &filter.owner_id {
        let p = next(Bind::Text(owner.clone()), binds);
        sql.push_str(&format!(" AND owner_id = {p}"));
    }
    sql
}

/// Binds `binds` in order onto any sqlx query (`query`, `query_as`, `query_scalar`).
macro_rules! bound {
    ($query:expr, $binds:expr) => {{
        let mut query = $query;
        for bind in $binds {
            query = match bind {
                Bind::Text(text) => query.bind(text.as_str()),
                Bind::Int(number) => query.bind(*number),
            };
        }
        query
    }};
}

/// The cost of `per_hour_micros` over `[start, end)` as SQL, exactly as
/// [`domain::cost::cost_between`] reckons it (truncated per interval), split in whole
/// hours and the rest so that no product overflows 64 bits.
fn cost_sql(start: &str, end: &str) -> String {
    let span = format!("(CASE WHEN {end} > {start} THEN {end} - {start} ELSE 0 END)");
    format!(
        "per_hour_micros * ({span} / {MS_PER_HOUR}) + per_hour_micros * ({span} % {MS_PER_HOUR}) / {MS_PER_HOUR}"
    )
}

impl Store {
    /// Up to `limit` clusters of the filtered list, after `after` (from the start
    /// without), skipping `offset` more (for clients paging by offset).
    pub async fn cluster_page(
        &self,
        filter: &ClusterFilter,
        after: Option<&ClusterCursor>,
        offset: u32,
        limit: u32,
    ) -> Result<ClusterPage, StoreError> {
        let mut binds = Vec::new();
        let mut sql = format!(
            "SELECT {COLUMNS} FROM clusters WHERE {}",
            conditions(filter, &mut binds)
        );
        if let Some(after) = after {
            let first = binds.len() + 1;
            binds.push(Bind::Int(after.deadline_ms));
            binds.push(Bind::Text(after.name.clone()));
            binds.push(Bind::Text(after.id.clone()));
            // The first key's bound alone lets SQLite seek in the index (it does not
            // for the row comparison); the row comparison then cuts exactly.
            sql.push_str(&format!(
                " AND {DEADLINE} >= ${first} AND ({DEADLINE}, name, id) > (${first}, ${}, ${})",
                first + 1,
                first + 2
            ));
        }
        // One row more than the page says whether another page follows. The numbers
        // are integers, written into the text.
        sql.push_str(&format!(
            " ORDER BY {DEADLINE}, name, id LIMIT {} OFFSET {offset}",
            u64::from(limit) + 1
        ));
        let mut clusters: Vec<Cluster> = bound!(sqlx::query_as::<Any, Cluster>(&sql), &binds)
            .fetch_all(&self.pool)
            .await?;
        let more = clusters.len() > limit as usize;
        clusters.truncate(limit as usize);
        let next = if more {
            clusters.last().map(ClusterCursor::after)
        } else {
            None
        };
        Ok(ClusterPage { clusters, next })
    }

    /// How many clusters the filtered list holds and what they cost together, as of
    /// `now_ms`: two aggregate queries, whatever the list's size.
    pub async fn cluster_totals(
        &self,
        filter: &ClusterFilter,
        now_ms: i64,
    ) -> Result<ClusterTotals, StoreError> {
        let mut binds = Vec::new();
        let count_sql = format!(
            "SELECT COUNT(*) FROM clusters WHERE {}",
            conditions(filter, &mut binds)
        );
        let clusters: i64 = bound!(sqlx::query_scalar::<Any, i64>(&count_sql), &binds)
            .fetch_one(&self.pool)
            .await?;

        let mut binds = vec![
            Bind::Int(now_ms),
            Bind::Int(Month::of_ms(now_ms).start_ms()),
        ];
        let end = "(CASE WHEN end_ms IS NULL OR end_ms > $1 THEN $1 ELSE end_ms END)";
        let month_start = "(CASE WHEN start_ms > $2 THEN start_ms ELSE $2 END)";
        let cost_sql = format!(
            "SELECT COUNT(*), \
             CAST(COALESCE(SUM(CASE WHEN end_ms IS NULL THEN per_hour_micros ELSE 0 END), 0) AS BIGINT), \
             CAST(COALESCE(SUM({}), 0) AS BIGINT), CAST(COALESCE(SUM({}), 0) AS BIGINT) \
             FROM cost_intervals WHERE cluster_id IN (SELECT id FROM clusters WHERE {})",
            cost_sql("start_ms", end),
            cost_sql(month_start, end),
            conditions(filter, &mut binds)
        );
        let (intervals, per_hour, so_far, this_month): (i64, i64, i64, i64) = bound!(
            sqlx::query_as::<Any, (i64, i64, i64, i64)>(&cost_sql),
            &binds
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(ClusterTotals {
            clusters: u64::try_from(clusters).unwrap_or(0),
            cost_intervals: u64::try_from(intervals).unwrap_or(0),
            per_hour,
            so_far,
            this_month,
        })
    }

    /// The (template, state) pairs among the tenant's live clusters, sorted: what the
    /// list's filters offer.
    pub async fn cluster_facets(
        &self,
        tenant_id: &str,
    ) -> Result<Vec<(String, ClusterState)>, StoreError> {
        Ok(sqlx::query_as(
            "SELECT DISTINCT template_name, state FROM clusters \
             WHERE tenant_id = $1 AND state <> 'deleted' ORDER BY template_name, state",
        )
        .bind(tenant_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// The cost intervals of each of `cluster_ids` (one query for a page), in time
    /// order.
    pub async fn clusters_cost_intervals(
        &self,
        cluster_ids: &[&str],
    ) -> Result<std::collections::HashMap<String, Vec<Interval>>, StoreError> {
        let mut intervals: std::collections::HashMap<String, Vec<Interval>> =
            std::collections::HashMap::new();
        if cluster_ids.is_empty() {
            return Ok(intervals);
        }
        let places: Vec<String> = (1..=cluster_ids.len()).map(|n| format!("${n}")).collect();
        let sql = format!(
            "SELECT cluster_id, per_hour_micros, start_ms, end_ms FROM cost_intervals \
             WHERE cluster_id IN ({}) ORDER BY start_ms, id",
            places.join(", ")
        );
        let mut query = sqlx::query_as::<Any, (String, i64, i64, Option<i64>)>(&sql);
        for id in cluster_ids {
            query = query.bind(*id);
        }
        for (cluster_id, per_hour, start_ms, end_ms) in query.fetch_all(&self.pool).await? {
            intervals.entry(cluster_id).or_default().push(Interval {
                per_hour,
                start_ms,
                end_ms,
            });
        }
        Ok(intervals)
    }

    /// The tenant's live clusters per state with their layouts' node counts: one
    /// aggregate (the layouts are counted by the database's JSON functions).
    pub async fn cluster_state_counts(
        &self,
        tenant_id: &str,
    ) -> Result<Vec<StateCount>, StoreError> {
        let nodes = match self.backend {
            Backend::Sqlite => "json_array_length(layout_json, '$.nodes')",
            Backend::Postgres => "json_array_length(CAST(layout_json AS json) -> 'nodes')",
        };
        let rows: Vec<(ClusterState, i64, i64)> = sqlx::query_as(&format!(
            "SELECT state, COUNT(*), CAST(COALESCE(SUM(COALESCE({nodes}, 0)), 0) AS BIGINT) \
             FROM clusters WHERE tenant_id = $1 AND state <> 'deleted' GROUP BY state"
        ))
        .bind(tenant_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(state, clusters, nodes)| StateCount {
                state,
                clusters: u64::try_from(clusters).unwrap_or(0),
                nodes: u64::try_from(nodes).unwrap_or(0),
            })
            .collect())
    }

    /// (id, name, state) of the tenant's clusters in one of `states`, by name, at most
    /// `limit`: read from the index on (tenant, state, name, id) alone.
    pub async fn clusters_in_states(
        &self,
        tenant_id: &str,
        states: &[ClusterState],
        limit: u32,
    ) -> Result<Vec<(String, String, ClusterState)>, StoreError> {
        if states.is_empty() {
            return Ok(Vec::new());
        }
        let places: Vec<String> = (2..states.len() + 2).map(|n| format!("${n}")).collect();
        let sql = format!(
            "SELECT id, name, state FROM clusters WHERE tenant_id = $1 AND state IN ({}) \
             ORDER BY name, id LIMIT {limit}",
            places.join(", ")
        );
        let mut query = sqlx::query_as::<Any, (String, String, ClusterState)>(&sql).bind(tenant_id);
        for state in states {
            query = query.bind(state.as_str());
        }
        Ok(query.fetch_all(&self.pool).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_what_it_wrote() {
        let cursor = ClusterCursor {
            deadline_ms: 1_700_000_000_000,
            name: "a name with spaces".to_owned(),
            id: "0b9a3d5e-0000-4000-8000-000000000000".to_owned(),
        };
        assert_eq!(ClusterCursor::decode(&cursor.encode()), Some(cursor));
    }

    #[test]
    fn anything_else_is_no_cursor() {
        for text in ["", "not base64!", "bm9wZQ", "MTIgaWQ"] {
            assert_eq!(ClusterCursor::decode(text), None, "{text:?}");
        }
    }
}
