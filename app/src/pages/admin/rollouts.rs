//! `/admin/rollouts`: preview and start a rollout of a template's current catalog
//! revision, and the tenant's rollouts, newest first: the template, its state, how
//! many clusters it upgrades at once, who started it and when, why it stopped, and
//! each cluster's outcome with a link to its upgrade job.
//!
//! The form's inputs live in the query string (`?template=NAME&max_parallel=N`), so
//! "Preview" is a plain GET: the dry-run listing is rendered on the server without
//! JavaScript and fetched in place with it, and a preview can be linked. "Start
//! rollout" posts what was previewed to a server function; a refusal (nothing
//! behind, one already running) comes back next to the button.

use api_types::{
    RolloutCandidate, RolloutClusterState, RolloutClusterView, RolloutStarted, RolloutState,
    RolloutTemplate, RolloutView,
};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::Form;
use leptos_router::hooks::use_query_map;

use crate::components::errors::{action_error, FormError, FormErrors};
use crate::components::form::{AdminForm, Field};
use crate::components::table::DataTable;
use crate::components::time::timestamp;
use crate::error::UiError;
use crate::pages::admin::loaded::Loaded;
use crate::server_fns::admin::rollouts::{preview_rollout, rollouts_page, RolloutsPageData};
use crate::server_fns::admin::start_rollout::StartRollout;

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

/// One cluster of a preview: where it moves from and to, what its upgrade does, and
/// whether the rollout passes it over.
fn candidate_row(position: usize, to: Option<i64>, candidate: RolloutCandidate) -> impl IntoView {
    let href = format!("/clusters/{}", candidate.cluster_id);
    // Only entities the template uses may have moved on, the template itself not.
    let revision = match to {
        Some(to) if to != candidate.from_revision => {
            format!("r{} → r{to}", candidate.from_revision)
        }
        _ => format!("r{} (template unchanged)", candidate.from_revision),
    };
    let turn = if candidate.pinned {
        view! { <span class="state state-idle">"pinned: skipped"</span> }.into_any()
    } else {
        view! { <span class="state state-busy">"upgraded"</span> }.into_any()
    };
    view! {
        <tr data-candidate=candidate.cluster_name.clone() data-pinned=candidate.pinned.to_string()>
            <td class="num">{position}</td>
            <th scope="row"><a href=href>{candidate.cluster_name.clone()}</a></th>
            <td>{candidate.owner.clone().unwrap_or_else(|| "—".to_owned())}</td>
            <td>{revision}</td>
            <td>{candidate.summary.clone()}</td>
            <td>{turn}</td>
        </tr>
    }
}

/// The dry run's listing, and the button that starts exactly that; with nothing
/// behind, the reason there is nothing to start (and a refused start's message).
fn preview_view(
    listing: RolloutStarted,
    max_parallel: String,
    start: ServerAction<StartRollout>,
    start_error: FormErrors,
) -> AnyView {
    let to = listing.revision;
    let revision = to.map_or_else(String::new, |revision| format!(" r{revision}"));
    if listing.clusters.is_empty() {
        return view! {
            <div data-testid="rollout-preview">
                <p data-testid="rollout-nothing">
                    "No cluster of " <strong>{listing.template.clone()}</strong>
                    " is behind its current revision" {revision} ": nothing to roll out."
                </p>
                <FormError error=start_error/>
            </div>
        }
        .into_any();
    }
    let upgraded = listing
        .clusters
        .iter()
        .filter(|candidate| !candidate.pinned)
        .count();
    let skipped = listing.clusters.len() - upgraded;
    let template = listing.template.clone();
    let rows = listing
        .clusters
        .into_iter()
        .enumerate()
        .map(|(index, candidate)| candidate_row(index + 1, to, candidate))
        .collect_view();
    view! {
        <div data-testid="rollout-preview">
            <p data-testid="rollout-what">
                "Rolling out " <strong>{template.clone()}</strong>
                {format!(
                    "{revision} upgrades {upgraded} cluster(s), at most {max_parallel} at a time, \
                     and skips {skipped} pinned; the first failure stops it. Nothing has changed yet."
                )}
            </p>
            <DataTable numeric=&["#"] columns=&["#", "Cluster", "Owner", "Revision", "Plan", "Rollout"]>
                {rows}
            </DataTable>
            <AdminForm action=start error=start_error submit="Start rollout" class="stack" testid="start-rollout">
                <input type="hidden" name="template" value=template/>
                <input type="hidden" name="max_parallel" value=max_parallel/>
            </AdminForm>
        </div>
    }
    .into_any()
}

/// A template as the select offers it: its current revision and how many of its
/// clusters are behind.
fn template_option(template: &RolloutTemplate, chosen: &str) -> impl IntoView {
    let label = format!(
        "{} (r{}: {} of {} cluster(s) behind)",
        template.template, template.revision, template.behind, template.clusters
    );
    view! {
        <option value=template.template.clone() selected=template.template == chosen>{label}</option>
    }
}

