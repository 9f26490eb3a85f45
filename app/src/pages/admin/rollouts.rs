//! `/admin/rollouts`: the tenant's catalog rollouts, newest first: the template, its
//! state, how many clusters it upgrades at once, who started it and when, why it
//! stopped, and each cluster's outcome with a link to its upgrade job. Read-only:
//! starting a rollout is a CLI or API action, which the page names.

use api_types::{RolloutClusterState, RolloutClusterView, RolloutState, RolloutView};
use leptos::prelude::*;
use leptos_meta::Title;

use crate::components::table::DataTable;
use crate::components::time::timestamp;
use crate::pages::admin::loaded::Loaded;
use crate::server_fns::admin::rollouts::rollouts_page;

fn state_class(state: RolloutState) -> &'static str {
    match state {
        RolloutState::Running | RolloutState::Stopping => "state state-busy",
        RolloutState::Succeeded => "state state-ok",
        RolloutState::Stopped => "state state-bad",
    }
}

fn cluster_state_class(state: RolloutClusterState) -> &'static str {
    match state {
        RolloutClusterState::Running => "state state-busy",
        RolloutClusterState::Succeeded => "state state-ok",
        RolloutClusterState::Failed => "state state-bad",
        RolloutClusterState::Pending
        | RolloutClusterState::SkippedPinned
        | RolloutClusterState::Untouched => "state state-idle",
    }
}

/// One cluster of a rollout: its turn, its outcome and its upgrade job.
fn cluster_row(cluster: RolloutClusterView) -> impl IntoView {
    let cluster_href = format!("/clusters/{}", cluster.cluster_id);
    let job = cluster.job_id.clone().map(|job| {
        let href = format!("/clusters/{}/jobs/{job}", cluster.cluster_id);
        view! { <a href=href data-testid="rollout-job">"upgrade job"</a> }
    });
    view! {
        <tr data-rollout-cluster=cluster.cluster_name.clone() data-state=cluster.state.as_str()>
            <td class="num">{cluster.position}</td>
            <th scope="row"><a href=cluster_href>{cluster.cluster_name.clone()}</a></th>
            <td><span class=cluster_state_class(cluster.state)>{cluster.state.as_str()}</span></td>
            <td>{job}</td>
            <td>{cluster.note.clone().unwrap_or_default()}</td>
        </tr>
    }
}

/// One rollout: what it is, who started it, why it stopped, and its clusters.
fn rollout_card(rollout: RolloutView) -> impl IntoView {
    let rows = rollout.clusters.into_iter().map(cluster_row).collect_view();
    view! {
        <section class="card" data-rollout=rollout.id.clone() data-state=rollout.state.as_str()>
            <h2>
                {rollout.template.clone()} " "
                <span class=state_class(rollout.state)>{rollout.state.as_str()}</span>
            </h2>
            <dl class="facts">
                <dt>"Started by"</dt><dd>{rollout.created_by.clone()} " at " {timestamp(rollout.created_at_ms)}</dd>
                <dt>"At once"</dt><dd>{format!("at most {} cluster(s)", rollout.max_parallel)}</dd>
                <dt>"Id"</dt><dd><code>{rollout.id.clone()}</code></dd>
                {rollout.reason.clone().map(|reason| view! { <dt>"Reason"</dt><dd data-testid="rollout-reason">{reason}</dd> })}
            </dl>
            <DataTable numeric=&["#"] columns=&["#", "Cluster", "State", "Job", "Note"]>{rows}</DataTable>
        </section>
    }
}

#[component]
pub fn RolloutsPage() -> impl IntoView {
    let data = Resource::new(|| (), |_| rollouts_page());
    view! {
        <Title text="Rollouts · Admin · Corral"/>
        <div class="page-head"><h1>"Rollouts"</h1></div>
        <p class="muted">
            "A rollout upgrades every cluster of a template that is behind the catalog, a few at a time; the first failure stops it. Pinned clusters are passed over. Start one from the command line: "
            <code>"corral catalog rollout --template NAME --max-parallel 1"</code>
            " (add " <code>"--dry-run"</code> " to see what it would do), or with "
            <code>"POST /api/v1/catalog/rollouts"</code> "."
        </p>
        <Loaded data render={move |rollouts: Vec<RolloutView>| {
            if rollouts.is_empty() {
                view! { <p class="muted" data-testid="rollouts">"No rollouts yet."</p> }.into_any()
            } else {
                let cards = rollouts.into_iter().map(rollout_card).collect_view();
                view! { <div data-testid="rollouts">{cards}</div> }.into_any()
            }
        }}/>
    }
}
