//! Submitting a job: the planner's DAG becomes task and dependency rows in one
//! transaction, inserted in multi-row batches so a 30,000-task plan stays fast.
//! A step that many tasks wait on all of is stored once, as a group (see
//! [`Dependencies`]).

use std::collections::HashMap;
use std::fmt::Write as _;

use api_types::{JobId, Operation};
use domain::names::ServiceName;
use domain::plan::{Action, Task, TaskDag};

use sqlx::{Any, Transaction};

use super::{
    backend_of, begin_write, ClusterEffects, JobState, Params, Queue, QueueError, SubmitOptions,
    TaskState,
};

/// Rows per task INSERT: nine bound values each, under both backends' limits (32,766).
const TASK_BATCH: usize = 2_000;
/// Rows per dependency or group INSERT: values are inlined integers, only the job id
/// is bound.
const DEP_BATCH: usize = 5_000;
/// The fewest tasks a step must have for waiting on all of them to go through a group:
/// below this a group saves few rows and adds a statement to every release.
const GROUP_MIN_TASKS: usize = 8;

/// A plan's dependencies as the queue stores them.
///
/// The planner's service dependencies are rules such as "every start of `store` before
/// every start of `app`", so in a cluster of N nodes running both, each of N tasks waits
/// on the same N tasks: N² `task_deps` rows, and each of those N completions updating N
/// waiting tasks. Here, a task that waits on every task of a step (an action of a service,
/// or a node action) waits on that step's group instead, when the step has at least
/// [`GROUP_MIN_TASKS`] tasks and at least two tasks wait on all of it: one row from each
/// of the step's tasks to the group, one from the group to each waiting task (2N rows),
/// and a completion counts the group down once. Its other prerequisites (the previous
/// task on its own node, say) stay direct.
#[derive(Debug, Default, PartialEq, Eq)]
struct Dependencies {
    /// Per task (by number): what it waits on, a group counting as one.
    pending: Vec<usize>,
    /// `(prerequisite, waiter)` pairs, in primary-key order; either may be a group.
    edges: Vec<(u32, u32)>,
    /// `(number, members)` of each group; numbers follow the plan's task numbers.
    groups: Vec<(u32, usize)>,
}

/// A step: which service (none for a node task) and which action.
type Step<'a> = (Option<&'a ServiceName>, Action);

fn step_of(task: &Task) -> Step<'_> {
    (task.service.as_ref(), task.action)
}

