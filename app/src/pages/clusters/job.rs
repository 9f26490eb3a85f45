//! `/clusters/{id}/jobs/{job}`: a job, live. The server renders its tasks counted by
//! step and state (and, for a job small enough, the whole DAG as a picture), one page
//! of the task table (filtered by state, node and step from the query string:
//! `?state=failed&node=12&page=3`) and the last lines of its output, older ones a link
//! away; so a 15,000-task job's page is as light as a small one's. In the browser the
//! page then follows the job's event stream (Server-Sent Events) from the newest event
//! it read, applying what arrives once per animation frame, so a reload or a
//! reconnect neither loses nor repeats a line and a busy job does not swamp the page.
//! Without JavaScript the page refreshes itself every few seconds until the job ends.
//!
//! After a failure the page says which step failed on which node, shows its
//! output, and offers retry from the failure, a previewed rollback, or deleting
//! the cluster; after success, the links the cluster exposes.

use std::collections::HashMap;

use api_types::{
    EventKind, EventView, JobState, JobView, OutputStream, TaskGroupView, TaskState, TaskView,
};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::Form;
use leptos_router::hooks::{use_params_map, use_query_map};

use crate::components::dag::DagPicture;
use crate::components::errors::{action_error, FormError, PageError};
use crate::components::session::CsrfField;
use crate::components::state::StateBadge;
use crate::components::time::{duration, now_ms};
use crate::server_fns::jobs::cancel::CancelJob;
use crate::server_fns::jobs::retry::RetryJob;
use crate::server_fns::jobs::show::load_job_page;
use crate::server_fns::jobs::{
    FailedTask, JobPage, JobPageQuery, TaskListing, LOG_LINES, TASKS_PER_PAGE,
};

#[component]
pub fn JobShowPage() -> impl IntoView {
    let params = use_params_map();
    let ids = Memo::new(move |_| {
        params.with(|params| {
            (
                params.get("id").unwrap_or_default(),
                params.get("job").unwrap_or_default(),
            )
        })
    });
    let query = use_query_map();
    let listing = Memo::new(move |_| {
        query.with(|query| JobPageQuery {
            state: query.get("state"),
            node: query.get("node"),
            action: query.get("action"),
            service: query.get("service"),
            page: query.get("page"),
            before: query.get("before"),
        })
    });
    let retry = ServerAction::<RetryJob>::new();
    let cancel = ServerAction::<CancelJob>::new();
    // Bumped when the stream ends, so the final states are read once more.
    let finished = RwSignal::new(0u32);
    let page = Resource::new(
        move || {
            (
                ids.get(),
                listing.get(),
                retry.version().get(),
                cancel.version().get(),
                finished.get(),
            )
        },
        |((cluster, job), query, ..)| load_job_page(cluster, job, query),
    );
    view! {
        <Transition fallback=|| view! { <p class="muted">"Loading job…"</p> }>
            {move || Suspend::new(async move {
                match page.await {
                    Err(error) => view! { <PageError error/> }.into_any(),
                    Ok(page) => view! { <LiveJob page retry cancel finished/> }.into_any(),
                }
            })}
        </Transition>
    }
}

/// Applies a task's `state` event to the job and its tasks as the page shows them:
/// the task takes the new state (a new attempt restarts its clock), and a queued job
/// is running from its first task on. Other events change nothing here.
fn apply_state_event(job: &mut JobView, tasks: &mut [TaskView], event: &EventView) {
    let (Some(task_id), EventKind::State, Some(state)) =
        (&event.task_id, event.kind, event.task_state)
    else {
        return;
    };
    let at = event.at_ms;
    if state == TaskState::Running && job.state == JobState::Queued {
        job.state = JobState::Running;
        job.started_at_ms.get_or_insert(at);
    }
    if let Some(task) = tasks.iter_mut().find(|task| &task.id == task_id) {
        if state == TaskState::Running {
            task.attempts = event.attempt.unwrap_or(task.attempts + 1);
            task.started_at_ms = Some(at);
            task.finished_at_ms = None;
        } else if state.is_finished() {
            task.finished_at_ms = Some(at);
        }
        task.state = state;
    }
}

/// Appends `lines` to the log, keeping the newest `LOG_LINES`; says whether any were
/// dropped from its start.
fn append_output(log: &mut Vec<EventView>, lines: Vec<EventView>) -> bool {
    log.extend(lines);
    let excess = log.len().saturating_sub(LOG_LINES);
    log.drain(..excess);
    excess > 0
}

