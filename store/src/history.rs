//! How long the database keeps what happened: the history retention (issue 45 point 6).
//!
//! Every create, change and delete leaves rows behind: the job, its tasks, their
//! attempts and output events, its documents, hook deliveries; a deleted cluster keeps
//! its row and all of that. Without an end the database grows with every operation
//! ever run. [`Store::prune_history`] removes, once older than the retention:
//! - deleted clusters, with everything that hangs off them (the foreign keys cascade:
//!   nodes, jobs, tasks, events, health, approval requests, rollout entries);
//! - the ended jobs of live clusters (with their tasks and events), except each
//!   cluster's latest job, which its page and a retry of a failed change read;
//! - hook deliveries that were delivered or gave up.
//!
//! It keeps what outlives a cluster on purpose: the cost ledger (the showback's months)
//! and terminal recordings. The audit log has a retention of its own, longer by default
//! ([`Store::prune_audit`]). A pass deletes in batches of
//! [`PRUNE_BATCH`] rows, each batch a short transaction of its own, and stops after
//! [`PRUNE_BATCHES`] of them, so a first pass over a big backlog never holds SQLite's
//! write turn for long; the next pass goes on from there.

use super::{Store, StoreError};

/// Rows one statement of a pass deletes at most (a job may take thousands of task
/// and event rows with it).
pub const PRUNE_BATCH: i64 = 100;
/// Batches per kind a pass runs at most.
pub const PRUNE_BATCHES: usize = 20;

/// What one pass removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    pub clusters: u64,
    pub jobs: u64,
    pub hook_deliveries: u64,
}

impl Pruned {
    pub fn is_empty(&self) -> bool {
        self.clusters + self.jobs + self.hook_deliveries == 0
    }
}

/// Deleted clusters whose deletion ended before the cutoff.
const OLD_DELETED_CLUSTERS: &str = "DELETE FROM clusters WHERE id IN ( \
     SELECT id FROM clusters WHERE state = 'deleted' AND updated_at_ms < $1 LIMIT $2)";

/// Ended jobs older than the cutoff that a later job of their cluster follows.
const OLD_JOBS: &str = "DELETE FROM jobs WHERE id IN ( \
     SELECT old.id FROM jobs old \
     WHERE old.state IN ('succeeded', 'failed', 'cancelled') AND old.finished_at_ms < $1 \
       AND EXISTS (SELECT 1 FROM jobs later WHERE later.cluster_id = old.cluster_id \
                   AND later.created_at_ms > old.created_at_ms) \
     LIMIT $2)";

/// Hook deliveries that ended (sent, or given up on) before the cutoff.
const OLD_HOOK_DELIVERIES: &str = "DELETE FROM hook_deliveries WHERE id IN ( \
     SELECT id FROM hook_deliveries WHERE state IN ('delivered', 'failed') \
       AND created_at_ms < $1 LIMIT $2)";

/// Audit entries written before the cutoff.
const OLD_AUDIT_ENTRIES: &str = "DELETE FROM audit_log WHERE id IN ( \
     SELECT id FROM audit_log WHERE at_ms < $1 LIMIT $2)";

impl Store {
    /// Removes the audit entries written before `cutoff_ms`; how many.
    pub async fn prune_audit(&self, cutoff_ms: i64) -> Result<u64, StoreError> {
        self.delete_in_batches(OLD_AUDIT_ENTRIES, cutoff_ms).await
    }

    /// Removes the history that ended before `cutoff_ms` (see the module's overview).
    pub async fn prune_history(&self, cutoff_ms: i64) -> Result<Pruned, StoreError> {
        Ok(Pruned {
            clusters: self
                .delete_in_batches(OLD_DELETED_CLUSTERS, cutoff_ms)
                .await?,
            jobs: self.delete_in_batches(OLD_JOBS, cutoff_ms).await?,
            hook_deliveries: self
                .delete_in_batches(OLD_HOOK_DELIVERIES, cutoff_ms)
                .await?,
        })
    }

    /// Runs `statement` (`$1` the cutoff, `$2` the batch) until a batch comes out short
    /// or [`PRUNE_BATCHES`] ran; how many rows it deleted.
    async fn delete_in_batches(&self, statement: &str, cutoff_ms: i64) -> Result<u64, StoreError> {
        let mut deleted = 0;
        for _ in 0..PRUNE_BATCHES {
            let rows = {
                let _turn = self.write_turn().await;
                sqlx::query(statement)
                    .bind(cutoff_ms)
                    .bind(PRUNE_BATCH)
                    .execute(&self.pool)
                    .await?
                    .rows_affected()
            };
            deleted += rows;
            if rows < PRUNE_BATCH.unsigned_abs() {
                break;
            }
        }
        Ok(deleted)
    }
}
