//! Fair shares of a claim: which ready tasks a batch takes when several tenants and
//! several jobs wait, decided without I/O (the claim in `claim.rs` reads the rows).
//!
//! Taking the oldest ready tasks first let one user's 1,000-node create hold back a
//! colleague's 3-node create until it drained, and one tenant's backlog hold back
//! every other tenant up to the per-tenant limit. Instead each slot of a batch goes,
//! one at a time:
//! 1. to the tenant with the fewest running tasks (counting the ones this batch took;
//!    ties: the tenant whose oldest waiting job is oldest), never to one at its limit;
//! 2. within that tenant, to the job with the fewest running tasks (ties: the older
//!    job), so jobs share a tenant's slots round robin, weighted by job and not by
//!    task: a 3-node job waits for at most a few of a big job's tasks, not all;
//! 3. within that job, to its next ready task in claim order (backoff time, then task
//!    number) whose node has no task yet: never two tasks on one node.
//!
//! A job whose next tasks are all on taken nodes drops out for the batch; a batch ends
//! when it has `room` tasks or no tenant has anything it may take.
//!
//! Under [`Sharing::EqualSteps`] (the worker's CPU is contended) a job also gets no slot
//! while it runs more tasks than the busiest other active job: on a machine whose CPU
//! is what the steps wait for, running tasks are what share it, and the rule above alone
//! still lets a 1,000-node job run 61 steps beside a 3-node job's 3.
//!
//! Before reading any task the claim plans how many ready tasks to read of each job
//! ([`read_plan`]): about the share of the batch the policy would give the job if each
//! had ready tasks enough. Reading a full batch's worth of every waiting job instead
//! would read (and, on PostgreSQL, lock) tens of rows of each job to take a few. When a
//! job had fewer ready tasks than its share and the batch came out short, the claim
//! reads more of the jobs that may have more ([`reread_plan`]) and chooses again.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

use crate::types::Sharing;

/// Ready tasks a claim reads (and locks) beyond one and a half times a job's share of
/// the batch, for the ones it skips because their node or tenant filled up within the
/// batch; shared among the jobs read.
const CANDIDATE_SLACK: usize = 16;

/// The least of [`CANDIDATE_SLACK`] each job read gets.
const MIN_SLACK: usize = 2;

/// The most jobs one read covers (a `UNION ALL` branch or a `VALUES` row each); more
/// wait for the next claim. A batch of a worker's free slots rarely has room for more jobs anyway.
pub(super) const JOBS_PER_READ: usize = 64;

/// Per claim, the rows read for all jobs together are about this many single-job
/// windows: with many jobs waiting, each gets a smaller window.
const WINDOWS_PER_CLAIM: usize = 4;

/// The smallest window of one job: a small create has about this many ready tasks.
const MIN_JOB_WINDOW: usize = 4;

/// A ready task a claim may take: whose it is and where it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Ready<'a> {
    pub tenant: &'a str,
    pub job: &'a str,
    /// When the job was submitted: the older of two jobs with as many running tasks
    /// goes first.
    pub job_created_ms: i64,
    pub cluster: &'a str,
    pub node: i64,
}

/// An active job with ready tasks, before its tasks are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct WaitingJob<'a> {
    pub tenant: &'a str,
    pub job: &'a str,
    pub created_ms: i64,
}

/// Tasks running now, per tenant and per job.
#[derive(Debug, Default)]
pub(super) struct Running<'a> {
    tenants: HashMap<&'a str, i64>,
    jobs: HashMap<&'a str, i64>,
}

impl<'a> Running<'a> {
    /// Counts `count` more running tasks of `job` in `tenant`.
    pub fn add(&mut self, tenant: &'a str, job: &'a str, count: i64) {
        *self.tenants.entry(tenant).or_insert(0) += count;
        *self.jobs.entry(job).or_insert(0) += count;
    }

