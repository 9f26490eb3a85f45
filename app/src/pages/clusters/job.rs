//! `/clusters/{id}/jobs/{job}`: a job, live. The server renders the DAG, the task
//! table and every output line so far; in the browser the page then follows the
//! job's event stream (Server-Sent Events) from the last line it rendered, so a
//! reload or a reconnect neither loses nor repeats a line. Without JavaScript the
//! page refreshes itself every few seconds until the job ends.
//!
//! After a failure the page says which step failed on which node, shows its
//! output, and offers retry from the failure, a previewed rollback, or deleting
//! the cluster; after success, the links the cluster exposes.

use std::collections::HashMap;

use api_types::{EventKind, EventView, JobState, JobView, OutputStream, TaskState, TaskView};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

use crate::components::dag::DagPicture;
use crate::components::errors::{action_error, FormError, PageError};
use crate::components::session::CsrfField;
use crate::components::state::StateBadge;
use crate::components::time::{duration, now_ms};
use crate::server_fns::jobs::cancel::CancelJob;
use crate::server_fns::jobs::retry::RetryJob;
use crate::server_fns::jobs::show::load_job_page;
use crate::server_fns::jobs::JobPage;

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
    let retry = ServerAction::<RetryJob>::new();
    let cancel = ServerAction::<CancelJob>::new();
    // Bumped when the stream ends, so the final states are read once more.
    let finished = RwSignal::new(0u32);
    let page = Resource::new(
        move || {
            (
                ids.get(),
                retry.version().get(),
                cancel.version().get(),
                finished.get(),
            )
        },
        |((cluster, job), ..)| load_job_page(cluster, job),
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
    let events = RwSignal::new(page.events.clone());
    let selected = RwSignal::new(None::<String>);
    let states = Signal::derive(move || {
        tasks.with(|tasks| {
            tasks
                .iter()
                .map(|task| (task.number, task.state))
                .collect::<HashMap<u32, TaskState>>()
        })
    });
    let now = RwSignal::new(now_ms());
    let on_event = move |event: EventView| {
        let last = events.with_untracked(|events| events.last().map_or(0, |event| event.id));
        if event.id <= last {
            return;
        }
        if event.kind == EventKind::State {
            job.update(|job| tasks.update(|tasks| apply_state_event(job, tasks, &event)));
        }
        events.update(|events| events.push(event));
    };
    if !page.job.state.is_finished() {
        let live = LiveSignals {
            events,
            job,
            finished,
            now,
        };
        follow_stream(page.job.id.clone(), live, on_event);
    }
    let cluster_href = format!("/clusters/{}", page.cluster_id);
    let title = format!("{} · {} · Corral", page.job.operation, page.cluster_name);
    let progress = move || {
        tasks.with(|tasks| {
            // Passed over by a forced delete: done too, though not succeeded.
            let done = tasks
                .iter()
                .filter(|task| matches!(task.state, TaskState::Succeeded | TaskState::Skipped))
                .count();
            (done, tasks.len())
        })
    };
    let elapsed = move || {
        let job = job.get();
        match (job.started_at_ms, job.finished_at_ms) {
            (Some(start), Some(end)) => duration(end - start),
            (Some(start), None) => duration(now.get() - start),
            _ => "not started".to_owned(),
        }
    };
    let dag = page.dag.clone();
    let time_left = move || {
        if job.with(|job| job.state.is_finished()) {
            return String::new();
        }
        let left =
            tasks.with(|tasks| crate::components::estimate::time_left_ms(&dag, tasks, now.get()));
        match left {
            Some(ms) => format!("about {} left", duration(ms)),
            None => "estimating the time left…".to_owned(),
        }
    };
    let current_steps = move || {
        tasks.with(|tasks| {
            tasks
                .iter()
                .filter(|task| task.state == TaskState::Running)
                .map(|task| step_name(task, &hostnames_of(&page.hostnames)))
                .collect::<Vec<_>>()
                .join(", ")
        })
    };
    let hostnames_for_table = hostnames.clone();
    let hostnames_for_failure = hostnames.clone();
    let job_id = page.job.id.clone();
    let cluster_id = page.cluster_id.clone();
    let links = page.links.clone();
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
                {page.job.operation.clone()} " " {page.cluster_name.clone()}
            </h1>
            {move || view! { <StateBadge state=job.get().state/> }}
        </div>
        <section class="card progress-card" data-testid="job-progress">
            <div class="progress-line">
                <progress max=move || progress().1 value=move || progress().0></progress>
                <span data-testid="progress-count">{move || format!("{} of {} tasks done", progress().0, progress().1)}</span>
                <span class="muted">{move || format!("elapsed {}", elapsed())}</span>
                <span class="muted" data-testid="time-left">{move || time_left()}</span>
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
                    <FailurePanel job=current tasks=tasks.get() events=events.get()
                        hostnames=hostnames_for_failure.clone() cluster_id=cluster_id.clone()
                        retry/>
                }.into_any(),
                JobState::Succeeded if current.operation == "delete" => view! {
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
            <DagPicture dag=page.dag.clone() states hostnames=hostnames.clone()/>
            <p class="legend">
                <span class="state state-idle">"planned"</span> " "
                <span class="state state-busy">"running"</span> " "
                <span class="state state-ok">"succeeded"</span> " "
                <span class="state state-bad">"failed"</span>
            </p>
        </section>
        <div class="job-grid">
            <section class="card">
                <h2>"Tasks"</h2>
                <TaskTable tasks selected hostnames=hostnames_for_table/>
            </section>
            <section class="card">
                <h2>
                    "Output"
                    {move || selected.get().map(|_| view! {
                        " " <button class="button button-small button-quiet" on:click=move |_| selected.set(None)>"show all tasks"</button>
                    })}
                </h2>
                {page.events_truncated.then(|| view! { <p class="muted">"Earlier output is not shown; see the API for the whole log."</p> })}
                <LogView events tasks selected/>
            </section>
        </div>
    }
}

