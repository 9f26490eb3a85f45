//! What a rollout does next, decided from what its rows and its clusters' jobs and
//! health checks say: pure, so every case is a row of a table test. The I/O beside it
//! ([`super`]) reads the inputs and applies the steps.

use api_types::{RolloutClusterState, RolloutState, ServiceHealth};

/// How long a cluster's health checks may take to report after its upgrade job ended
/// before the silence counts as red.
pub const HEALTH_WAIT_MS: i64 = 180_000;

/// What became of a running cluster's upgrade, as far as can be told now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observed {
    /// Its job runs, or its health checks have not all reported since it ended.
    Working,
    /// Its job succeeded and no health check is red.
    Passed,
    /// Its job failed (or was cancelled or is gone), or a health check is red.
    Failed(String),
}

/// One cluster of the rollout, in position order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub state: RolloutClusterState,
    /// For a running cluster: what became of its upgrade.
    pub observed: Option<Observed>,
}

/// One thing to do; indices are positions in the entries given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Succeed(usize),
    Fail(usize, String),
    Start(usize),
    Untouch(usize),
    /// The rollout stops starting clusters (it waits for the running ones).
    Stopping(String),
    /// The rollout is over.
    End(RolloutState),
}

/// The steps for a rollout in `state` with `entries`, starting at most `max_parallel`
/// upgrades at once. The first failure (in position order) gives the stop reason.
pub fn decide(state: RolloutState, max_parallel: usize, entries: &[Entry]) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut stopping = state == RolloutState::Stopping;
    let mut working = 0;
    for (index, entry) in entries.iter().enumerate() {
        if entry.state != RolloutClusterState::Running {
            continue;
        }
        match &entry.observed {
            Some(Observed::Passed) => steps.push(Step::Succeed(index)),
            Some(Observed::Failed(reason)) => {
                steps.push(Step::Fail(index, reason.clone()));
                if !stopping {
                    steps.push(Step::Stopping(reason.clone()));
                    stopping = true;
                }
            }
            Some(Observed::Working) | None => working += 1,
        }
    }
    let pending = entries
        .iter()
        .enumerate()
        .filter(|(_, entry)| entry.state == RolloutClusterState::Pending)
        .map(|(index, _)| index);
    if stopping {
        steps.extend(pending.map(Step::Untouch));
        if working == 0 {
            steps.push(Step::End(RolloutState::Stopped));
        }
        return steps;
    }
    let mut pending = pending.peekable();
    let more = pending.peek().is_some();
    let starts: Vec<usize> = pending.take(max_parallel.saturating_sub(working)).collect();
    if working == 0 && !more {
        steps.push(Step::End(RolloutState::Succeeded));
    }
    steps.extend(starts.into_iter().map(Step::Start));
    steps
}

/// One health check's last result: what (service on node), health, when it ran.
pub type Check = (String, ServiceHealth, Option<i64>);

/// Whether a cluster's health checks are red after its upgrade job ended at
/// `finished_ms`: each check is `(service on node, health, checked_at_ms)`. Only checks
/// run since the job ended count; a cluster without checks passes.
pub fn health(checks: &[Check], finished_ms: i64, now_ms: i64) -> Observed {
    let fresh = |at: &Option<i64>| at.is_some_and(|at| at >= finished_ms);
    let red: Vec<&str> = checks
        .iter()
        .filter(|(_, health, at)| *health == ServiceHealth::Down && fresh(at))
        .map(|(what, _, _)| what.as_str())
        .collect();
    if !red.is_empty() {
        return Observed::Failed(format!(
            "health checks red after the upgrade: {}",
            red.join(", ")
        ));
    }
    if checks.iter().all(|(_, _, at)| fresh(at)) {
        return Observed::Passed;
    }
    if now_ms - finished_ms > HEALTH_WAIT_MS {
        return Observed::Failed(format!(
            "health checks did not report within {} s of the upgrade",
            HEALTH_WAIT_MS / 1000
        ));
    }
    Observed::Working
}

#[cfg(test)]
mod tests {
    use super::*;
    use RolloutClusterState as C;