/// What the event stream changes on the page, and how: the live job reducer. The page
/// keeps each part in a signal of its own (so what did not change is not redrawn); it
/// passes them through [`LiveState::apply`] for each event of a batch.
#[derive(Debug, Clone, PartialEq)]
struct LiveState {
    job: JobView,
    /// The task table's page.
    tasks: Vec<TaskView>,
    /// The DAG picture's tasks (empty without a picture).
    picture_tasks: Vec<TaskView>,
    /// The newest output lines, at most `LOG_LINES`.
    output: Vec<EventView>,
    /// Whether older lines than the log's first exist (a link to them is shown).
    output_older: bool,
    /// The newest event applied: one at or before it was applied already (a
    /// reconnected stream may send it again).
    last_event_id: i64,
    /// Whether new output is added: not while the page shows older lines.
    following_output: bool,
}

/// What one event changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Applied {
    /// Nothing: it was applied already, or the page does not show its kind live.
    Nothing,
    /// A task's state, and maybe the job's: the counts by step are stale.
    TaskState,
    /// The log.
    Output,
}

/// Moves a signal's value out without notifying (see [`put_back`]).
fn taken<T: Default + Send + Sync + 'static>(signal: RwSignal<T>) -> T {
    signal
        .try_update_untracked(std::mem::take)
        .unwrap_or_default()
}

/// Puts a value [`taken`] back, notifying only when it `changed`.
fn put_back<T: Send + Sync + 'static>(signal: RwSignal<T>, value: T, changed: bool) {
    if changed {
        let _ = signal.try_set(value);
    } else {
        let _ = signal.try_update_untracked(|old| *old = value);
    }
}

impl LiveState {
    fn apply(&mut self, event: EventView) -> Applied {
        if event.id <= self.last_event_id {
            return Applied::Nothing;
        }
        self.last_event_id = event.id;
        match event.kind {
            EventKind::State => {
                apply_state_event(&mut self.job, &mut self.tasks, &event);
                apply_state_event(&mut self.job, &mut self.picture_tasks, &event);
                Applied::TaskState
            }
            EventKind::Output if self.following_output => {
                if append_output(&mut self.output, vec![event]) {
                    self.output_older = true;
                }
                Applied::Output
            }
            _ => Applied::Nothing,
        }
    }
}

/// Tasks done and all tasks, counted from the steps. Skipped ones (passed over by a
/// forced delete) are done too, though not succeeded.
fn progress_of(groups: &[TaskGroupView]) -> (u64, u64) {
    groups.iter().fold((0, 0), |(done, total), group| {
        (
            done + group.count(TaskState::Succeeded) + group.count(TaskState::Skipped),
            total + group.total(),
        )
    })
}