    pub fn tenant(&self, tenant: &str) -> i64 {
        self.tenants.get(tenant).copied().unwrap_or(0)
    }

    pub fn job(&self, job: &str) -> i64 {
        self.jobs.get(job).copied().unwrap_or(0)
    }

    /// Every task running, whoever's.
    pub fn total(&self) -> i64 {
        self.tenants
            .values()
            .fold(0, |sum, count| sum.saturating_add(*count))
    }
}

/// The batch: indexes into `ready` in the order the slots were given, at most `room`.
///
/// `ready` lists each job's tasks in claim order (jobs may interleave); `running` is
/// what runs before this batch; no tenant gets past `per_tenant` running tasks.
pub(super) fn choose(
    ready: &[Ready<'_>],
    running: &Running<'_>,
    per_tenant: i64,
    sharing: Sharing,
    room: usize,
) -> Vec<usize> {
    struct Job<'a> {
        id: &'a str,
        created_ms: i64,
        running: i64,
        /// Indexes into `ready`, in claim order; `next` is the first not yet looked at.
        tasks: Vec<usize>,
        next: usize,
    }
    struct Tenant<'a> {
        id: &'a str,
        running: i64,
        jobs: Vec<usize>,
    }

    let mut jobs: Vec<Job> = Vec::new();
    let mut tenants: Vec<Tenant> = Vec::new();
    let mut job_slots: HashMap<&str, usize> = HashMap::new();
    let mut tenant_slots: HashMap<&str, usize> = HashMap::new();
    for (index, task) in ready.iter().enumerate() {
        let job = match job_slots.get(task.job) {
            Some(job) => *job,
            None => {
                let tenant = match tenant_slots.get(task.tenant) {
                    Some(tenant) => *tenant,
                    None => {
                        tenants.push(Tenant {
                            id: task.tenant,
                            running: running.tenant(task.tenant),
                            jobs: Vec::new(),
                        });
                        tenant_slots.insert(task.tenant, tenants.len() - 1);
                        tenants.len() - 1
                    }
                };
                jobs.push(Job {
                    id: task.job,
                    created_ms: task.job_created_ms,
                    running: running.job(task.job),
                    tasks: Vec::new(),
                    next: 0,
                });
                tenants[tenant].jobs.push(jobs.len() - 1);
                job_slots.insert(task.job, jobs.len() - 1);
                jobs.len() - 1
            }
        };
        jobs[job].tasks.push(index);
    }

    // Every active job's running tasks (with this batch's), for `EqualSteps`: the jobs
    // running tasks and those with ready ones.
    let mut active: HashMap<&str, i64> = running.jobs.clone();
    for job in &jobs {
        active.entry(job.id).or_insert(job.running);
    }
    // A job within its share under `EqualSteps` runs no more tasks than the busiest
    // other active job: `top` holds the two largest counts (equal when two jobs share
    // the largest), read once a slot rather than once a job.
    let within_share = |job: &Job, top: (i64, Option<i64>)| match sharing {
        Sharing::Slots => true,
        Sharing::EqualSteps => {
            let busiest_other = if job.running == top.0 {
                top.1
            } else {
                Some(top.0)
            };
            busiest_other.is_none_or(|busiest_other| job.running <= busiest_other)
        }
    };
    let waiting =
        |job: &Job, top: (i64, Option<i64>)| job.next < job.tasks.len() && within_share(job, top);
    let mut taken_nodes: HashSet<(&str, i64)> = HashSet::new();
    let mut picked = Vec::with_capacity(room.min(ready.len()));
    while picked.len() < room {
        let top = two_largest(active.values().copied());
        let next_tenant = tenants
            .iter()
            .enumerate()
            .filter(|(_, tenant)| tenant.running < per_tenant)
            .filter_map(|(slot, tenant)| {
                let oldest = tenant
                    .jobs
                    .iter()
                    .map(|job| &jobs[*job])
                    .filter(|job| waiting(job, top))
                    .map(|job| job.created_ms)
                    .min()?;
                Some(((tenant.running, oldest, tenant.id), slot))
            })
            .min()
            .map(|(_, slot)| slot);
        let Some(tenant) = next_tenant else {
            break;
        };
        let next_job = tenants[tenant]
            .jobs
            .iter()
            .filter(|job| waiting(&jobs[**job], top))
            .min_by_key(|job| (jobs[**job].running, jobs[**job].created_ms, jobs[**job].id))
            .copied();
        let Some(job) = next_job else {
            break;
        };
        // The job's next task whose node is still free in this batch; the ones passed
        // over wait for the next claim (their node is taken).
        while let Some(&index) = jobs[job].tasks.get(jobs[job].next) {
            jobs[job].next += 1;
            let task = &ready[index];
            if taken_nodes.insert((task.cluster, task.node)) {
                picked.push(index);
                jobs[job].running += 1;
                tenants[tenant].running += 1;
                active.insert(jobs[job].id, jobs[job].running);
                break;
            }
        }
    }
    picked
}