impl Dependencies {
    fn of(dag: &TaskDag) -> Self {
        let tasks = dag.tasks();
        let mut step_sizes: HashMap<Step<'_>, usize> = HashMap::new();
        for task in tasks {
            *step_sizes.entry(step_of(task)).or_default() += 1;
        }
        // Each task's prerequisites, and the big steps it waits on every task of.
        let waits: Vec<(Vec<u32>, Vec<Step<'_>>)> = tasks
            .iter()
            .map(|task| {
                let mut prereqs: Vec<u32> = task.after.iter().map(|id| id.0).collect();
                prereqs.sort_unstable();
                prereqs.dedup();
                let mut per_step: HashMap<Step<'_>, usize> = HashMap::new();
                for prereq in &prereqs {
                    if let Some(prereq) = tasks.get(*prereq as usize) {
                        *per_step.entry(step_of(prereq)).or_default() += 1;
                    }
                }
                let mut whole: Vec<Step<'_>> = per_step
                    .into_iter()
                    .filter(|(step, count)| {
                        *count >= GROUP_MIN_TASKS && step_sizes.get(step) == Some(count)
                    })
                    .map(|(step, _)| step)
                    .collect();
                whole.sort_unstable();
                (prereqs, whole)
            })
            .collect();
        let mut waiters: HashMap<Step<'_>, usize> = HashMap::new();
        for step in waits.iter().flat_map(|(_, whole)| whole) {
            *waiters.entry(*step).or_default() += 1;
        }

        let mut next_group = u32::try_from(tasks.len()).unwrap_or(u32::MAX);
        let mut group_of: HashMap<Step<'_>, u32> = HashMap::new();
        let mut deps = Self::default();
        for (task, (prereqs, whole)) in (0_u32..).zip(&waits) {
            let grouped: Vec<Step<'_>> = whole
                .iter()
                .copied()
                .filter(|step| waiters.get(step).is_some_and(|count| *count > 1))
                .collect();
            let mut pending = 0;
            for prereq in prereqs {
                let in_group = tasks
                    .get(*prereq as usize)
                    .is_some_and(|prereq| grouped.contains(&step_of(prereq)));
                if !in_group {
                    deps.edges.push((*prereq, task));
                    pending += 1;
                }
            }
            for step in grouped {
                let group = *group_of.entry(step).or_insert_with(|| {
                    let group = next_group;
                    next_group = next_group.saturating_add(1);
                    let members: Vec<u32> = (0_u32..)
                        .zip(tasks)
                        .filter(|(_, member)| step_of(member) == step)
                        .map(|(member, _)| member)
                        .collect();
                    deps.groups.push((group, members.len()));
                    deps.edges
                        .extend(members.into_iter().map(|member| (member, group)));
                    group
                });
                deps.edges.push((group, task));
                pending += 1;
            }
            deps.pending.push(pending);
        }
        // In the primary key's order, so every row lands at the end of the index instead
        // of somewhere in its middle: five times faster for a million rows.
        deps.edges.sort_unstable();
        deps
    }
}

impl Queue {
    /// Stores `dag` as a new queued job of `cluster_id` and returns the job id. Tasks
    /// without prerequisites are ready at once; an empty plan is a succeeded job.
    pub async fn submit_job(
        &self,
        tenant_id: &str,
        cluster_id: &str,
        operation: Operation,
        dag: &TaskDag,
        options: &SubmitOptions,
        now_ms: i64,
    ) -> Result<JobId, QueueError> {
        let (_turn, mut tx) = begin_write(&self.store).await?;
        let job_id = self
            .submit_in(
                &mut tx, tenant_id, cluster_id, operation, dag, options, now_ms,
            )
            .await?;
        tx.commit().await?;
        Ok(job_id)
    }