/// The form: template and "at most at once" as query inputs, and "Preview".
fn rollout_form(templates: &[RolloutTemplate], chosen: &str, max_parallel: &str) -> impl IntoView {
    let (behind, current): (Vec<_>, Vec<_>) =
        templates.iter().partition(|template| template.behind > 0);
    let behind = (!behind.is_empty()).then(|| {
        let options = behind
            .into_iter()
            .map(|template| template_option(template, chosen))
            .collect_view();
        view! { <optgroup label="Clusters behind">{options}</optgroup> }
    });
    let current = (!current.is_empty()).then(|| {
        let options = current
            .into_iter()
            .map(|template| template_option(template, chosen))
            .collect_view();
        view! { <optgroup label="Nothing behind">{options}</optgroup> }
    });
    let max_parallel = if max_parallel.is_empty() {
        "1".to_owned()
    } else {
        max_parallel.to_owned()
    };
    view! {
        <Form method="GET" action="" attr:class="filters" attr:data-testid="rollout-form">
            <Field label="Template" id="rollout-template">
                <select id="rollout-template" name="template" required>{behind}{current}</select>
            </Field>
            <Field label="At most at once" id="rollout-max-parallel">
                <input id="rollout-max-parallel" name="max_parallel" type="number" min="1" step="1"
                    inputmode="numeric" value=max_parallel/>
            </Field>
            <button class="button button-quiet" type="submit">"Preview"</button>
        </Form>
    }
}

#[component]
pub fn RolloutsPage() -> impl IntoView {
    let query = use_query_map();
    let start = ServerAction::<StartRollout>::new();
    let start_error = action_error(start);
    let started = move || query.with(|query| query.get("started"));
    let data = Resource::new(
        move || (start.version().get(), started()),
        |_| rollouts_page(),
    );
    // What the form asked to preview: nothing until a template is chosen.
    let asked = move || {
        query.with(|query| {
            query
                .get("template")
                .map(|template| (template, query.get("max_parallel").unwrap_or_default()))
        })
    };
    let preview = Resource::new(asked, |asked| async move {
        match asked {
            Some((template, max_parallel)) => {
                preview_rollout(template, max_parallel).await.map(Some)
            }
            None => Ok::<_, UiError>(None),
        }
    });
    let preview_area = move || {
        let (_, max_parallel) = asked().unwrap_or_default();
        let max_parallel = if max_parallel.trim().is_empty() {
            "1".to_owned()
        } else {
            max_parallel
        };
        Suspend::new(async move {
            match preview.await {
                Ok(Some(listing)) => preview_view(listing, max_parallel, start, start_error),
                Ok(None) => view! { <FormError error=start_error/> }.into_any(),
                Err(error) => view! {
                    <p class="form-error" role="alert" data-testid="rollout-refusal">{error.to_string()}</p>
                }
                .into_any(),
            }
        })
    };
    view! {
        <Title text="Rollouts · Admin · Corral"/>
        <div class="page-head"><h1>"Rollouts"</h1></div>
        <p class="muted">
            "A rollout upgrades every cluster of a template that is behind the catalog, a few at a time; the first failure stops it. Pinned clusters are passed over. Preview one below and start it, or from the command line: "
            <code>"corral catalog rollout --template NAME --max-parallel 1"</code>
            " (add " <code>"--dry-run"</code> " to see what it would do), or with "
            <code>"POST /api/v1/catalog/rollouts"</code> "."
        </p>
        {move || started().map(|id| view! {
            <p class="banner banner-ok" role="status" data-testid="rollout-started">
                "Rollout " <code>{id}</code> " started: its clusters are upgraded in turn, below."
            </p>
        })}
        <Loaded data render={move |page: RolloutsPageData| {
            let (chosen, max_parallel) = asked().unwrap_or_default();
            let running = page.rollouts.iter().find(|rollout| rollout.template == chosen && rollout.state.is_active()).map(|rollout| {
                view! {
                    <p class="banner banner-busy" role="status" data-testid="rollout-running">
                        "Rollout " <code>{rollout.id.clone()}</code> " of " {chosen.clone()} " is still "
                        {rollout.state.as_str()} ": a new one is refused until it ends."
                    </p>
                }
            });
            let form = if page.templates.is_empty() {
                view! { <p class="muted">"The catalog has no cluster templates."</p> }.into_any()
            } else {
                rollout_form(&page.templates, &chosen, &max_parallel).into_any()
            };
            let rollouts = if page.rollouts.is_empty() {
                view! { <p class="muted" data-testid="rollouts">"No rollouts yet."</p> }.into_any()
            } else {
                let cards = page.rollouts.into_iter().map(rollout_card).collect_view();
                view! { <div data-testid="rollouts">{cards}</div> }.into_any()
            };
            view! {
                <section class="card">
                    <h2>"Start a rollout"</h2>
                    {form}
                    {running}
                    <Suspense fallback=|| view! { <p class="muted">"Listing the clusters behind…"</p> }>
                        {preview_area}
                    </Suspense>
                </section>
                {rollouts}
            }.into_any()
        }}/>
    }
}