/// The largest of `counts` and the next (equal to it when it occurs twice); `(0, None)`
/// for none.
fn two_largest(counts: impl Iterator<Item = i64>) -> (i64, Option<i64>) {
    let mut top: Option<(i64, Option<i64>)> = None;
    for count in counts {
        top = Some(match top {
            None => (count, None),
            Some((first, _)) if count > first => (count, Some(first)),
            Some((first, second)) => (first, second.max(Some(count))),
        });
    }
    top.unwrap_or((0, None))
}

/// The order in which to read more of the waiting jobs' tasks when a claim reads only
/// some of the jobs (indexes into `jobs`): the policy of [`choose`] as far as it is
/// known before any task is read. Each tenant's jobs by fewest running, then oldest; the tenants
/// take turns, fewest running first, so a tenant's many jobs cannot crowd out another
/// tenant's one. Tenants at `per_tenant` are left out.
pub(super) fn read_order(
    jobs: &[WaitingJob<'_>],
    running: &Running<'_>,
    per_tenant: i64,
) -> Vec<usize> {
    let mut by_tenant: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, job) in jobs.iter().enumerate() {
        if running.tenant(job.tenant) < per_tenant {
            by_tenant.entry(job.tenant).or_default().push(index);
        }
    }
    /// A tenant's place in the turns: running tasks, its oldest job's creation, its id.
    type Turn<'a> = (i64, i64, &'a str);
    let mut tenants: Vec<(Turn, Vec<usize>)> = by_tenant
        .into_iter()
        .map(|(tenant, mut members)| {
            members.sort_by_key(|index| {
                let job = &jobs[*index];
                (running.job(job.job), job.created_ms, job.job)
            });
            let oldest = members
                .iter()
                .map(|index| jobs[*index].created_ms)
                .min()
                .unwrap_or(i64::MAX);
            ((running.tenant(tenant), oldest, tenant), members)
        })
        .collect();
    tenants.sort_by_key(|(key, _)| *key);
    let rounds = tenants
        .iter()
        .map(|(_, members)| members.len())
        .max()
        .unwrap_or(0);
    (0..rounds)
        .flat_map(|round| {
            tenants
                .iter()
                .filter_map(move |(_, members)| members.get(round).copied())
        })
        .collect()
}

