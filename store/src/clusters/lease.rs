//! A cluster's lease marks, each written inside the transaction of what it goes with
//! (docs/day-2.md, "Leases that warn and forgive"): the stop mark with the janitor's stop
//! job, its clearing with the extension's start job, and each warning with its hook
//! deliveries. Every write is conditional on the lease being as the caller saw it, so
//! several janitors act once.

use api_types::LeaseWarning;
use sqlx::{Any, Transaction};

use crate::hooks::LeaseNotice;
use crate::StoreError;

/// What a change's submission records of the lease, in its own transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseMark {
    /// The janitor's stop at the end of the lease `expires_ms`.
    Stop { expires_ms: i64, deletes_at_ms: i64 },
    /// The start of a lease-stopped cluster whose lease is extended to `until_ms`.
    Resume { until_ms: i64 },
}

/// Writes `mark` inside `tx`; false when the cluster is no longer as the mark expects
/// (another janitor stopped it, its lease moved, or it is not stopped any more).
pub async fn write_mark(
    tx: &mut Transaction<'static, Any>,
    cluster_id: &str,
    mark: LeaseMark,
) -> Result<bool, StoreError> {
    let done = match mark {
        LeaseMark::Stop {
            expires_ms,
            deletes_at_ms,
        } => {
            sqlx::query(
                "UPDATE clusters SET lease_deletes_at_ms = $2 WHERE id = $1 \
                 AND lease_deletes_at_ms IS NULL AND lease_expires_ms = $3",
            )
            .bind(cluster_id)
            .bind(deletes_at_ms)
            .bind(expires_ms)
            .execute(&mut **tx)
            .await?
        }
        LeaseMark::Resume { until_ms } => {
            sqlx::query(
                "UPDATE clusters SET lease_expires_ms = $2, lease_deletes_at_ms = NULL, \
                 lease_warned = NULL WHERE id = $1 AND lease_deletes_at_ms IS NOT NULL",
            )
            .bind(cluster_id)
            .bind(until_ms)
            .execute(&mut **tx)
            .await?
        }
    };
    Ok(done.rows_affected() == 1)
}

/// When the cluster's lease stopped it and it goes, read inside `tx`.
pub async fn deletes_at(
    tx: &mut Transaction<'static, Any>,
    cluster_id: &str,
) -> Result<Option<i64>, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT lease_deletes_at_ms FROM clusters WHERE id = $1")
            .bind(cluster_id)
            .fetch_optional(&mut **tx)
            .await?
            .flatten(),
    )
}

/// Records inside `tx` that `notice`'s warning was sent, when the lease still ends at
/// its time, was last warned with `sent_before` and is not stopped; false otherwise
/// (another janitor sent it, or the lease moved).
pub async fn mark_warned(
    tx: &mut Transaction<'static, Any>,
    cluster_id: &str,
    notice: LeaseNotice,
    sent_before: Option<LeaseWarning>,
) -> Result<bool, StoreError> {
    let done = sqlx::query(
        "UPDATE clusters SET lease_warned = $2 WHERE id = $1 AND lease_expires_ms = $3 \
         AND COALESCE(lease_warned, '') = $4 AND lease_deletes_at_ms IS NULL",
    )
    .bind(cluster_id)
    .bind(notice.warning.as_str())
    .bind(notice.expires_ms)
    .bind(sent_before.map_or("", LeaseWarning::as_str))
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}
