//! A user's hand on a job: cancel it, or retry it from the point of failure. Both
//! are safe to repeat: a second call finds the job already where it should be.

use super::complete::finish_cancel_if_idle;
use super::{begin_write, lock_job, JobId, JobState, Queue, QueueError};

impl Queue {
    /// Stops a queued or running job: unclaimed ready tasks are cancelled, running ones
    /// are told to stop at their next heartbeat, and the job is `cancelled` once none
    /// runs (`cancelling` until then). Returns the job's state afterwards.
    pub async fn cancel_job(&self, job_id: &JobId, now_ms: i64) -> Result<JobState, QueueError> {
        let (_turn, mut tx) = begin_write(&self.store).await?;
        let state = lock_job(&self.store, &mut tx, job_id.as_str()).await?;
        if !state.is_active() {
            // Already cancelling/cancelled, or finished: nothing to stop.
            return Ok(state);
        }
        sqlx::query("UPDATE jobs SET state = 'cancelling' WHERE id = $1")
            .bind(job_id.as_str())
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "UPDATE tasks SET state = 'cancelled', finished_at_ms = $2 \
             WHERE job_id = $1 AND state = 'ready'",
        )
        .bind(job_id.as_str())
        .bind(now_ms)
        .execute(&mut *tx)
        .await?;
        let state = finish_cancel_if_idle(&mut tx, job_id.as_str(), now_ms).await?;
        tx.commit().await?;
        self.announce([job_id.as_str()]).await;
        Ok(state)
    }

    /// Resumes a failed or cancelled job where it stopped: failed and cancelled tasks,
    /// and tasks whose prerequisites are all done, become ready with fresh attempts.
    /// Succeeded tasks are not run again. Returns the job's state afterwards.
    pub async fn retry_job(&self, job_id: &JobId, now_ms: i64) -> Result<JobState, QueueError> {
        let (_turn, mut tx) = begin_write(&self.store).await?;
        let state = lock_job(&self.store, &mut tx, job_id.as_str()).await?;
        match state {
            JobState::Failed | JobState::Cancelled => {}
            // A repeated retry, or nothing to retry.
            JobState::Queued | JobState::Running | JobState::Succeeded => return Ok(state),
            JobState::Cancelling => {
                return Err(QueueError::InvalidState {
                    job_id: job_id.clone(),
                    state,
                    action: "retry while tasks are still stopping",
                })
            }
        }
        sqlx::query(
            "UPDATE tasks SET state = 'ready', tries = 0, not_before_ms = $2, error = NULL, \
             finished_at_ms = NULL \
             WHERE job_id = $1 AND pending_prereqs = 0 \
               AND state IN ('failed', 'cancelled', 'pending')",
        )
        .bind(job_id.as_str())
        .bind(now_ms)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE jobs SET state = 'running', error = NULL, finished_at_ms = NULL WHERE id = $1",
        )
        .bind(job_id.as_str())
        .execute(&mut *tx)
        .await?;
        super::effects::apply(&mut tx, job_id.as_str(), JobState::Running, now_ms).await?;
        tx.commit().await?;
        self.announce([job_id.as_str()]).await;
        Ok(JobState::Running)
    }
}
