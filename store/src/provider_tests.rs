//! Provider checks waiting for, or run by, a worker pool (`provider_tests`).
//!
//! A provider check runs the tenant's provider with the tenant's credentials, and may
//! make a machine: it belongs where the tenant's tasks run, not in whichever process
//! answered the API call. So the API stores a request here and waits for its report,
//! and a pool whose [`WorkerScope`] serves the tenant claims it and runs it (see
//! the engine's `worker::provider_tests`).
//!
//! A request is claimed by one conditional `UPDATE` (still queued, and its claim
//! deadline still ahead), so of several pools one runs it. A request nobody claimed by
//! its deadline is never run: the API marks it [`ProviderTestState::Abandoned`], and
//! the deadline keeps a pool away even when the API process died before it could.

use std::fmt;

use super::{Store, StoreError};
use crate::found::OrNotFound;
use crate::WorkerScope;

/// Where a provider check request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderTestState {
    /// Waiting for a pool that serves its tenant.
    Queued,
    /// A pool claimed it and is running it.
    Running,
    /// Its report is written.
    Done,
    /// No pool claimed it in time; it never runs.
    Abandoned,
}

impl ProviderTestState {
    pub const ALL: [ProviderTestState; 4] = [
        ProviderTestState::Queued,
        ProviderTestState::Running,
        ProviderTestState::Done,
        ProviderTestState::Abandoned,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ProviderTestState::Queued => "queued",
            ProviderTestState::Running => "running",
            ProviderTestState::Done => "done",
            ProviderTestState::Abandoned => "abandoned",
        }
    }

    /// The state `raw` names, if any.
    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|state| state.as_str() == raw)
    }
}

impl fmt::Display for ProviderTestState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

// A `state` column reads as the state it names (rows derive `sqlx::FromRow`).
impl sqlx::Type<sqlx::Any> for ProviderTestState {
    fn type_info() -> sqlx::any::AnyTypeInfo {
        <&str as sqlx::Type<sqlx::Any>>::type_info()
    }

    fn compatible(ty: &sqlx::any::AnyTypeInfo) -> bool {
        <&str as sqlx::Type<sqlx::Any>>::compatible(ty)
    }
}

impl<'r> sqlx::Decode<'r, sqlx::Any> for ProviderTestState {
    fn decode(value: sqlx::any::AnyValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
        let raw = <&str as sqlx::Decode<'r, sqlx::Any>>::decode(value)?;
        Self::parse(raw).ok_or_else(|| format!("unknown provider test state {raw:?}").into())
    }
}

/// One row of `provider_tests`.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ProviderTestRow {
    pub id: String,
    pub tenant_id: String,
    pub provider: String,
    /// The request (`api_types::ProviderTestRequest`) with its machine's hardware and
    /// image types resolved, as JSON.
    pub request_json: String,
    pub state: ProviderTestState,
    /// The lease owner id of the pool that claimed it.
    pub claimed_by: Option<String>,
    /// The report (`api_types::ProviderTestReport`) as JSON, credentials blotted out.
    pub report_json: Option<String>,
    pub created_at_ms: i64,
    /// No pool claims it after this.
    pub claim_by_ms: i64,
    pub claimed_at_ms: Option<i64>,
    pub finished_at_ms: Option<i64>,
}

const COLUMNS: &str = "id, tenant_id, provider, request_json, state, claimed_by, report_json, \
                       created_at_ms, claim_by_ms, claimed_at_ms, finished_at_ms";

/// A request as the API stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewProviderTest<'a> {
    pub id: &'a str,
    pub tenant_id: &'a str,
    pub provider: &'a str,
    pub request_json: &'a str,
    pub created_at_ms: i64,
    pub claim_by_ms: i64,
}

/// Requests one claim looks at: the first that is still free is taken.
const CLAIM_CANDIDATES: i64 = 8;