    /// Name, rollout state, max_parallel, entries, expected steps.
    type Case = (&'static str, RolloutState, usize, Vec<Entry>, Vec<Step>);
    /// Name, checks, now, expected verdict.
    type HealthCase = (&'static str, Vec<Check>, i64, Observed);

    fn entry(state: RolloutClusterState) -> Entry {
        Entry {
            state,
            observed: None,
        }
    }

    fn running(observed: Observed) -> Entry {
        Entry {
            state: C::Running,
            observed: Some(observed),
        }
    }

    #[test]
    fn the_next_step_follows_from_the_rows() {
        let failed = || Observed::Failed("job failed".to_owned());
        let cases: Vec<Case> = vec![
            (
                "starts the first N pending in order",
                RolloutState::Running,
                2,
                vec![
                    entry(C::SkippedPinned),
                    entry(C::Pending),
                    entry(C::Pending),
                    entry(C::Pending),
                ],
                vec![Step::Start(1), Step::Start(2)],
            ),
            (
                "waits while N run",
                RolloutState::Running,
                1,
                vec![running(Observed::Working), entry(C::Pending)],
                vec![],
            ),
            (
                "a passed cluster frees its slot for the next",
                RolloutState::Running,
                1,
                vec![running(Observed::Passed), entry(C::Pending)],
                vec![Step::Succeed(0), Step::Start(1)],
            ),
            (
                "the last one passing ends it",
                RolloutState::Running,
                1,
                vec![
                    entry(C::Succeeded),
                    entry(C::SkippedPinned),
                    running(Observed::Passed),
                ],
                vec![Step::Succeed(2), Step::End(RolloutState::Succeeded)],
            ),
            (
                "nothing but pinned clusters ends at once",
                RolloutState::Running,
                1,
                vec![entry(C::SkippedPinned)],
                vec![Step::End(RolloutState::Succeeded)],
            ),
            (
                "a failure stops it and leaves the rest untouched",
                RolloutState::Running,
                1,
                vec![
                    running(failed()),
                    entry(C::Pending),
                    entry(C::SkippedPinned),
                    entry(C::Pending),
                ],
                vec![
                    Step::Fail(0, "job failed".to_owned()),
                    Step::Stopping("job failed".to_owned()),
                    Step::Untouch(1),
                    Step::Untouch(3),
                    Step::End(RolloutState::Stopped),
                ],
            ),
            (
                "a failure waits for the others already running",
                RolloutState::Running,
                3,
                vec![
                    running(Observed::Working),
                    running(failed()),
                    entry(C::Pending),
                ],
                vec![
                    Step::Fail(1, "job failed".to_owned()),
                    Step::Stopping("job failed".to_owned()),
                    Step::Untouch(2),
                ],
            ),
            (
                "stopping ends when the last running one finishes, whichever way",
                RolloutState::Stopping,
                3,
                vec![
                    running(Observed::Passed),
                    entry(C::Failed),
                    entry(C::Untouched),
                ],
                vec![Step::Succeed(0), Step::End(RolloutState::Stopped)],
            ),
            (
                "stopping starts nothing",
                RolloutState::Stopping,
                3,
                vec![running(Observed::Working), entry(C::Failed)],
                vec![],
            ),
            (
                "a second failure while stopping keeps the first reason",
                RolloutState::Stopping,
                3,
                vec![entry(C::Failed), running(failed())],
                vec![
                    Step::Fail(1, "job failed".to_owned()),
                    Step::End(RolloutState::Stopped),
                ],
            ),
        ];
        for (name, state, max_parallel, entries, expected) in cases {
            assert_eq!(decide(state, max_parallel, &entries), expected, "{name}");
        }
    }

    #[test]
    fn health_after_the_job_decides_red_or_green() {
        let check = |health, at| ("web on node 1".to_owned(), health, at);
        let cases: Vec<HealthCase> = vec![
            ("no checks pass", vec![], 1_000, Observed::Passed),
            (
                "all up since the job",
                vec![check(ServiceHealth::Up, Some(150))],
                1_000,
                Observed::Passed,
            ),
            (
                "a result from before the job waits",
                vec![check(ServiceHealth::Up, Some(50))],
                1_000,
                Observed::Working,
            ),
            (
                "never checked waits",
                vec![check(ServiceHealth::Unknown, None)],
                1_000,
                Observed::Working,
            ),
            (
                "red from before the job does not count",
                vec![check(ServiceHealth::Down, Some(50))],
                1_000,
                Observed::Working,
            ),
            (
                "red since the job fails",
                vec![
                    check(ServiceHealth::Up, Some(150)),
                    check(ServiceHealth::Down, Some(200)),
                ],
                1_000,
                Observed::Failed("health checks red after the upgrade: web on node 1".to_owned()),
            ),
            (
                "silence past the wait fails",
                vec![check(ServiceHealth::Up, Some(50))],
                100 + HEALTH_WAIT_MS + 1,
                Observed::Failed(
                    "health checks did not report within 180 s of the upgrade".to_owned(),
                ),
            ),
        ];
        for (name, checks, now, expected) in cases {
            assert_eq!(health(&checks, 100, now), expected, "{name}");
        }
    }
}
