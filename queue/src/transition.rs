//! The queue's state transition as a pure decision: given how an attempt ended, how
//! many tries its task used, its retry policy and its job's state, what happens next
//! to the task (and when) and to the job.
//!
//! [`super::complete`] reads the inputs under its locks, asks [`next`] (or
//! [`after_success`] once a success is counted) and writes what the answer says; no
//! decision is taken in the SQL code. Time is passed in, so backoff is a plain sum.

use super::{JobState, OutcomeKind, TaskState, DEFER_MS};

/// Backoff doublings stop here: past it the delay would only overflow.
const MAX_DOUBLINGS: i64 = 20;

/// How a task may be retried (fixed when its job was submitted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct RetryPolicy {
    /// Only an idempotent task runs again after a failure or a lost lease.
    pub idempotent: bool,
    pub max_attempts: i64,
    /// Delay before the second try; doubled for each further one.
    pub backoff_ms: i64,
}

/// Everything the decision depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Ended {
    pub outcome: OutcomeKind,
    /// Tries used so far, this one included.
    pub tries: i64,
    pub policy: RetryPolicy,
    /// The job's state when it was locked (a cancel request makes it `cancelling`).
    pub job_state: JobState,
    /// The worker handed the task back as it stopped: a retry then waits for no backoff,
    /// since nothing went wrong with the step itself.
    pub handed_back: bool,
    pub now_ms: i64,
}

/// What happens to the job as a consequence of one task's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum JobStep {
    /// It stays as it is.
    Keep,
    /// It fails with the task.
    Fail,
    /// It succeeds: that was its last task.
    Succeed,
    /// It is cancelling, and becomes cancelled if none of its tasks runs any more
    /// (which only a read can tell).
    FinishCancelIfIdle,
}

/// What happens to the task next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Transition {
    /// Back to the queue as if never claimed (no attempt used up), claimable from
    /// `not_before_ms`; the job is untouched.
    Defer { not_before_ms: i64 },
    /// Ready again for another attempt from `not_before_ms`; the job is untouched.
    Retry { not_before_ms: i64 },
    /// The task succeeded: the job's next step depends on its counts, see
    /// [`after_success`].
    Succeed,
    /// The task failed.
    Fail { job: JobStep },
    /// The task was cancelled with its job.
    Cancel { job: JobStep },
}

impl Transition {
    /// The state the task is left in.
    pub fn task_state(self) -> TaskState {
        match self {
            Self::Defer { .. } | Self::Retry { .. } => TaskState::Ready,
            Self::Succeed => TaskState::Succeeded,
            Self::Fail { .. } => TaskState::Failed,
            Self::Cancel { .. } => TaskState::Cancelled,
        }
    }
}

/// Decides what follows the end of an attempt.
pub(super) fn next(ended: Ended) -> Transition {
    let active = ended.job_state.is_active();
    // A task that ends (not retried) in a cancelling job may be the last one it waited for.
    let ended_job = if active {
        JobStep::Fail
    } else if ended.job_state == JobState::Cancelling {
        JobStep::FinishCancelIfIdle
    } else {
        JobStep::Keep
    };
    let cancelled_job = if ended.job_state == JobState::Cancelling {
        JobStep::FinishCancelIfIdle
    } else {
        JobStep::Keep
    };
    match ended.outcome {
        OutcomeKind::Succeeded => Transition::Succeed,
        // A deferral only makes sense while the job goes on; under a cancel it ends
        // the task like a stop does.
        OutcomeKind::Deferred if active => Transition::Defer {
            not_before_ms: ended.now_ms.saturating_add(DEFER_MS),
        },
        OutcomeKind::Stopped | OutcomeKind::Deferred if !active => {
            Transition::Cancel { job: cancelled_job }
        }
        // Stopped without a cancel (say, the worker shut down mid-step): the step's
        // effect is unknown, so the job fails instead of waiting forever.
        OutcomeKind::Stopped | OutcomeKind::Deferred => Transition::Fail { job: ended_job },
        OutcomeKind::Failed
            if active && ended.policy.idempotent && ended.tries < ended.policy.max_attempts =>
        {
            Transition::Retry {
                not_before_ms: retry_at(&ended),
            }
        }
        OutcomeKind::Failed => Transition::Fail { job: ended_job },
    }
}