fn hostnames_of(pairs: &[(u32, String)]) -> HashMap<u32, String> {
    pairs.iter().cloned().collect()
}

fn step_name(task: &TaskView, hostnames: &HashMap<u32, String>) -> String {
    let node = hostnames
        .get(&task.node)
        .cloned()
        .unwrap_or_else(|| format!("node {}", task.node));
    format!("{} on {node}", task.label())
}

#[component]
fn TaskTable(
    tasks: RwSignal<Vec<TaskView>>,
    selected: RwSignal<Option<String>>,
    hostnames: HashMap<u32, String>,
) -> impl IntoView {
    let hostnames = StoredValue::new(hostnames);
    view! {
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
                                    <td>{node}</td>
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
    }
}

#[component]
fn LogView(
    events: RwSignal<Vec<EventView>>,
    tasks: RwSignal<Vec<TaskView>>,
    selected: RwSignal<Option<String>>,
) -> impl IntoView {
    let labels = Memo::new(move |_| {
        tasks.with(|tasks| {
            tasks
                .iter()
                .map(|task| {
                    (
                        task.id.clone(),
                        format!("#{} {}", task.number, task.label()),
                    )
                })
                .collect::<HashMap<String, String>>()
        })
    });
    let shown = move || {
        let selected = selected.get();
        events.with(|events| {
            events
                .iter()
                .filter(|event| event.kind == EventKind::Output)
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
                let class = if event.stream == Some(OutputStream::Stderr) { "line line-err" } else { "line" };
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
    tasks: Vec<TaskView>,
    events: Vec<EventView>,
    hostnames: HashMap<u32, String>,
    cluster_id: String,
    retry: ServerAction<RetryJob>,
) -> impl IntoView {
    let failed = tasks
        .iter()
        .find(|task| task.state == TaskState::Failed)
        .cloned();
    let output: String = failed
        .as_ref()
        .map(|task| {
            let lines: Vec<&str> = events
                .iter()
                .filter(|event| {
                    event.kind == EventKind::Output
                        && event.task_id.as_deref() == Some(task.id.as_str())
                })
                .map(|event| event.data.trim_end())
                .collect();
            let tail = lines.len().saturating_sub(40);
            lines[tail..].join("\n")
        })
        .unwrap_or_default();
    let headline = match &failed {
        Some(task) => format!("{} failed", step_name(task, &hostnames)),
        None => format!("The job was {}", job.state),
    };
    let retry_error = action_error(retry);
    let rollback = format!("/clusters/{cluster_id}?op=rollback&job_id={}", job.id);
    // A delete that failed at a stop or remove step can only be finished by forcing it.
    let failed_delete = job.operation == "delete";
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

/// What the page shows live while the job runs, which its event stream updates in
/// the browser.
#[derive(Clone, Copy)]
// Read only by the browser's stream follower (`crate::live`).
#[cfg_attr(not(feature = "hydrate"), allow(dead_code))]
pub(crate) struct LiveSignals {
    /// The events shown so far; the stream starts after the last one.
    pub events: RwSignal<Vec<EventView>>,
    /// The job, replaced by its final state when the stream ends.
    pub job: RwSignal<JobView>,
    /// Bumped when the stream ends, so the page reads the final states.
    pub finished: RwSignal<u32>,
    /// The clock the elapsed time counts with, ticking every second.
    pub now: RwSignal<i64>,
}

/// Follows the job's event stream in the browser: each new event goes to
/// `on_event`. Does nothing on the server, which renders what there is so far.
#[allow(unused_variables)]
fn follow_stream(
    job_id: String,
    live: LiveSignals,
    on_event: impl Fn(EventView) + Clone + 'static,
) {
    #[cfg(feature = "hydrate")]
    crate::live::follow(job_id, live, on_event);
}

#[cfg(test)]
mod tests {
    use api_types::{EventKind, EventView, JobState, JobView, TaskState, TaskView};

    use super::apply_state_event;

    fn job(state: JobState) -> JobView {
        JobView {
            id: "j".into(),
            cluster_id: "c".into(),
            operation: "create".into(),
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
            action: "install".into(),
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
}