impl Store {
    /// Stores a request, queued.
    pub async fn queue_provider_test(&self, new: &NewProviderTest<'_>) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO provider_tests (id, tenant_id, provider, request_json, state, \
             created_at_ms, claim_by_ms) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(new.id)
        .bind(new.tenant_id)
        .bind(new.provider)
        .bind(new.request_json)
        .bind(ProviderTestState::Queued.as_str())
        .bind(new.created_at_ms)
        .bind(new.claim_by_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The request `id`.
    pub async fn provider_test(&self, id: &str) -> Result<ProviderTestRow, StoreError> {
        sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM provider_tests WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .or_not_found(|| format!("provider test {id}"))
    }

    /// Claims the oldest queued request of a tenant `scope` serves whose claim deadline
    /// is after `now_ms`, for `worker_id`; `None` when there is none (or other pools
    /// took every one looked at).
    pub async fn claim_provider_test(
        &self,
        scope: &WorkerScope,
        worker_id: &str,
        now_ms: i64,
    ) -> Result<Option<ProviderTestRow>, StoreError> {
        let Some(tenants_served) = scope.served_condition("tenant_id", 4) else {
            return Ok(None);
        };
        let sql = format!(
            "SELECT id FROM provider_tests WHERE state = $1 AND claim_by_ms > $2 \
             AND {tenants_served} ORDER BY created_at_ms LIMIT $3"
        );
        let mut query = sqlx::query_scalar(&sql)
            .bind(ProviderTestState::Queued.as_str())
            .bind(now_ms)
            .bind(CLAIM_CANDIDATES);
        for tenant in scope.tenant_ids() {
            query = query.bind(tenant);
        }
        let candidates: Vec<String> = query.fetch_all(&self.pool).await?;
        for id in candidates {
            let claimed = sqlx::query(
                "UPDATE provider_tests SET state = $2, claimed_by = $3, claimed_at_ms = $4 \
                 WHERE id = $1 AND state = $5 AND claim_by_ms > $4",
            )
            .bind(&id)
            .bind(ProviderTestState::Running.as_str())
            .bind(worker_id)
            .bind(now_ms)
            .bind(ProviderTestState::Queued.as_str())
            .execute(&self.pool)
            .await?;
            if claimed.rows_affected() == 1 {
                return self.provider_test(&id).await.map(Some);
            }
        }
        Ok(None)
    }

    /// Records the report of a request `worker_id` claimed; false when the request is
    /// no longer that worker's to finish (removed as too old).
    pub async fn finish_provider_test(
        &self,
        id: &str,
        worker_id: &str,
        report_json: &str,
        now_ms: i64,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE provider_tests SET state = $2, report_json = $3, finished_at_ms = $4 \
             WHERE id = $1 AND state = $5 AND claimed_by = $6",
        )
        .bind(id)
        .bind(ProviderTestState::Done.as_str())
        .bind(report_json)
        .bind(now_ms)
        .bind(ProviderTestState::Running.as_str())
        .bind(worker_id)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Marks a request no pool claimed as never to run; false when a pool claimed it
    /// meanwhile (it runs, and its report will come).
    pub async fn abandon_provider_test(&self, id: &str, now_ms: i64) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE provider_tests SET state = $2, finished_at_ms = $3 \
             WHERE id = $1 AND state = $4",
        )
        .bind(id)
        .bind(ProviderTestState::Abandoned.as_str())
        .bind(now_ms)
        .bind(ProviderTestState::Queued.as_str())
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Removes the requests asked for before `before_ms`, whatever their state: none
    /// is waited for that long, so they only record what ran.
    pub async fn delete_provider_tests_before(&self, before_ms: i64) -> Result<u64, StoreError> {
        Ok(
            sqlx::query("DELETE FROM provider_tests WHERE created_at_ms < $1")
                .bind(before_ms)
                .execute(&self.pool)
                .await?
                .rows_affected(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_reads_back_from_its_word() {
        for state in ProviderTestState::ALL {
            assert_eq!(ProviderTestState::parse(state.as_str()), Some(state));
            assert_eq!(state.to_string(), state.as_str());
        }
        assert_eq!(ProviderTestState::parse("finished"), None);
    }
}