/// How many ready tasks to read first of which waiting job, as `(index into jobs,
/// rows)`: the slots of a batch of `room` that [`choose`] would give each job if every
/// job had ready tasks enough on free nodes, plus half as many again and a share of
/// [`CANDIDATE_SLACK`]. Jobs with no slot are not read; at most [`JOBS_PER_READ`]
/// jobs, in the order they got their first slot.
pub(super) fn read_plan(
    jobs: &[WaitingJob<'_>],
    running: &Running<'_>,
    per_tenant: i64,
    room: usize,
) -> Vec<(usize, usize)> {
    // Each tenant's jobs by (running, creation, id), the tenants by (running, oldest
    // job, id): the orders of `choose`, kept in heaps since every job stays waiting.
    type JobKey<'a> = Reverse<(i64, i64, &'a str, usize)>;
    let mut tenant_jobs: HashMap<&str, BinaryHeap<JobKey>> = HashMap::new();
    let mut oldest: HashMap<&str, i64> = HashMap::new();
    for (index, job) in jobs.iter().enumerate() {
        tenant_jobs.entry(job.tenant).or_default().push(Reverse((
            running.job(job.job),
            job.created_ms,
            job.job,
            index,
        )));
        let entry = oldest.entry(job.tenant).or_insert(job.created_ms);
        *entry = (*entry).min(job.created_ms);
    }
    let mut tenants: BinaryHeap<Reverse<(i64, i64, &str)>> = oldest
        .iter()
        .map(|(tenant, oldest)| Reverse((running.tenant(tenant), *oldest, *tenant)))
        .filter(|Reverse((count, _, _))| *count < per_tenant)
        .collect();
    let mut shares = vec![0_usize; jobs.len()];
    let mut served = Vec::new();
    for _ in 0..room {
        let Some(Reverse((count, oldest, tenant))) = tenants.pop() else {
            break;
        };
        let Some(Reverse((job_count, created, id, index))) =
            tenant_jobs.get_mut(tenant).and_then(BinaryHeap::pop)
        else {
            continue;
        };
        if shares[index] == 0 {
            served.push(index);
        }
        shares[index] += 1;
        if let Some(heap) = tenant_jobs.get_mut(tenant) {
            heap.push(Reverse((job_count + 1, created, id, index)));
        }
        if count + 1 < per_tenant {
            tenants.push(Reverse((count + 1, oldest, tenant)));
        }
    }
    served.truncate(JOBS_PER_READ);
    let slack = (CANDIDATE_SLACK / served.len().max(1)).max(MIN_SLACK);
    served
        .into_iter()
        .map(|index| (index, shares[index] + shares[index] / 2 + slack))
        .collect()
}