    /// [`Queue::submit_job`] inside the caller's write transaction (so a cluster and its first job
    /// are stored together, or not at all).
    #[allow(clippy::too_many_arguments)] // `submit_job`'s, and the transaction.
    pub async fn submit_in(
        &self,
        tx: &mut Transaction<'static, Any>,
        tenant_id: &str,
        cluster_id: &str,
        operation: Operation,
        dag: &TaskDag,
        options: &SubmitOptions,
        now_ms: i64,
    ) -> Result<JobId, QueueError> {
        let job_id = JobId::from(uuid::Uuid::new_v4().to_string());
        let plan_json = serde_json::to_string(dag).map_err(|err| QueueError::CorruptPlan {
            job_id: job_id.clone(),
            reason: err.to_string(),
        })?;
        let total = i64::try_from(dag.len()).unwrap_or(i64::MAX);
        let (state, finished) = if dag.is_empty() {
            (JobState::Succeeded, Some(now_ms))
        } else {
            (JobState::Queued, None)
        };

        sqlx::query(
            "INSERT INTO jobs (id, tenant_id, cluster_id, operation, state, tasks_total, \
             tasks_succeeded, created_at_ms, started_at_ms, finished_at_ms, error) \
             VALUES ($1, $2, $3, $4, $5, $6, 0, $7, NULL, $8, NULL)",
        )
        .bind(job_id.as_str())
        .bind(tenant_id)
        .bind(cluster_id)
        // The label: the words the table has always held (it reads back either spelling).
        .bind(operation.label())
        .bind(state.as_str())
        .bind(total)
        .bind(now_ms)
        .bind(finished)
        .execute(&mut **tx)
        .await?;
        // Beside the job row, not in it: every completion updates the job row, and the
        // plan of a big cluster is megabytes (see the job_documents migration).
        let effects = options.effects.as_ref();
        let document = |field: fn(&ClusterEffects) -> &Option<String>| {
            effects.and_then(|effects| field(effects).as_deref())
        };
        sqlx::query(
            "INSERT INTO job_documents (job_id, from_layout_json, to_layout_json, plan_json, \
             catalog_json, stop_catalog_json) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(job_id.as_str())
        .bind(document(|effects| &effects.from_layout_json))
        .bind(document(|effects| &effects.to_layout_json))
        .bind(&plan_json)
        .bind(document(|effects| &effects.catalog_json))
        .bind(document(|effects| &effects.stop_catalog_json))
        .execute(&mut **tx)
        .await?;
        // A replacement's `node.replaced` names the old nodes, whose rows its steps delete.
        store::hooks::keep_replaced_hostnames(
            tx,
            job_id.as_str(),
            cluster_id,
            operation,
            document(|effects| &effects.from_layout_json),
            document(|effects| &effects.to_layout_json),
        )
        .await?;

        let deps = Dependencies::of(dag);
        for chunk in dag.tasks().chunks(TASK_BATCH) {
            let mut params = Params::new(backend_of(tx));
            let mut sql = String::from(
            "INSERT INTO tasks (id, job_id, tenant_id, cluster_id, number, node, service, action, \
             stage, state, pending_prereqs, max_attempts, idempotent, backoff_ms, not_before_ms, \
             created_at_ms) VALUES ",
        );
            let mut ids = Vec::with_capacity(chunk.len());
            for (row, task) in chunk.iter().enumerate() {
                let pending = deps.pending.get(task.id.index()).copied().unwrap_or(0);
                let state = if pending == 0 {
                    TaskState::Ready
                } else {
                    TaskState::Pending
                };
                let declared_unsafe = task.service.as_ref().is_some_and(|service| {
                    options
                        .non_idempotent_steps
                        .contains(&(service.clone(), task.action))
                });
                let (max_attempts, idempotent) =
                    if declared_unsafe || options.non_idempotent.contains(&task.action) {
                        (1, 0)
                    } else {
                        (options.max_attempts.max(1), 1)
                    };
                if row > 0 {
                    sql.push_str(", ");
                }
                // Integers and fixed words are inlined; only strings and times are bound.
                let _ = write!(
                    sql,
                    "({}, {}, {}, {}, {}, {}, '{}', {}, {max_attempts}, {idempotent}, {})",
                    params.list(4),
                    task.id.0,
                    task.node,
                    params.one(),
                    params.one(),
                    task.stage,
                    state.as_str(),
                    pending,
                    params.list(3),
                );
                ids.push(uuid::Uuid::new_v4().to_string());
            }
            let mut query = sqlx::query(&sql);
            for (task, id) in chunk.iter().zip(&ids) {
                query = query
                    .bind(id.as_str())
                    .bind(job_id.as_str())
                    .bind(tenant_id)
                    .bind(cluster_id)
                    .bind(task.service.as_ref().map(|s| s.as_str().to_owned()))
                    .bind(task.action.as_str())
                    .bind(options.backoff_ms)
                    .bind(now_ms)
                    .bind(now_ms);
            }
            query.execute(&mut **tx).await?;
        }

        insert_job_pairs(
            tx,
            &job_id,
            "INSERT INTO task_deps (job_id, prereq, task) VALUES ",
            &deps.edges,
        )
        .await?;
        insert_job_pairs(
            tx,
            &job_id,
            "INSERT INTO task_groups (job_id, number, pending_prereqs) VALUES ",
            &deps.groups,
        )
        .await?;
        if let Some(effects) = &options.effects {
            sqlx::query(
                "UPDATE jobs SET cluster_state_running = $2, cluster_state_succeeded = $3, \
                 cluster_state_failed = $4, requested_by = $5, forced = $6 WHERE id = $1",
            )
            .bind(job_id.as_str())
            .bind(effects.running.as_str())
            .bind(effects.succeeded.as_str())
            .bind(effects.failed.as_str())
            .bind(&effects.requested_by)
            .bind(i64::from(effects.forced))
            .execute(&mut **tx)
            .await?;
            super::effects::apply(tx, job_id.as_str(), state, now_ms).await?;
        }
        Ok(job_id)
    }
}

/// Writes `rows` of two numbers each, with the job's id, in batches of [`DEP_BATCH`]:
/// `insert` is the statement up to `VALUES `. The numbers are written into the SQL (they
/// are the planner's integers, not input), so a batch binds one parameter.
async fn insert_job_pairs(
    tx: &mut Transaction<'_, Any>,
    job_id: &JobId,
    insert: &str,
    rows: &[(u32, impl std::fmt::Display)],
) -> Result<(), QueueError> {
    for chunk in rows.chunks(DEP_BATCH) {
        let mut sql = String::from(insert);
        for (row, (first, second)) in chunk.iter().enumerate() {
            if row > 0 {
                sql.push_str(", ");
            }
            let _ = write!(sql, "($1, {first}, {second})");
        }
        sqlx::query(&sql)
            .bind(job_id.as_str())
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan of `nodes` nodes, each creating, confirming and bootstrapping in turn;
    /// every node's bootstrap also waits on every node's create (a rule "every create
    /// before every bootstrap"), `fan_in` of them if given.
    fn plan(nodes: u32, fan_in: Option<u32>) -> TaskDag {
        let mut tasks = Vec::new();
        for (step, action) in ["create", "confirm", "bootstrap"].into_iter().enumerate() {
            for node in 0..nodes {
                let id = u32::try_from(step).unwrap() * nodes + node;
                let after: Vec<u32> = match step {
                    0 => Vec::new(),
                    1 => vec![node],
                    _ => std::iter::once(nodes + node)
                        .chain(0..fan_in.unwrap_or(nodes))
                        .collect(),
                };
                tasks.push(serde_json::json!({
                    "id": id, "node": node, "service": null, "action": action,
                    "after": after, "stage": 0,
                }));
            }
        }
        serde_json::from_value(serde_json::json!({ "tasks": tasks })).unwrap()
    }

    #[test]
    fn waiting_on_every_task_of_a_step_goes_through_its_group() {
        let deps = Dependencies::of(&plan(10, None));
        // One group (number 30): the ten creates, which each bootstrap waits on.
        assert_eq!(deps.groups, [(30, 10)]);
        let mut expected: Vec<(u32, u32)> = (0..10).map(|create| (create, 30)).collect();
        expected.extend((0..10).map(|node| (node, 10 + node))); // create → confirm
        expected.extend((0..10).map(|node| (10 + node, 20 + node))); // confirm → bootstrap
        expected.extend((20..30).map(|bootstrap| (30, bootstrap)));
        expected.sort_unstable();
        assert_eq!(deps.edges, expected);
        assert_eq!(deps.pending[..10], [0; 10]);
        assert_eq!(deps.pending[10..20], [1; 10]);
        assert_eq!(deps.pending[20..], [2; 10], "its confirm and the group");
    }

    #[test]
    fn small_steps_and_partial_waits_stay_direct() {
        // Steps below GROUP_MIN_TASKS: every wait is its own row.
        let small = Dependencies::of(&plan(3, None));
        assert!(small.groups.is_empty());
        assert_eq!(small.edges.len(), 3 + 3 * 4);
        assert_eq!(small.pending[6..], [4, 4, 4]);
        // Waiting on nine of ten creates is not waiting on the step.
        let partial = Dependencies::of(&plan(10, Some(9)));
        assert!(partial.groups.is_empty());
        assert_eq!(partial.pending[20..], [10; 10]);
    }
}
