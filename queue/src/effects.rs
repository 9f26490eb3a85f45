//! What a job's progress does to its cluster: the cluster's state while the job runs,
//! after it succeeds (with the layout, and for an upgrade the catalog snapshot, it
//! then has) and after it fails or is cancelled.
//!
//! Stored on the job at submit and applied inside the very transaction that moves the
//! job, so a crash can never leave a finished job beside a cluster still "creating".

use sqlx::{Any, Row, Transaction};

use api_types::ClusterState;

use super::{JobState, QueueError};

/// The cluster side of a job, given at submit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterEffects {
    pub running: ClusterState,
    pub succeeded: ClusterState,
    pub failed: ClusterState,
    /// The layout before the job (kept so a rollback knows where to go back to).
    pub from_layout_json: Option<String>,
    /// The layout the cluster has once the job succeeded.
    pub to_layout_json: Option<String>,
    /// The user who asked for the job.
    pub requested_by: Option<String>,
    /// A forced delete or a node replacement: teardown steps (service stop and
    /// remove) that fail are reported and passed over, so that the nodes are deleted
    /// anyway (a node being replaced may already be gone).
    pub forced: bool,
    /// The catalog snapshot (a Coopr bundle) the job's steps run, stops aside, and the
    /// cluster keeps once the job succeeded; `None`: the cluster's own (an upgrade
    /// moves a cluster to new definitions this way).
    pub catalog_json: Option<String>,
    /// The definitions the job's stop steps run; `None`: the cluster's own (a rollback
    /// of an upgrade stops what the upgrade started with the upgrade's definitions).
    pub stop_catalog_json: Option<String>,
}

/// Moves the job's cluster along with the job entering `state`; jobs without effects
/// (plain queue use) leave clusters alone.
pub(super) async fn apply(
    tx: &mut Transaction<'static, Any>,
    job_id: &str,
    state: JobState,
    now_ms: i64,
) -> Result<(), QueueError> {
    let row = sqlx::query(
        "SELECT j.cluster_id, j.cluster_state_running, j.cluster_state_succeeded, \
         j.cluster_state_failed, d.to_layout_json, d.catalog_json \
         FROM jobs j LEFT JOIN job_documents d ON d.job_id = j.id WHERE j.id = $1",
    )
    .bind(job_id)
    .fetch_optional(&mut **tx)
    .await?
    .ok_or_else(|| QueueError::NotFound(format!("job {job_id}")))?;
    let column = match state {
        JobState::Queued | JobState::Running => "cluster_state_running",
        JobState::Succeeded => "cluster_state_succeeded",
        JobState::Failed | JobState::Cancelled => "cluster_state_failed",
        // The job is still stopping; the cluster changes when it has stopped.
        JobState::Cancelling => return Ok(()),
    };
    let Some(cluster_state) = row.try_get::<Option<String>, _>(column)? else {
        return Ok(());
    };
    let cluster_id: String = row.try_get("cluster_id")?;
    let (layout, catalog): (Option<String>, Option<String>) = if state == JobState::Succeeded {
        (row.try_get("to_layout_json")?, row.try_get("catalog_json")?)
    } else {
        (None, None)
    };
    sqlx::query(
        "UPDATE clusters SET state = $2, layout_json = COALESCE($3, layout_json), \
         updated_at_ms = $4 WHERE id = $1",
    )
    .bind(&cluster_id)
    .bind(&cluster_state)
    .bind(layout)
    .bind(now_ms)
    .execute(&mut **tx)
    .await?;
    if let Some(catalog) = catalog {
        // The version tells cached copies of the snapshot that they are stale.
        sqlx::query(
            "UPDATE clusters SET catalog_json = $2, catalog_version = catalog_version + 1 \
             WHERE id = $1",
        )
        .bind(&cluster_id)
        .bind(catalog)
        .execute(&mut **tx)
        .await?;
    }
    if state.is_finished() {
        // The cost ledger follows the committed layout (docs/cost.md).
        store::cost::reprice_in(tx, &cluster_id, now_ms).await?;
    }
    Ok(())
}