/// What to read next when the tasks read by `first` (rows per job index, 0 for a job
/// not read) left the batch `short` tasks short: the jobs that may have ready tasks not
/// read yet (not read at all, or `returned` every row they were allowed), in
/// [`read_order`], at most [`JOBS_PER_READ`], each with its first window plus a
/// [`job_window`] of what is missing.
pub(super) fn reread_plan(
    jobs: &[WaitingJob<'_>],
    running: &Running<'_>,
    per_tenant: i64,
    first: &[usize],
    returned: &[usize],
    short: usize,
) -> Vec<(usize, usize)> {
    let more: Vec<usize> = read_order(jobs, running, per_tenant)
        .into_iter()
        .filter(|index| {
            let window = first.get(*index).copied().unwrap_or(0);
            window == 0 || returned.get(*index).copied().unwrap_or(0) >= window
        })
        .take(JOBS_PER_READ)
        .collect();
    let extra = job_window(short, more.len());
    more.into_iter()
        .map(|index| (index, first.get(index).copied().unwrap_or(0) + extra))
        .collect()
}

/// How many ready tasks to read for each of `jobs` jobs for a batch of `room`: one and
/// a half times the batch plus some (what a job taking the whole batch needs when a
/// few of its tasks share a node), less when many jobs share the reads.
pub(super) fn job_window(room: usize, jobs: usize) -> usize {
    let window = room
        .saturating_add(room / 2)
        .saturating_add(CANDIDATE_SLACK);
    let shared = window.saturating_mul(WINDOWS_PER_CLAIM) / jobs.max(1);
    window.min(shared.max(MIN_JOB_WINDOW))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(tenant, job, node)`: every job is on its own cluster (named after it), and
    /// job `j<N>` was created at time N.
    type Task = (&'static str, &'static str, i64);

    fn ready(tasks: &[Task]) -> Vec<Ready<'static>> {
        tasks
            .iter()
            .map(|&(tenant, job, node)| Ready {
                tenant,
                job,
                job_created_ms: job[1..].parse().unwrap(),
                cluster: job,
                node,
            })
            .collect()
    }

    /// `count` tasks of one job on nodes 0, 1, 2, …
    fn job(tenant: &'static str, job: &'static str, count: i64) -> Vec<Task> {
        (0..count).map(|node| (tenant, job, node)).collect()
    }

    fn running(counts: &[(&'static str, &'static str, i64)]) -> Running<'static> {
        let mut running = Running::default();
        for &(tenant, job, count) in counts {
            running.add(tenant, job, count);
        }
        running
    }

    struct Case {
        name: &'static str,
        tasks: Vec<Task>,
        running: Vec<(&'static str, &'static str, i64)>,
        per_tenant: i64,
        room: usize,
        /// The batch as `(job, node)` in the order the slots went.
        expected: Vec<(&'static str, i64)>,
    }

    impl Case {
        /// The batch [`choose`] makes of the case is the one expected.
        fn check(&self, sharing: Sharing) {
            let ready = ready(&self.tasks);
            let running = running(&self.running);
            let batch: Vec<(&str, i64)> =
                choose(&ready, &running, self.per_tenant, sharing, self.room)
                    .into_iter()
                    .map(|index| (ready[index].job, ready[index].node))
                    .collect();
            assert_eq!(batch, self.expected, "{}", self.name);
        }
    }

    #[test]
    fn slots_go_to_the_fewest_running_tenant_then_job() {
        let big_then_small = [job("a", "j1", 10), job("a", "j2", 3)].concat();
        let cases = [
            Case {
                name: "one job alone keeps claim order",
                tasks: job("a", "j1", 5),
                running: vec![],
                per_tenant: i64::MAX,
                room: 3,
                expected: vec![("j1", 0), ("j1", 1), ("j1", 2)],
            },
            Case {
                name: "a small job is not starved by a big one of its tenant",
                tasks: big_then_small.clone(),
                running: vec![],
                per_tenant: i64::MAX,
                room: 6,
                expected: vec![
                    ("j1", 0),
                    ("j2", 0),
                    ("j1", 1),
                    ("j2", 1),
                    ("j1", 2),
                    ("j2", 2),
                ],
            },
            Case {
                name: "the job with fewer running goes first",
                tasks: big_then_small.clone(),
                running: vec![("a", "j1", 8)],
                per_tenant: i64::MAX,
                room: 5,
                expected: vec![("j2", 0), ("j2", 1), ("j2", 2), ("j1", 0), ("j1", 1)],
            },
            Case {
                name: "tenants share before their jobs do",
                tasks: [job("a", "j1", 4), job("a", "j2", 4), job("b", "j3", 4)].concat(),
                running: vec![],
                per_tenant: i64::MAX,
                room: 4,
                expected: vec![("j1", 0), ("j3", 0), ("j2", 0), ("j3", 1)],
            },
            Case {
                name: "the tenant with fewer running goes first",
                tasks: [job("a", "j1", 4), job("b", "j2", 4)].concat(),
                running: vec![("a", "j1", 3)],
                per_tenant: i64::MAX,
                room: 5,
                expected: vec![("j2", 0), ("j2", 1), ("j2", 2), ("j1", 0), ("j2", 3)],
            },
            Case {
                name: "a taken node is skipped, the job's next task goes",
                tasks: vec![("a", "j1", 7), ("a", "j1", 7), ("a", "j1", 8)],
                running: vec![],
                per_tenant: i64::MAX,
                room: 3,
                expected: vec![("j1", 7), ("j1", 8)],
            },
            Case {
                name: "a job whose tasks are all on taken nodes drops out",
                tasks: vec![
                    ("a", "j1", 1),
                    ("a", "j1", 1),
                    ("a", "j1", 1),
                    ("a", "j2", 2),
                    ("a", "j2", 3),
                ],
                running: vec![],
                per_tenant: i64::MAX,
                room: 4,
                expected: vec![("j1", 1), ("j2", 2), ("j2", 3)],
            },
            Case {
                name: "a tenant stops at its limit",
                tasks: [job("a", "j1", 5), job("b", "j2", 5)].concat(),
                running: vec![("a", "j1", 1)],
                per_tenant: 3,
                room: 10,
                expected: vec![("j2", 0), ("j1", 0), ("j2", 1), ("j1", 1), ("j2", 2)],
            },
            Case {
                name: "a tenant at its limit gets nothing",
                tasks: [job("a", "j1", 2), job("b", "j2", 2)].concat(),
                running: vec![("a", "j9", 2)],
                per_tenant: 2,
                room: 4,
                expected: vec![("j2", 0), ("j2", 1)],
            },
            Case {
                name: "less room than jobs: the oldest jobs of the emptiest tenants",
                tasks: [
                    job("a", "j1", 2),
                    job("a", "j2", 2),
                    job("a", "j3", 2),
                    job("b", "j4", 2),
                ]
                .concat(),
                running: vec![],
                per_tenant: i64::MAX,
                room: 2,
                expected: vec![("j1", 0), ("j4", 0)],
            },
            Case {
                name: "ties between jobs go to the older one, wherever it is listed",
                tasks: [job("a", "j5", 2), job("a", "j2", 2)].concat(),
                running: vec![],
                per_tenant: i64::MAX,
                room: 3,
                expected: vec![("j2", 0), ("j5", 0), ("j2", 1)],
            },
            Case {
                name: "no room, no tasks",
                tasks: job("a", "j1", 3),
                running: vec![],
                per_tenant: i64::MAX,
                room: 0,
                expected: vec![],
            },
            Case {
                name: "nothing ready",
                tasks: vec![],
                running: vec![("a", "j1", 3)],
                per_tenant: i64::MAX,
                room: 5,
                expected: vec![],
            },
        ];
        for case in cases {
            case.check(Sharing::Slots);
        }
    }

    #[test]
    fn the_two_largest_counts_keep_a_repeated_largest() {
        for (counts, expected) in [
            (vec![], (0, None)),
            (vec![4], (4, None)),
            (vec![3, 60], (60, Some(3))),
            (vec![60, 3, 3], (60, Some(3))),
            (vec![5, 9, 9, 1], (9, Some(9))),
        ] {
            assert_eq!(two_largest(counts.iter().copied()), expected, "{counts:?}");
        }
    }

    #[test]
    fn under_equal_steps_no_job_runs_more_than_one_over_the_busiest_other() {
        let cases = [
            Case {
                name: "a big job alone is not held back",
                tasks: job("a", "j1", 8),
                running: vec![("a", "j1", 60)],
                per_tenant: i64::MAX,
                room: 4,
                expected: vec![("j1", 0), ("j1", 1), ("j1", 2), ("j1", 3)],
            },
            Case {
                name:
                    "beside a small job, a big one waits until it is down to the small one's count",
                tasks: [job("a", "j1", 8), job("a", "j2", 3)].concat(),
                running: vec![("a", "j1", 60)],
                per_tenant: i64::MAX,
                room: 8,
                expected: vec![("j2", 0), ("j2", 1), ("j2", 2)],
            },
            Case {
                name: "likewise across tenants",
                tasks: [job("a", "j1", 8), job("b", "j2", 3)].concat(),
                running: vec![("a", "j1", 60)],
                per_tenant: i64::MAX,
                room: 8,
                expected: vec![("j2", 0), ("j2", 1), ("j2", 2)],
            },
            Case {
                name: "a small job that is all running still counts: the big one gets one over it",
                tasks: job("a", "j1", 8),
                running: vec![("a", "j1", 2), ("a", "j2", 3)],
                per_tenant: i64::MAX,
                room: 8,
                expected: vec![("j1", 0), ("j1", 1)],
            },
            Case {
                name: "equal jobs take turns and fill the room",
                tasks: [job("a", "j1", 4), job("b", "j2", 4)].concat(),
                running: vec![],
                per_tenant: i64::MAX,
                room: 6,
                expected: vec![
                    ("j1", 0),
                    ("j2", 0),
                    ("j1", 1),
                    ("j2", 1),
                    ("j1", 2),
                    ("j2", 2),
                ],
            },
        ];
        for case in cases {
            case.check(Sharing::EqualSteps);
        }
    }

    #[test]
    fn jobs_are_read_in_turns_of_their_tenants() {
        let cases: [(&str, Vec<_>, Vec<_>, i64, Vec<&str>); 4] = [
            (
                "oldest first within a tenant",
                waiting(&[("a", "j2", 2), ("a", "j1", 1)]),
                vec![],
                i64::MAX,
                vec!["j1", "j2"],
            ),
            (
                "tenants take turns, the emptiest first",
                waiting(&[
                    ("a", "j1", 1),
                    ("a", "j2", 2),
                    ("a", "j3", 3),
                    ("b", "j4", 4),
                ]),
                vec![("a", "j1", 5)],
                i64::MAX,
                vec!["j4", "j2", "j3", "j1"],
            ),
            (
                "a job with fewer running comes before an older one",
                waiting(&[("a", "j1", 1), ("a", "j2", 2)]),
                vec![("a", "j1", 1)],
                i64::MAX,
                vec!["j2", "j1"],
            ),
            (
                "a tenant at its limit is left out",
                waiting(&[("a", "j1", 1), ("b", "j2", 2)]),
                vec![("a", "j1", 2)],
                2,
                vec!["j2"],
            ),
        ];
        for (name, jobs, counts, per_tenant, expected) in cases {
            let order: Vec<&str> = read_order(&jobs, &running(&counts), per_tenant)
                .into_iter()
                .map(|index| jobs[index].job)
                .collect();
            assert_eq!(order, expected, "{name}");
        }
    }

    fn waiting(jobs: &[(&'static str, &'static str, i64)]) -> Vec<WaitingJob<'static>> {
        jobs.iter()
            .map(|&(tenant, job, created_ms)| WaitingJob {
                tenant,
                job,
                created_ms,
            })
            .collect()
    }

    /// `count` jobs `j1`, `j2`, … of tenant `a`, created in that order.
    fn many_jobs(count: usize) -> Vec<WaitingJob<'static>> {
        (1..=count)
            .map(|number| WaitingJob {
                tenant: "a",
                job: Box::leak(format!("j{number}").into_boxed_str()),
                created_ms: i64::try_from(number).unwrap(),
            })
            .collect()
    }

    #[test]
    fn each_job_is_read_about_its_share_of_the_batch() {
        struct Case {
            name: &'static str,
            jobs: Vec<WaitingJob<'static>>,
            running: Vec<(&'static str, &'static str, i64)>,
            per_tenant: i64,
            room: usize,
            /// `(job, rows)` in the order the jobs got their first slot.
            expected: Vec<(&'static str, usize)>,
        }
        let ten: Vec<(&str, usize)> = vec![("j1", 8), ("j2", 8)]
            .into_iter()
            .chain(
                ["j3", "j4", "j5", "j6", "j7", "j8", "j9", "j10"]
                    .into_iter()
                    .map(|job| (job, 6)),
            )
            .collect();
        let cases = [
            Case {
                name: "one job alone: the whole batch and the whole slack",
                jobs: many_jobs(1),
                running: vec![],
                per_tenant: i64::MAX,
                room: 64,
                expected: vec![("j1", 112)],
            },
            Case {
                name: "ten jobs share 32 slots: the two oldest get 4, the others 3",
                jobs: many_jobs(10),
                running: vec![],
                per_tenant: i64::MAX,
                room: 32,
                expected: ten,
            },
            Case {
                name: "a small job with nothing running takes a small batch, the big job none",
                jobs: waiting(&[("a", "j1", 1), ("a", "j2", 2)]),
                running: vec![("a", "j1", 60)],
                per_tenant: i64::MAX,
                room: 4,
                expected: vec![("j2", 4 + 2 + 16)],
            },
            Case {
                name: "the emptier tenant first, then turns",
                jobs: waiting(&[("a", "j1", 1), ("b", "j2", 2)]),
                running: vec![("a", "j1", 2)],
                per_tenant: i64::MAX,
                room: 4,
                expected: vec![("j2", 3 + 1 + 8), ("j1", 1 + 8)],
            },
            Case {
                name: "a tenant at its limit is not read",
                jobs: waiting(&[("a", "j1", 1), ("b", "j2", 2)]),
                running: vec![("a", "j1", 2)],
                per_tenant: 2,
                room: 4,
                expected: vec![("j2", 2 + 1 + 16)],
            },
            Case {
                name: "no room, nothing read",
                jobs: many_jobs(3),
                running: vec![],
                per_tenant: i64::MAX,
                room: 0,
                expected: vec![],
            },
        ];
        for case in cases {
            let plan: Vec<(&str, usize)> = read_plan(
                &case.jobs,
                &running(&case.running),
                case.per_tenant,
                case.room,
            )
            .into_iter()
            .map(|(index, rows)| (case.jobs[index].job, rows))
            .collect();
            assert_eq!(plan, case.expected, "{}", case.name);
        }

        // More jobs than one read covers: the first JOBS_PER_READ to get a slot.
        let jobs = many_jobs(JOBS_PER_READ + 6);
        let plan = read_plan(&jobs, &Running::default(), i64::MAX, jobs.len());
        assert_eq!(plan.len(), JOBS_PER_READ);
        assert_eq!(plan[0], (0, 1 + MIN_SLACK));
        assert_eq!(plan[JOBS_PER_READ - 1].0, JOBS_PER_READ - 1);
    }

    #[test]
    fn a_short_batch_reads_more_of_the_jobs_that_may_have_more() {
        // j1 was read 22 rows and had 3 (all it has); j2 was read 6 and gave 6 (it may
        // have more); j3 was not read; j4's tenant is at its limit.
        let jobs = waiting(&[
            ("a", "j1", 1),
            ("a", "j2", 2),
            ("a", "j3", 3),
            ("b", "j4", 4),
        ]);
        let running = running(&[("b", "j4", 2)]);
        let again = reread_plan(&jobs, &running, 2, &[22, 6, 0, 0], &[3, 6, 0, 0], 5);
        let extra = job_window(5, 2);
        assert_eq!(again, [(1, 6 + extra), (2, extra)]);
        // Nothing may have more: nothing to read.
        assert!(reread_plan(&jobs[..1], &running, 2, &[22], &[3], 5).is_empty());
    }

    #[test]
    fn windows_shrink_as_jobs_share_a_claim() {
        // (room, jobs, window per job)
        let cases = [
            (64, 1, 112), // one job: what the oldest-first claim read
            (64, 3, 112), // a big job and two small ones: each as if alone
            (64, 10, 44),
            (64, 64, 7),
            (1, 1, 17),
            (1, 64, 4), // never below a small create's ready tasks
            (0, 0, 16),
        ];
        for (room, jobs, expected) in cases {
            assert_eq!(job_window(room, jobs), expected, "room {room}, {jobs} jobs");
        }
    }

    #[test]
    fn running_counts_add_up_per_tenant_and_job() {
        let running = running(&[("a", "j1", 2), ("a", "j2", 3), ("b", "j3", 1)]);
        assert_eq!(running.tenant("a"), 5);
        assert_eq!(running.job("j2"), 3);
        assert_eq!(running.job("j9"), 0);
        assert_eq!(running.total(), 6);
    }
}
