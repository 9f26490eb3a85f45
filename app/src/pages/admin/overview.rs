//! `/admin`: the administered tenant at a glance: clusters per state, nodes,
//! busy and failed clusters, catalog size, users and quotas.

use api_types::{FailedTaskView, OverviewView};
use leptos::prelude::*;
use leptos_meta::Title;

use crate::components::state::{StateBadge, Tone};
use crate::server_fns::admin::overview::admin_overview;
use crate::server_fns::admin::{ConsoleKind, EntityKind};

#[component]
pub fn OverviewPage() -> impl IntoView {
    let overview = Resource::new(|| (), |_| admin_overview());
    view! {
        <Title text="Admin · Corral"/>
        <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match overview.await {
                    Ok(overview) => view! { <OverviewCards overview/> }.into_any(),
                    Err(error) => crate::pages::admin::layout::admin_error(error),
                }
            })}
        </Suspense>
    }
}

/// `node 2 · install web`, as the attention list names a failed step.
fn step(task: &FailedTaskView) -> String {
    match &task.service {
        Some(service) => format!("node {} · {} {service}", task.node, task.action),
        None => format!("node {} · {}", task.node, task.action),
    }
}

fn limit(used: u64, max: Option<i64>) -> String {
    match max {
        Some(max) => format!("{used} of {max}"),
        None => format!("{used} (no limit)"),
    }
}

#[component]
fn OverviewCards(overview: OverviewView) -> impl IntoView {
    let clusters: u64 = overview
        .clusters_by_state
        .iter()
        .map(|(_, count)| count)
        .sum();
    let states = overview
        .clusters_by_state
        .iter()
        .map(|(state, count)| {
            view! {
                <li><StateBadge state=*state/>" "<strong>{*count}</strong></li>
            }
        })
        .collect_view();
    let catalog = overview
        .catalog
        .iter()
        .map(|(key, count)| {
            let title = EntityKind::from_key(key).map_or(key.as_str(), |kind| kind.title());
            view! { <dt>{title.to_owned()}</dt><dd>{*count}</dd> }
        })
        .collect_view();
    let attention = overview
        .failed
        .iter()
        .chain(&overview.busy)
        .map(|cluster| {
            view! {
                <li><StateBadge state=cluster.state/>" "
                    <a href=format!("/clusters/{}", cluster.id)>{cluster.name.clone()}</a></li>
            }
        })
        .collect_view();
    let failed_tasks = overview
        .activity
        .failed_tasks
        .iter()
        .map(|task| {
            view! {
                <li><span class=Tone::Bad.class()>"failed task"</span>" "
                    <a href=format!("/clusters/{}/jobs/{}", task.cluster_id, task.job_id)>{step(task)}</a>
                    " " <span class="muted">{task.error.clone().unwrap_or_default()}</span></li>
            }
        })
        .collect_view();
    let jobs = overview
        .activity
        .jobs_by_state
        .iter()
        .map(|(state, count)| {
            view! { <li><StateBadge state=*state/>" "<strong>{*count}</strong></li> }
        })
        .collect_view();
    let quiet = overview.failed.is_empty()
        && overview.busy.is_empty()
        && overview.activity.failed_tasks.is_empty();
    view! {
        <div class="page-head">
            <div>
                <h1>"Overview"</h1>
                <p class="muted">"Tenant " <strong>{overview.tenant.name.clone()}</strong></p>
            </div>
        </div>
        <div class="stats" data-testid="overview">
            <section class="card stat">
                <h2>"Clusters"</h2>
                <p class="stat-number">{clusters}</p>
                <ul class="stat-states">{states}</ul>
            </section>
            <section class="card stat">
                <h2>"Nodes"</h2>
                <p class="stat-number">{overview.nodes}</p>
                <p class="muted">{overview.active_nodes} " on active clusters"</p>
            </section>
            <section class="card stat">
                <h2>"Work"</h2>
                <p class="stat-number">{overview.activity.running_tasks}</p>
                <p class="muted">"tasks running on " {overview.activity.busy_workers} " worker(s)"</p>
                <ul class="stat-states" aria-label="Jobs by state">{jobs}</ul>
            </section>
            <section class="card stat">
                <h2>"Quota"</h2>
                <dl class="quota">
                    <dt>"Clusters"</dt><dd>{limit(clusters, overview.tenant.max_clusters)}</dd>
                    <dt>"Nodes"</dt><dd>{limit(overview.nodes, overview.tenant.max_nodes)}</dd>
                    <dt>"Users"</dt><dd>{overview.users}</dd>
                </dl>
            </section>
            <section class="card stat">
                <h2>"Catalog"</h2>
                <dl class="quota">{catalog}</dl>
                <p><a href="/admin/catalog">"Import or export"</a></p>
            </section>
        </div>
        <section class="card">
            <h2>"Needs attention"</h2>
            {if quiet {
                view! { <p class="muted">"No failed clusters or tasks, and no jobs running."</p> }.into_any()
            } else {
                view! { <ul class="plain-list">{attention}{failed_tasks}</ul> }.into_any()
            }}
        </section>
    }
}
