//! How long a plan takes: Corral's ready-set schedule versus Coopr's stage barriers.
//!
//! Both assume unlimited workers and one task per node at a time. The DAG schedule
//! starts a task as soon as its `after` tasks are done (which already include the
//! previous task on its node), so its length is the DAG's longest path. The staged
//! schedule runs stage after stage, each as long as its slowest task.

use serde::{Deserialize, Serialize};

use super::{Action, Task, TaskDag, TaskId};

/// Both schedule lengths of one plan, in the caller's cost unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleComparison {
    pub dag_critical_path: u64,
    pub staged_critical_path: u64,
    pub stages: usize,
}

/// Every task costs one unit.
pub fn unit_cost(_: &Task) -> u64 {
    1
}

/// Costs per action, for estimates closer to real runs (node creation is slow,
/// configure is quick…).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionCosts {
    pub create: u64,
    pub confirm: u64,
    pub bootstrap: u64,
    pub install: u64,
    pub configure: u64,
    pub initialize: u64,
    pub start: u64,
    pub stop: u64,
    pub remove: u64,
    pub delete: u64,
}

impl ActionCosts {
    pub fn of(&self, action: Action) -> u64 {
        match action {
            Action::Create => self.create,
            Action::Confirm => self.confirm,
            Action::Bootstrap => self.bootstrap,
            Action::Install => self.install,
            Action::Configure => self.configure,
            Action::Initialize => self.initialize,
            Action::Start => self.start,
            Action::Stop => self.stop,
            Action::Remove => self.remove,
            Action::Delete => self.delete,
            // Stopping or starting a machine costs about what making it sure does.
            Action::Suspend | Action::Resume => self.confirm,
        }
    }
}

impl TaskDag {
    /// Length of the ready-set schedule: the longest path, weighting each task by
    /// `cost`.
    pub fn critical_path(&self, cost: impl Fn(&Task) -> u64) -> u64 {
        let mut finish = vec![0u64; self.tasks.len()];
        let mut longest = 0;
        // Ids are topologically sorted, so every predecessor is already final.
        for task in &self.tasks {
            let start = task
                .after
                .iter()
                .map(|previous| finish[previous.index()])
                .max()
                .unwrap_or(0);
            let done = start + cost(task);
            finish[task.id.index()] = done;
            longest = longest.max(done);
        }
        longest
    }

    /// Number of Coopr stages.
    pub fn stage_count(&self) -> usize {
        self.tasks
            .iter()
            .map(|task| task.stage as usize + 1)
            .max()
            .unwrap_or(0)
    }

    /// Coopr's stages: the tasks of each, in id order.
    pub fn stages(&self) -> Vec<Vec<TaskId>> {
        let mut stages = vec![Vec::new(); self.stage_count()];
        for task in &self.tasks {
            stages[task.stage as usize].push(task.id);
        }
        stages
    }

    /// Length of Coopr's barrier schedule: the sum over stages of the costliest task.
    pub fn staged_critical_path(&self, cost: impl Fn(&Task) -> u64) -> u64 {
        let mut slowest = vec![0u64; self.stage_count()];
        for task in &self.tasks {
            let slot = &mut slowest[task.stage as usize];
            *slot = (*slot).max(cost(task));
        }
        slowest.iter().sum()
    }

    /// Both schedule lengths under the same costs.
    pub fn compare_schedules(&self, cost: impl Fn(&Task) -> u64) -> ScheduleComparison {
        ScheduleComparison {
            dag_critical_path: self.critical_path(&cost),
            staged_critical_path: self.staged_critical_path(&cost),
            stages: self.stage_count(),
        }
    }
}