/// When a retried task may be claimed: after the backoff doubled for each try
/// beyond the first, or at once for a task handed back.
fn retry_at(ended: &Ended) -> i64 {
    if ended.handed_back {
        return ended.now_ms;
    }
    let doublings = ended.tries.saturating_sub(1).clamp(0, MAX_DOUBLINGS);
    let delay = ended.policy.backoff_ms.saturating_mul(1_i64 << doublings);
    ended.now_ms.saturating_add(delay)
}

/// The job's next step once a task of it succeeded (or was passed over), given its
/// state when locked and its succeeded and total task counts after this one.
pub(super) fn after_success(job_state: JobState, succeeded: i64, total: i64) -> JobStep {
    if succeeded >= total && job_state.is_active() {
        JobStep::Succeed
    } else if job_state == JobState::Cancelling {
        JobStep::FinishCancelIfIdle
    } else {
        JobStep::Keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_000_000;

    fn policy(idempotent: bool, max_attempts: i64, backoff_ms: i64) -> RetryPolicy {
        RetryPolicy {
            idempotent,
            max_attempts,
            backoff_ms,
        }
    }

    #[test]
    fn next_covers_every_outcome_policy_and_job_state() {
        use JobState::{Cancelled, Cancelling, Failed, Queued, Running, Succeeded};
        use OutcomeKind as O;
        let retryable = policy(true, 3, 1_000);
        let once = policy(false, 3, 1_000);
        // (name, outcome, tries, policy, job state, handed back, expected)
        #[rustfmt::skip]
        let cases = [
            ("success", O::Succeeded, 1, retryable, Running, false, Transition::Succeed),
            ("success under cancel", O::Succeeded, 1, retryable, Cancelling, false, Transition::Succeed),
            ("defer queued", O::Deferred, 1, retryable, Queued, false, Transition::Defer { not_before_ms: NOW + DEFER_MS }),
            ("defer running", O::Deferred, 3, once, Running, false, Transition::Defer { not_before_ms: NOW + DEFER_MS }),
            ("defer under cancel", O::Deferred, 1, retryable, Cancelling, false, Transition::Cancel { job: JobStep::FinishCancelIfIdle }),
            ("defer after cancel", O::Deferred, 1, retryable, Cancelled, false, Transition::Cancel { job: JobStep::Keep }),
            ("defer after failure", O::Deferred, 1, retryable, Failed, false, Transition::Cancel { job: JobStep::Keep }),
            ("stop under cancel", O::Stopped, 1, retryable, Cancelling, false, Transition::Cancel { job: JobStep::FinishCancelIfIdle }),
            ("stop after failure", O::Stopped, 1, retryable, Failed, false, Transition::Cancel { job: JobStep::Keep }),
            ("stop after success", O::Stopped, 1, retryable, Succeeded, false, Transition::Cancel { job: JobStep::Keep }),
            ("stop without cancel", O::Stopped, 1, retryable, Running, false, Transition::Fail { job: JobStep::Fail }),
            ("stop without cancel, queued", O::Stopped, 1, retryable, Queued, false, Transition::Fail { job: JobStep::Fail }),
            ("first failure retries", O::Failed, 1, retryable, Running, false, Transition::Retry { not_before_ms: NOW + 1_000 }),
            ("second failure doubles", O::Failed, 2, retryable, Queued, false, Transition::Retry { not_before_ms: NOW + 2_000 }),
            ("handed back retries now", O::Failed, 2, retryable, Running, true, Transition::Retry { not_before_ms: NOW }),
            ("last attempt fails the job", O::Failed, 3, retryable, Running, false, Transition::Fail { job: JobStep::Fail }),
            ("past the last attempt", O::Failed, 4, retryable, Running, false, Transition::Fail { job: JobStep::Fail }),
            ("not idempotent", O::Failed, 1, once, Running, false, Transition::Fail { job: JobStep::Fail }),
            ("handed back, not idempotent", O::Failed, 1, once, Running, true, Transition::Fail { job: JobStep::Fail }),
            ("one attempt allowed", O::Failed, 1, policy(true, 1, 1_000), Running, false, Transition::Fail { job: JobStep::Fail }),
            ("failure under cancel", O::Failed, 1, retryable, Cancelling, false, Transition::Fail { job: JobStep::FinishCancelIfIdle }),
            ("failure after failure", O::Failed, 1, retryable, Failed, false, Transition::Fail { job: JobStep::Keep }),
            ("failure after cancel", O::Failed, 1, retryable, Cancelled, false, Transition::Fail { job: JobStep::Keep }),
        ];
        for (name, outcome, tries, policy, job_state, handed_back, expected) in cases {
            let ended = Ended {
                outcome,
                tries,
                policy,
                job_state,
                handed_back,
                now_ms: NOW,
            };
            assert_eq!(next(ended), expected, "{name}");
        }
    }

    #[test]
    fn retry_backoff_doubles_then_stops_doubling_and_saturates() {
        // (tries, backoff ms, expected delay after NOW)
        let cases = [
            (0, 1_000, 1_000),
            (1, 1_000, 1_000),
            (2, 1_000, 2_000),
            (3, 1_000, 4_000),
            (11, 1_000, 1_000 << 10),
            (21, 1, 1 << 20),
            (22, 1, 1 << 20),
            (1_000, 1, 1 << 20),
            (1, 0, 0),
            (5, 0, 0),
        ];
        for (tries, backoff_ms, delay) in cases {
            let ended = Ended {
                outcome: OutcomeKind::Failed,
                tries,
                policy: policy(true, i64::MAX, backoff_ms),
                job_state: JobState::Running,
                handed_back: false,
                now_ms: NOW,
            };
            let expected = Transition::Retry {
                not_before_ms: NOW + delay,
            };
            assert_eq!(next(ended), expected, "tries {tries}, backoff {backoff_ms}");
        }
        // A delay past the end of time waits forever rather than wrapping around.
        let huge = Ended {
            outcome: OutcomeKind::Failed,
            tries: 3,
            policy: policy(true, 10, i64::MAX / 2),
            job_state: JobState::Running,
            handed_back: false,
            now_ms: NOW,
        };
        let forever = Transition::Retry {
            not_before_ms: i64::MAX,
        };
        assert_eq!(next(huge), forever);
    }

    #[test]
    fn task_state_follows_the_transition() {
        let cases = [
            (Transition::Defer { not_before_ms: 1 }, TaskState::Ready),
            (Transition::Retry { not_before_ms: 1 }, TaskState::Ready),
            (Transition::Succeed, TaskState::Succeeded),
            (Transition::Fail { job: JobStep::Keep }, TaskState::Failed),
            (Transition::Fail { job: JobStep::Fail }, TaskState::Failed),
            (
                Transition::Cancel { job: JobStep::Keep },
                TaskState::Cancelled,
            ),
        ];
        for (transition, expected) in cases {
            assert_eq!(transition.task_state(), expected, "{transition:?}");
        }
    }

    #[test]
    fn after_success_finishes_active_jobs_and_idle_cancels() {
        use JobState::{Cancelled, Cancelling, Failed, Queued, Running, Succeeded};
        // (job state, succeeded, total, expected)
        let cases = [
            (Running, 3, 3, JobStep::Succeed),
            (Queued, 1, 1, JobStep::Succeed),
            (Running, 4, 3, JobStep::Succeed),
            (Running, 2, 3, JobStep::Keep),
            (Queued, 0, 3, JobStep::Keep),
            (Cancelling, 3, 3, JobStep::FinishCancelIfIdle),
            (Cancelling, 1, 3, JobStep::FinishCancelIfIdle),
            (Failed, 3, 3, JobStep::Keep),
            (Cancelled, 3, 3, JobStep::Keep),
            (Succeeded, 3, 3, JobStep::Keep),
        ];
        for (job_state, succeeded, total, expected) in cases {
            assert_eq!(
                after_success(job_state, succeeded, total),
                expected,
                "{job_state:?} {succeeded}/{total}"
            );
        }
    }
}
