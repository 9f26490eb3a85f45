//! `/admin`: the administered tenant at a glance: clusters per state, nodes,
//! busy and failed clusters, catalog size, users and quotas.

use leptos::prelude::*;
use leptos_meta::Title;

use api_types::ClusterState;

use crate::components::state::{StateBadge, Tone};
use crate::server_fns::admin::overview::admin_overview;
use crate::server_fns::admin::Overview;

#[component]
pub fn OverviewPage() -> impl IntoView {
    let overview = Resource::new(|| (), |_| admin_overview());
    view! {
        <Title text="Admin · Corral"/>
        <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match overview.await {
                    Ok(overview) => view! { <OverviewView overview/> }.into_any(),
                    Err(error) => crate::pages::admin::layout::admin_error(error),
                }
            })}
        </Suspense>
    }
}

fn limit(used: u64, max: Option<i64>) -> String {
    match max {
        Some(max) => format!("{used} of {max}"),
        None => format!("{used} (no limit)"),
    }
}

#[component]
fn OverviewView(overview: Overview) -> impl IntoView {
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
        .map(|(kind, count)| view! { <dt>{kind.clone()}</dt><dd>{*count}</dd> })
        .collect_view();
    let attention = overview
        .failed
        .iter()
        .map(|(id, name)| {
            view! {
                <li><StateBadge state=ClusterState::Failed/>" "
                    <a href=format!("/clusters/{id}")>{name.clone()}</a></li>
            }
        })
        .chain(overview.busy.iter().map(|(id, name, state)| {
            view! {
                <li><StateBadge state=*state/>" "
                    <a href=format!("/clusters/{id}")>{name.clone()}</a></li>
            }
        }))
        .collect_view();
    let failed_tasks = overview
        .failed_tasks
        .iter()
        .map(|(cluster, job, what, error)| {
            view! {
                <li><span class=Tone::Bad.class()>"failed task"</span>" "
                    <a href=format!("/clusters/{cluster}/jobs/{job}")>{what.clone()}</a>
                    " " <span class="muted">{error.clone()}</span></li>
            }
        })
        .collect_view();
    let jobs = overview
        .jobs_by_state
        .iter()
        .map(|(state, count)| {
            view! { <li><StateBadge state=*state/>" "<strong>{*count}</strong></li> }
        })
        .collect_view();
    let quiet =
        overview.failed.is_empty() && overview.busy.is_empty() && overview.failed_tasks.is_empty();
    view! {
        <div class="page-head">
            <div>
                <h1>"Overview"</h1>
                <p class="muted">"Tenant " <strong>{overview.tenant.clone()}</strong></p>
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
                <p class="muted">{overview.live_nodes} " on active clusters"</p>
            </section>
            <section class="card stat">
                <h2>"Work"</h2>
                <p class="stat-number">{overview.running_tasks}</p>
                <p class="muted">"tasks running on " {overview.busy_workers} " worker(s)"</p>
                <ul class="stat-states" aria-label="Jobs by state">{jobs}</ul>
            </section>
            <section class="card stat">
                <h2>"Quota"</h2>
                <dl class="quota">
                    <dt>"Clusters"</dt><dd>{limit(clusters, overview.max_clusters)}</dd>
                    <dt>"Nodes"</dt><dd>{limit(overview.nodes, overview.max_nodes)}</dd>
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
