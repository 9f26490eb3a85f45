//! How long the rest of a running job should take, from what it has shown so far.
//!
//! Each step still to run is expected to take as long as the finished steps of the
//! same action and service took on average in this job (else those of the same action,
//! else any finished step); a running step, that minus what it has run already. The
//! time left is the longest chain of such steps through the task graph (the critical
//! path), since steps on different nodes run side by side. It ignores how many steps
//! the workers run at once, so on a cluster wider than the worker slots it is a lower
//! bound. Before any step has finished there is nothing to go by: no estimate.

use std::collections::HashMap;

use api_types::{TaskAction, TaskState, TaskView};
use domain::plan::TaskDag;

/// Milliseconds the job should still take at `now_ms`, if anything has finished yet
/// to go by and something is left to do.
pub fn time_left_ms(dag: &TaskDag, tasks: &[TaskView], now_ms: i64) -> Option<i64> {
    let took = Durations::of(tasks)?;
    let by_number: HashMap<u32, &TaskView> = tasks.iter().map(|task| (task.number, task)).collect();
    // Ids are topological: every predecessor's finish is known before its successor.
    let mut finish = vec![0i64; dag.len()];
    let mut longest = 0;
    let mut left_to_do = false;
    for planned in dag.tasks() {
        let Some(task) = by_number.get(&planned.id.0) else {
            continue;
        };
        let own = match task.state {
            TaskState::Succeeded
            | TaskState::Skipped
            | TaskState::Failed
            | TaskState::Cancelled => 0,
            TaskState::Running => {
                let ran = task.started_at_ms.map_or(0, |start| now_ms - start);
                (took.expected(task) - ran).max(0)
            }
            TaskState::Pending | TaskState::Ready => took.expected(task),
        };
        left_to_do |= !task.state.is_finished();
        let ready_at = planned
            .after
            .iter()
            .map(|before| finish[before.index()])
            .max()
            .unwrap_or(0);
        finish[planned.id.index()] = ready_at + own;
        longest = longest.max(finish[planned.id.index()]);
    }
    left_to_do.then_some(longest)
}

/// Mean durations of the finished steps, by (action, service), by action, and overall.
struct Durations {
    by_step: HashMap<(TaskAction, Option<String>), (i64, i64)>,
    by_action: HashMap<TaskAction, (i64, i64)>,
    overall: (i64, i64),
}

impl Durations {
    fn of(tasks: &[TaskView]) -> Option<Durations> {
        let mut took = Durations {
            by_step: HashMap::new(),
            by_action: HashMap::new(),
            overall: (0, 0),
        };
        for task in tasks
            .iter()
            .filter(|task| task.state == TaskState::Succeeded)
        {
            let (Some(start), Some(end)) = (task.started_at_ms, task.finished_at_ms) else {
                continue;
            };
            let ms = (end - start).max(0);
            let add = |sum: &mut (i64, i64)| {
                sum.0 += ms;
                sum.1 += 1;
            };
            add(took
                .by_step
                .entry((task.action, task.service.clone()))
                .or_default());
            add(took.by_action.entry(task.action).or_default());
            add(&mut took.overall);
        }
        (took.overall.1 > 0).then_some(took)
    }

    fn expected(&self, task: &TaskView) -> i64 {
        let mean = |(sum, count): (i64, i64)| sum / count.max(1);
        self.by_step
            .get(&(task.action, task.service.clone()))
            .or_else(|| self.by_action.get(&task.action))
            .copied()
            .map_or_else(|| mean(self.overall), mean)
    }
}

#[cfg(test)]
mod tests {
    use domain::plan::{Action, Task, TaskId};

    use super::*;

    /// Node 1 then node 2 in a chain, and node 3 on its own: create → start each.
    fn dag() -> TaskDag {
        let task = |id: u32, node: u32, action: Action, after: &[u32]| Task {
            id: TaskId(id),
            node,
            service: (action == Action::Start).then(|| "web".parse().unwrap()),
            action,
            after: after.iter().map(|id| TaskId(*id)).collect(),
            stage: id,
        };
        let tasks = vec![
            task(0, 1, Action::Create, &[]),
            task(1, 1, Action::Start, &[0]),
            task(2, 2, Action::Create, &[]),
            task(3, 2, Action::Start, &[1, 2]),
            task(4, 3, Action::Create, &[]),
        ];
        serde_json::from_value(serde_json::json!({ "tasks": tasks })).unwrap()
    }

    fn view(
        number: u32,
        action: TaskAction,
        state: TaskState,
        ran: Option<(i64, i64)>,
    ) -> TaskView {
        TaskView {
            id: format!("t{number}"),
            number,
            node: 1,
            service: (action == TaskAction::Start).then(|| "web".to_owned()),
            action,
            state,
            attempts: 1,
            max_attempts: 3,
            started_at_ms: ran.map(|(start, _)| start),
            finished_at_ms: ran.and_then(|(_, end)| (end > 0).then_some(end)),
            error: None,
        }
    }

    #[test]
    fn the_longest_chain_of_what_is_left_at_the_pace_seen_so_far() {
        let tasks = vec![
            view(
                0,
                TaskAction::Create,
                TaskState::Succeeded,
                Some((0, 1_000)),
            ),
            view(1, TaskAction::Start, TaskState::Running, Some((1_000, 0))),
            view(
                2,
                TaskAction::Create,
                TaskState::Succeeded,
                Some((0, 3_000)),
            ),
            view(3, TaskAction::Start, TaskState::Pending, None),
            view(4, TaskAction::Create, TaskState::Running, Some((0, 0))),
        ];
        // No start has finished: a start is expected to take the overall mean (2 s).
        // Node 1's start has run 0.5 s of them; node 2's start follows it: 1.5 + 2 s.
        // Node 3's create (mean 2 s) has run 1.5 s: 0.5 s, off the critical path.
        assert_eq!(time_left_ms(&dag(), &tasks, 1_500), Some(3_500));
    }

    #[test]
    fn nothing_to_go_by_or_nothing_left_is_no_estimate() {
        let pending: Vec<TaskView> = (0..5)
            .map(|n| view(n, TaskAction::Create, TaskState::Pending, None))
            .collect();
        assert_eq!(time_left_ms(&dag(), &pending, 0), None);
        let done: Vec<TaskView> = (0..5)
            .map(|n| view(n, TaskAction::Create, TaskState::Succeeded, Some((0, 10))))
            .collect();
        assert_eq!(time_left_ms(&dag(), &done, 100), None);
    }
}