/// What runs now, by step: `install web (12), start db (1)`.
fn running_steps(groups: &[TaskGroupView]) -> String {
    groups
        .iter()
        .filter_map(|group| {
            let running = group.count(TaskState::Running);
            (running > 0).then(|| format!("{} ({running})", group.label()))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The time left at the pace so far, for a job too large to estimate step by step:
/// the tasks left take as long per task as the done ones took.
fn time_left_by_pace(done: u64, total: u64, ran_ms: i64) -> Option<i64> {
    if done == 0 || done >= total || ran_ms <= 0 {
        return None;
    }
    let per_task = ran_ms as f64 / done as f64;
    Some((per_task * (total - done) as f64) as i64)
}

#[component]
fn LiveJob(
    page: JobPage,
    retry: ServerAction<RetryJob>,
    cancel: ServerAction<CancelJob>,
    finished: RwSignal<u32>,
) -> impl IntoView {
    let hostnames: HashMap<u32, String> = page.hostnames.iter().cloned().collect();
    let job = RwSignal::new(page.job.clone());
    let tasks = RwSignal::new(page.tasks.clone());
    let groups = RwSignal::new(page.groups.clone());
    let picture_tasks = RwSignal::new(
        page.picture
            .as_ref()
            .map(|picture| picture.tasks.clone())
            .unwrap_or_default(),
    );
    let output = RwSignal::new(page.output.clone());
    let output_older = RwSignal::new(page.output_older);
    let selected = RwSignal::new(None::<String>);
    let now = RwSignal::new(now_ms());
    let listing = page.listing.clone();
    // Older output stays as it is; the newest grows as the job writes.
    let following_output = listing.before.is_none();
    let seen = StoredValue::new(page.last_event_id);
    let counts_stale = StoredValue::new(false);
    let job_id = page.job.id.clone();
    let on_batch = {
        let job_id = job_id.clone();
        move |batch: Vec<EventView>| {
            // The values move out of their signals and back without notifying, so only
            // the signals an event changed redraw what shows them.
            let mut live = LiveState {
                job: job.get_untracked(),
                tasks: taken(tasks),
                picture_tasks: taken(picture_tasks),
                output: taken(output),
                output_older: output_older.get_untracked(),
                last_event_id: seen.get_value(),
                following_output,
            };
            let applied: Vec<Applied> = batch.into_iter().map(|event| live.apply(event)).collect();
            seen.set_value(live.last_event_id);
            let states_changed = applied.contains(&Applied::TaskState);
            put_back(tasks, live.tasks, states_changed);
            put_back(picture_tasks, live.picture_tasks, states_changed);
            put_back(output, live.output, applied.contains(&Applied::Output));
            if states_changed {
                let _ = job.try_set(live.job);
                recount_soon(job_id.clone(), groups, counts_stale);
            }
            if live.output_older && !output_older.get_untracked() {
                let _ = output_older.try_set(true);
            }
        }
    };
    if !page.job.state.is_finished() {
        let live = LiveSignals { job, finished, now };
        follow_stream(job_id.clone(), page.last_event_id, live, on_batch);
    }
    let cluster_href = format!("/clusters/{}", page.cluster_id);
    let title = format!(
        "{} · {} · Corral",
        page.job.operation.label(),
        page.cluster_name
    );
    let progress = Memo::new(move |_| groups.with(|groups| progress_of(groups)));
    let elapsed = move || {
        let job = job.get();
        match (job.started_at_ms, job.finished_at_ms) {
            (Some(start), Some(end)) => duration(end - start),
            (Some(start), None) => duration(now.get() - start),
            _ => "not started".to_owned(),
        }
    };
    let dag = page.picture.as_ref().map(|picture| picture.dag.clone());
    let time_left = move || {
        let (started, state) = job.with(|job| (job.started_at_ms, job.state));
        if state.is_finished() {
            return String::new();
        }
        let left = match &dag {
            Some(dag) => picture_tasks
                .with(|tasks| crate::components::estimate::time_left_ms(dag, tasks, now.get())),
            None => {
                let (done, total) = progress.get();
                started.and_then(|start| time_left_by_pace(done, total, now.get() - start))
            }
        };
        match left {
            Some(ms) => format!("about {} left", duration(ms)),
            None => "estimating the time left…".to_owned(),
        }
    };
    let current_steps = move || groups.with(|groups| running_steps(groups));
    let hostnames_for_failure = hostnames.clone();
    let cluster_id = page.cluster_id.clone();
    let links = page.links.clone();
    let failure = page.failure.clone();
    let picture = page.picture.clone();
    let older_href = move || {
        output
            .with(|log| log.first().map(|event| event.id))
            .map(|first| listing.href_output_before(first))
    };
    let viewing_older = page.listing.before.is_some();
    let newest_href = page.listing.href(page.listing.page);
    view! {
        <Title text=title/>
        // Without JavaScript the page reloads itself until the job ends. (Inner HTML:
        // with JavaScript on, browsers keep a <noscript>'s content as text, which
        // hydration must not look into.)
        {move || (!job.get().state.is_finished()).then(|| view! {
            <noscript inner_html=r#"<meta http-equiv="refresh" content="3">"#></noscript>
        })}
        <nav class="crumbs" aria-label="Breadcrumb">
            <a href="/clusters">"Clusters"</a> " / "
            <a href=cluster_href.clone()>{page.cluster_name.clone()}</a> " / job"
        </nav>
        <div class="page-head">
            <h1>
                {if page.job.forced { "forced " } else { "" }}
                {page.job.operation.label()} " " {page.cluster_name.clone()}
            </h1>
            {move || view! { <StateBadge state=job.get().state/> }}
        </div>
        <section class="card progress-card" data-testid="job-progress">
            <div class="progress-line">
                <progress max=move || progress.get().1 value=move || progress.get().0></progress>
                <span data-testid="progress-count">{move || format!("{} of {} tasks done", progress.get().0, progress.get().1)}</span>
                <span class="muted">{move || format!("elapsed {}", elapsed())}</span>
                <span class="muted" data-testid="time-left">{time_left}</span>
            </div>
            <p class="muted">{move || {
                let steps = current_steps();
                if steps.is_empty() { String::new() } else { format!("Now: {steps}") }
            }}</p>
            {
                let job_id = job_id.clone();
                move || {
                    let job_id = job_id.clone();
                        (!job.get().state.is_finished()).then(move || view! {
                        <ActionForm action=cancel attr:class="inline">
                            <CsrfField/>
                            <input type="hidden" name="job_id" value=job_id/>
                            <button class="button button-quiet button-small" type="submit">"Cancel job"</button>
                        </ActionForm>
                    })
                }
            }
        </section>
        {move || {
            let current = job.get();
            match current.state {
                JobState::Failed | JobState::Cancelled => view! {
                    <FailurePanel job=current failure=failure.clone()
                        hostnames=hostnames_for_failure.clone() cluster_id=cluster_id.clone()
                        retry/>
                }.into_any(),
                JobState::Succeeded if current.operation == api_types::Operation::Delete => view! {
                    <section class="card banner-ok" role="status" data-testid="job-succeeded">
                        <h2>"Deleted"</h2>
                        <p>"Every node of the cluster is gone. " <a href="/clusters">"Back to your clusters"</a></p>
                    </section>
                }.into_any(),
                JobState::Succeeded => {
                    let links = links.clone();
                    let cluster_href = format!("/clusters/{}", cluster_id);
                    view! {
                        <section class="card banner-ok" role="status" data-testid="job-succeeded">
                            <h2>"Done"</h2>
                            {if links.is_empty() {
                                view! { <p><a href=cluster_href>"Go to the cluster"</a></p> }.into_any()
                            } else {
                                view! {
                                    <ul class="links" data-testid="service-links">
                                        {links.into_iter().filter(|link| domain::catalog::Link::is_web_url(&link.url)).map(|link| view! {
                                            <li><a href=link.url.clone() target="_blank" rel="noopener">{link.label}</a> " " <code>{link.url}</code></li>
                                        }).collect_view()}
                                    </ul>
                                }.into_any()
                            }}
                        </section>
                    }.into_any()
                }
                _ => ().into_any(),
            }
        }}
        <section class="card">
            <h2>"Task graph"</h2>
            <TaskGroups groups/>
            {picture.map(|picture| {
                // A memo, not a derived signal: every box reads the map (its class and
                // its title), and a derived signal would build it again for each read,
                // the task count squared per render and per live update.
                let states = Memo::new(move |_| {
                    picture_tasks.with(|tasks| {
                        tasks
                            .iter()
                            .map(|task| (task.number, task.state))
                            .collect::<HashMap<u32, TaskState>>()
                    })
                });
                view! {
                    <DagPicture dag=picture.dag states hostnames=hostnames.clone()/>
                    <p class="legend">
                        <span class="state state-idle">"planned"</span> " "
                        <span class="state state-busy">"running"</span> " "
                        <span class="state state-ok">"succeeded"</span> " "
                        <span class="state state-bad">"failed"</span>
                    </p>
                }
            })}
        </section>
        <div class="job-grid">
            <section class="card" id="tasks">
                <h2>"Tasks"</h2>
                <TaskTable tasks selected hostnames=hostnames.clone()
                    listing=page.listing.clone() matching=page.tasks_matching/>
            </section>
            <section class="card" id="output">
                <h2>
                    "Output"
                    {move || selected.get().map(|_| view! {
                        " " <button class="button button-small button-quiet" on:click=move |_| selected.set(None)>"show all tasks"</button>
                    })}
                </h2>
                {move || (output_older.get()).then(|| older_href().map(|href| view! {
                    <p class="muted" data-testid="older-output">"Earlier output is not shown: " <a href=href>"older lines"</a></p>
                }))}
                {viewing_older.then(|| view! {
                    <p class="muted">"Older output. " <a href=newest_href.clone()>"The newest lines"</a></p>
                })}
                <LogView output picture_tasks page_tasks=tasks selected/>
            </section>
        </div>
    }
}

fn step_name(task: &TaskView, hostnames: &HashMap<u32, String>) -> String {
    let node = hostnames
        .get(&task.node)
        .cloned()
        .unwrap_or_else(|| format!("node {}", task.node));
    format!("{} on {node}", task.label())
}

/// The job's tasks by step, one line each with its counts by state, opening (without
/// JavaScript too: a `<details>`) to links that list the step's tasks in the task table.
#[component]
fn TaskGroups(groups: RwSignal<Vec<TaskGroupView>>) -> impl IntoView {
    let keys = move || {
        groups.with(|groups| {
            groups
                .iter()
                .map(|group| (group.action, group.service.clone()))
                .collect::<Vec<_>>()
        })
    };
    view! {
        <ul class="task-groups" data-testid="task-groups">
            <For each=keys key=|key| key.clone() let:key>
                {
                    let (action, service) = key;
                    let current = Memo::new({
                        let service = service.clone();
                        move |_| {
                            groups.with(|groups| {
                                groups
                                    .iter()
                                    .find(|group| group.action == action && group.service == service)
                                    .cloned()
                            })
                        }
                    });
                    let label = match &service {
                        Some(service) => format!("{action} {service}"),
                        None => action.to_string(),
                    };
                    let all = TaskListing::step_href(action, service.as_deref(), None);
                    let count = move |state: TaskState| current.with(|group| group.as_ref().map_or(0, |group| group.count(state)));
                    let total = move || current.with(|group| group.as_ref().map_or(0, TaskGroupView::total));
                    let summary = move || {
                        current.with(|group| {
                            group.as_ref().map(|group| {
                                group.counts.iter().map(|count| format!("{} {}", count.tasks, count.state)).collect::<Vec<_>>().join(", ")
                            })
                        }).unwrap_or_default()
                    };
                    let state_links = move || {
                        let counts = current.with(|group| group.as_ref().map(|group| group.counts.clone()).unwrap_or_default());
                        counts.into_iter().map(|count| {
                            let href = TaskListing::step_href(action, service.as_deref(), Some(count.state));
                            view! { " · " <a href=href>{format!("{} {}", count.tasks, count.state)}</a> }
                        }).collect_view()
                    };
                    let failed = move || count(TaskState::Failed) > 0;
                    view! {
                        <li class:group-failed=failed>
                            <details>
                                <summary>
                                    <progress max=total value=move || count(TaskState::Succeeded) + count(TaskState::Skipped)></progress>
                                    " " <strong>{label}</strong> " — " {total} " tasks: " {summary}
                                </summary>
                                <p class="group-links">"In the task table: " <a href=all>"all"</a> {state_links}</p>
                            </details>
                        </li>
                    }
                }
            </For>
        </ul>
    }
}

#[component]
fn TaskTable(
    tasks: RwSignal<Vec<TaskView>>,
    selected: RwSignal<Option<String>>,
    hostnames: HashMap<u32, String>,
    listing: TaskListing,
    /// How many tasks the listing keeps over every page.
    matching: u64,
) -> impl IntoView {
    let hostnames = StoredValue::new(hostnames);
    let pages = matching.div_ceil(u64::from(TASKS_PER_PAGE)).max(1);
    let first_row = u64::from(listing.offset()) + 1;
    let filtered = listing.is_filtered();
    let shown = move || tasks.with(Vec::len) as u64;
    let range = move || {
        let shown = shown();
        if shown == 0 {
            if matching == 0 {
                "No tasks match.".to_owned()
            } else {
                format!("No tasks on this page ({matching} match).")
            }
        } else {
            format!(
                "Tasks {first_row}–{} of {matching}{}",
                first_row + shown - 1,
                if filtered { " matching" } else { "" }
            )
        }
    };
    let page = u64::from(listing.page);
    let previous = (page > 1).then(|| listing.href(listing.page - 1));
    let next = (page < pages).then(|| listing.href(listing.page + 1));
    let states = TaskState::ALL
        .iter()
        .map(|state| {
            let chosen = listing.state == Some(*state);
            view! { <option value=state.as_str() selected=chosen>{state.as_str()}</option> }
        })
        .collect_view();
    let step = match (&listing.action, &listing.service) {
        (None, None) => None,
        (action, service) => Some(
            [action.map(|action| action.to_string()), service.clone()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" "),
        ),
    };
    view! {
        <Form method="GET" action="" attr:class="filters" attr:data-testid="task-filters">
            <label>"State"
                <select name="state">
                    <option value="" selected=listing.state.is_none()>"any"</option>
                    {states}
                </select>
            </label>
            <label>"Node"
                <input type="number" name="node" min="0" class="input-narrow"
                    value=listing.node.map(|node| node.to_string()).unwrap_or_default()/>
            </label>
            {listing.action.map(|action| view! { <input type="hidden" name="action" value=action.as_str()/> })}
            {listing.service.clone().map(|service| view! { <input type="hidden" name="service" value=service/> })}
            <button class="button button-quiet button-small" type="submit">"Filter"</button>
            {filtered.then(|| view! { <a href="?">"show every task"</a> })}
        </Form>
        {step.map(|step| view! { <p class="muted">"Step: " <strong>{step}</strong></p> })}
        <p class="muted" data-testid="task-range">{range}</p>
        <div class="table-scroll tasks-scroll">
            <table class="data compact" data-testid="task-table">
                <thead><tr>
                    <th scope="col" class="num">"#"</th><th scope="col">"Node"</th>
                    <th scope="col">"Step"</th><th scope="col">"State"</th>
                    <th scope="col" class="num">"Tries"</th><th scope="col">"Took"</th>
                </tr></thead>
                <tbody>
                    <For each=move || tasks.get() key=|task| (task.id.clone(), task.state, task.attempts) let:task>
                        {
                            let id = task.id.clone();
                            let id_for_click = id.clone();
                            let node = hostnames.with_value(|names| names.get(&task.node).cloned())
                                .unwrap_or_else(|| format!("node {}", task.node));
                            let took = match (task.started_at_ms, task.finished_at_ms) {
                                (Some(start), Some(end)) => duration(end - start),
                                (Some(_), None) => "running".to_owned(),
                                _ => "—".to_owned(),
                            };
                            view! {
                                <tr class:row-selected=move || selected.get().as_deref() == Some(id.as_str())
                                    data-task=task.number>
                                    <td class="num">{task.number}</td>
                                    <td><a href=TaskListing::node_href(task.node) title="This node's tasks">{node}</a></td>
                                    <td>
                                        <button class="linklike" title="Show this task's output"
                                            on:click=move |_| selected.set(Some(id_for_click.clone()))>
                                            {task.label()}
                                        </button>
                                        {task.error.clone().map(|error| view! { <div class="error-text">{error}</div> })}
                                    </td>
                                    <td><StateBadge state=task.state/></td>
                                    <td class="num">{format!("{}/{}", task.attempts, task.max_attempts)}</td>
                                    <td>{took}</td>
                                </tr>
                            }
                        }
                    </For>
                </tbody>
            </table>
        </div>
        {(pages > 1).then(|| view! {
            <nav class="pager" aria-label="Task pages" data-testid="task-pager">
                {previous.map(|href| view! { <a href=href rel="prev">"← previous"</a> })}
                <span>{format!("page {page} of {pages}")}</span>
                {next.map(|href| view! { <a href=href rel="next">"next →"</a> })}
            </nav>
        })}
    }
}

#[component]
fn LogView(
    output: RwSignal<Vec<EventView>>,
    picture_tasks: RwSignal<Vec<TaskView>>,
    page_tasks: RwSignal<Vec<TaskView>>,
    selected: RwSignal<Option<String>>,
) -> impl IntoView {
    // Tasks the page has: every one of a small job, the table's page of a large one.
    let labels = Memo::new(move |_| {
        let mut labels = HashMap::new();
        for tasks in [picture_tasks, page_tasks] {
            tasks.with(|tasks| {
                for task in tasks {
                    labels.insert(
                        task.id.clone(),
                        format!("#{} {}", task.number, task.label()),
                    );
                }
            });
        }
        labels
    });
    let shown = move || {
        let selected = selected.get();
        output.with(|events| {
            events
                .iter()
                .filter(|event| selected.is_none() || event.task_id == selected)
                .cloned()
                .collect::<Vec<_>>()
        })
    };
    view! {
        <pre class="log" data-testid="job-log" aria-live="polite"><For each=shown key=|event| event.id let:event>
            {
                let label = event.task_id.as_ref()
                    .and_then(|task| labels.with(|labels| labels.get(task).cloned()))
                    .unwrap_or_default();
                let class = match event.stream {
                    Some(OutputStream::Stderr) => "line line-err",
                    Some(OutputStream::Notice) => "line line-notice",
                    _ => "line",
                };
                view! {
                    <span class=class data-event=event.id><span class="line-task">{label}</span>" "{event.data.trim_end().to_owned()}"\n"</span>
                }
            }
        </For></pre>
    }
}

#[component]
fn FailurePanel(
    job: JobView,
    failure: Option<FailedTask>,
    hostnames: HashMap<u32, String>,
    cluster_id: String,
    retry: ServerAction<RetryJob>,
) -> impl IntoView {
    let output = failure
        .as_ref()
        .map(|failure| failure.output.join("\n"))
        .unwrap_or_default();
    let headline = match &failure {
        Some(failure) => format!("{} failed", step_name(&failure.task, &hostnames)),
        None => format!("The job was {}", job.state),
    };
    let retry_error = action_error(retry);
    let rollback = format!("/clusters/{cluster_id}?op=rollback&job_id={}", job.id);
    // A delete that failed at a stop or remove step can only be finished by forcing it.
    let failed_delete = job.operation == api_types::Operation::Delete;
    let delete = if failed_delete {
        format!("/clusters/{cluster_id}?op=delete&force=on")
    } else {
        format!("/clusters/{cluster_id}?op=delete")
    };
    view! {
        <section class="card failure" role="alert" data-testid="failure-panel">
            <h2>{headline}</h2>
            {job.error.clone().map(|error| view! { <p class="error-text">{error}</p> })}
            {(!output.is_empty()).then(|| view! {
                <h3>"Its output"</h3>
                <pre class="log log-short">{output}</pre>
            })}
            <h3>"What you can do"</h3>
            <div class="actions">
                <ActionForm action=retry attr:class="inline">
                    <CsrfField/>
                    <input type="hidden" name="job_id" value=job.id.clone()/>
                    <button class="button" type="submit" data-testid="retry-job">"Retry from the failure"</button>
                </ActionForm>
                {job.can_roll_back.then(|| view! { <a class="button button-quiet" href=rollback>"Roll back (preview first)"</a> })}
                <a class="button button-quiet" href=delete data-testid="delete-after-failure">
                    {if failed_delete {
                        "Delete anyway, passing over failed steps (preview first)"
                    } else {
                        "Delete the cluster (preview first)"
                    }}
                </a>
            </div>
            <FormError error=retry_error/>
            <p class="hint">"Fix the cause first (a script, a service on the node, a full disk), then retry: steps that succeeded are not run again."</p>
            {failed_delete.then(|| view! {
                <p class="hint">"If the node is gone or the service cannot be stopped, delete anyway: the failed stop and remove steps are reported and passed over, and every node is deleted."</p>
            })}
        </section>
    }
}

/// What the page shows live while the job runs besides what its events change, which
/// the stream follower updates in the browser.
#[derive(Clone, Copy)]
// Read only by the browser's stream follower (`crate::live`).
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
pub(crate) struct LiveSignals {
    /// The job, replaced by its final state when the stream ends.
    pub job: RwSignal<JobView>,
    /// Bumped when the stream ends, so the page reads the final states.
    pub finished: RwSignal<u32>,
    /// The clock the elapsed time counts with, ticking every second.
    pub now: RwSignal<i64>,
}

/// Follows the job's event stream in the browser from after event `after`: what
/// arrives goes to `on_batch` once per animation frame. Does nothing on the server,
/// which renders what there is so far.
#[allow(unused_variables)]
fn follow_stream(
    job_id: String,
    after: i64,
    live: LiveSignals,
    on_batch: impl Fn(Vec<EventView>) + 'static,
) {
    #[cfg(feature = "hydrate")]
    crate::live::follow(job_id, after, live, on_batch);
}

/// Reads the job's counts by step again soon (at most once a second however many
/// tasks change), in the browser.
#[allow(unused_variables)]
fn recount_soon(job_id: String, groups: RwSignal<Vec<TaskGroupView>>, stale: StoredValue<bool>) {
    #[cfg(feature = "hydrate")]
    crate::live::recount_soon(job_id, groups, stale);
}

#[cfg(test)]
mod tests {
    use api_types::{
        EventKind, EventView, JobState, JobView, TaskAction, TaskGroupView, TaskState,
        TaskStateCount, TaskView,
    };

    use super::{
        append_output, apply_state_event, progress_of, running_steps, time_left_by_pace, Applied,
        LiveState, LOG_LINES,
    };

    fn job(state: JobState) -> JobView {
        JobView {
            id: "j".into(),
            cluster_id: "c".into(),
            operation: api_types::Operation::Create,
            state,
            tasks_total: 1,
            tasks_succeeded: 0,
            created_at_ms: 0,
            started_at_ms: None,
            finished_at_ms: None,
            error: None,
            forced: false,
            can_roll_back: false,
        }
    }

    fn task(state: TaskState) -> TaskView {
        TaskView {
            id: "t".into(),
            number: 1,
            node: 1,
            service: Some("web".into()),
            action: TaskAction::Install,
            state,
            attempts: 0,
            max_attempts: 3,
            started_at_ms: None,
            finished_at_ms: None,
            error: None,
        }
    }

    fn state_event(at_ms: i64, state: TaskState, attempt: i64) -> EventView {
        EventView {
            id: at_ms,
            task_id: Some("t".into()),
            attempt: Some(attempt),
            at_ms,
            kind: EventKind::State,
            stream: None,
            data: String::new(),
            task_state: Some(state),
        }
    }

    #[test]
    fn a_started_task_runs_its_job_and_counts_its_attempt() {
        let (mut job, mut tasks) = (job(JobState::Queued), vec![task(TaskState::Ready)]);
        apply_state_event(
            &mut job,
            &mut tasks,
            &state_event(10, TaskState::Running, 2),
        );
        assert_eq!(
            (job.state, job.started_at_ms),
            (JobState::Running, Some(10))
        );
        assert_eq!(tasks[0].state, TaskState::Running);
        assert_eq!((tasks[0].attempts, tasks[0].started_at_ms), (2, Some(10)));
        apply_state_event(&mut job, &mut tasks, &state_event(25, TaskState::Failed, 2));
        assert_eq!(tasks[0].state, TaskState::Failed);
        assert_eq!(tasks[0].finished_at_ms, Some(25));
        // The job's own end comes from the stream's end, not from a task's.
        assert_eq!(job.state, JobState::Running);
    }

    #[test]
    fn output_and_other_tasks_events_change_nothing() {
        let (mut job, mut tasks) = (job(JobState::Queued), vec![task(TaskState::Ready)]);
        let mut output = state_event(5, TaskState::Running, 1);
        output.kind = EventKind::Output;
        apply_state_event(&mut job, &mut tasks, &output);
        let mut other = state_event(6, TaskState::Succeeded, 1);
        other.task_id = Some("another".into());
        apply_state_event(&mut job, &mut tasks, &other);
        assert_eq!(job.state, JobState::Queued);
        assert_eq!(tasks[0].state, TaskState::Ready);
    }

    fn line(id: i64) -> EventView {
        EventView {
            kind: EventKind::Output,
            ..state_event(id, TaskState::Running, 1)
        }
    }

    /// A queued job's page that read up to event 10, its one task on the page and in
    /// the picture.
    fn live(following_output: bool) -> LiveState {
        LiveState {
            job: job(JobState::Queued),
            tasks: vec![task(TaskState::Ready)],
            picture_tasks: vec![task(TaskState::Ready)],
            output: vec![line(4)],
            output_older: false,
            last_event_id: 10,
            following_output,
        }
    }

    #[test]
    fn the_live_state_applies_each_new_event() {
        let mut elsewhere = state_event(12, TaskState::Running, 1);
        elsewhere.task_id = Some("another".into());
        type Change = fn(&mut LiveState);
        // (name, following output, event, what it changed, the state it leaves from `live`'s)
        #[rustfmt::skip]
        let cases: [(&str, bool, EventView, Applied, Change); 9] = [
            ("a state seen already", true, state_event(10, TaskState::Running, 1), Applied::Nothing, |_| {}),
            ("a line seen already", true, line(3), Applied::Nothing, |_| {}),
            ("a task starts", true, state_event(11, TaskState::Running, 2), Applied::TaskState, |live| {
                live.last_event_id = 11;
                live.job.state = JobState::Running;
                live.job.started_at_ms = Some(11);
                for task in [&mut live.tasks[0], &mut live.picture_tasks[0]] {
                    (task.state, task.attempts, task.started_at_ms) = (TaskState::Running, 2, Some(11));
                }
            }),
            ("a task off the page starts", true, elsewhere, Applied::TaskState, |live| {
                live.last_event_id = 12;
                live.job.state = JobState::Running;
                live.job.started_at_ms = Some(12);
            }),
            ("a task fails", true, state_event(13, TaskState::Failed, 1), Applied::TaskState, |live| {
                live.last_event_id = 13;
                for task in [&mut live.tasks[0], &mut live.picture_tasks[0]] {
                    (task.state, task.finished_at_ms) = (TaskState::Failed, Some(13));
                }
            }),
            ("a task waits", true, state_event(14, TaskState::Pending, 1), Applied::TaskState, |live| {
                live.last_event_id = 14;
                live.tasks[0].state = TaskState::Pending;
                live.picture_tasks[0].state = TaskState::Pending;
            }),
            ("a line", true, line(15), Applied::Output, |live| {
                live.last_event_id = 15;
                live.output.push(line(15));
            }),
            ("a line while older lines are shown", false, line(15), Applied::Nothing, |live| {
                live.last_event_id = 15;
            }),
            ("a state while older lines are shown", false, state_event(16, TaskState::Skipped, 1), Applied::TaskState, |live| {
                live.last_event_id = 16;
                for task in [&mut live.tasks[0], &mut live.picture_tasks[0]] {
                    (task.state, task.finished_at_ms) = (TaskState::Skipped, Some(16));
                }
            }),
        ];
        for (name, following_output, event, applied, change) in cases {
            let mut state = live(following_output);
            let mut expected = live(following_output);
            change(&mut expected);
            assert_eq!(state.apply(event.clone()), applied, "{name}");
            assert_eq!(state, expected, "{name}");
            // A reconnected stream sends it again: nothing changes.
            assert_eq!(state.apply(event), Applied::Nothing, "{name}, again");
            assert_eq!(state, expected, "{name}, again");
        }
    }

    #[test]
    fn a_full_live_log_drops_its_oldest_line_and_says_so() {
        let mut state = live(true);
        state.output = (1..=LOG_LINES as i64).map(line).collect();
        state.last_event_id = LOG_LINES as i64;
        let next = LOG_LINES as i64 + 1;
        assert_eq!(state.apply(line(next)), Applied::Output);
        assert_eq!(state.output.len(), LOG_LINES);
        assert_eq!(state.output.first().map(|event| event.id), Some(2));
        assert_eq!(state.output.last().map(|event| event.id), Some(next));
        assert!(state.output_older);
    }

    #[test]
    fn the_log_keeps_the_newest_lines() {
        let line = |id: i64| EventView {
            kind: EventKind::Output,
            ..state_event(id, TaskState::Running, 1)
        };
        let mut log: Vec<EventView> = (1..=LOG_LINES as i64 - 1).map(line).collect();
        assert!(!append_output(&mut log, vec![line(1_000)]));
        assert!(append_output(&mut log, vec![line(1_001), line(1_002)]));
        assert_eq!(log.len(), LOG_LINES);
        assert_eq!(log.first().map(|event| event.id), Some(3));
        assert_eq!(log.last().map(|event| event.id), Some(1_002));
    }

    #[test]
    fn progress_and_what_runs_are_counted_by_step() {
        let group = |action: TaskAction, counts: &[(TaskState, u64)]| TaskGroupView {
            action,
            service: Some("web".into()),
            first_number: 0,
            counts: counts
                .iter()
                .map(|(state, tasks)| TaskStateCount {
                    state: *state,
                    tasks: *tasks,
                })
                .collect(),
        };
        let groups = [
            group(
                TaskAction::Install,
                &[(TaskState::Succeeded, 998), (TaskState::Running, 2)],
            ),
            group(
                TaskAction::Start,
                &[(TaskState::Skipped, 1), (TaskState::Pending, 999)],
            ),
        ];
        assert_eq!(progress_of(&groups), (999, 2_000));
        assert_eq!(running_steps(&groups), "install web (2)");
        // 999 done in 999 s: 1,001 left take as long each.
        assert_eq!(time_left_by_pace(999, 2_000, 999_000), Some(1_001_000));
        assert_eq!(time_left_by_pace(0, 2_000, 999_000), None);
        assert_eq!(time_left_by_pace(2_000, 2_000, 999_000), None);
    }
}
