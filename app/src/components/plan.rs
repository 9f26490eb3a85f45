//! A plan preview: the layout it leads to (which services on which node, with
//! hardware and image), whose credentials its new machines are made with, what changes
//! against the current layout, and the task DAG:
//! drawn when it is small enough to read, else counted by step (a hundred nodes' plan
//! has over a thousand tasks, whose picture took the browser most of the time the
//! preview took).

use std::collections::{BTreeSet, HashMap};

use leptos::prelude::*;

use super::dag::DagPicture;
use super::diff::DiffView;
use crate::server_fns::clusters::PlanPreview;
use crate::server_fns::jobs::PICTURE_MAX_TASKS;

#[component]
pub fn PlanView(preview: PlanPreview) -> impl IntoView {
    let before: HashMap<u32, BTreeSet<String>> = preview
        .from
        .as_ref()
        .map(|layout| layout.services_by_node().collect())
        .unwrap_or_default();
    let is_change = preview.from.is_some();
    let after: BTreeSet<u32> = preview.to.nodes.iter().map(|node| node.number).collect();
    // Every node of either layout, by number: nodes that go stay in the table, struck
    // through, so the user sees what a scale-in takes away.
    let mut nodes: Vec<(&domain::layout::NodeLayout, bool)> =
        preview.to.nodes.iter().map(|node| (node, false)).collect();
    if let Some(from) = &preview.from {
        nodes.extend(
            from.nodes
                .iter()
                .filter(|node| !after.contains(&node.number))
                .map(|node| (node, true)),
        );
    }
    nodes.sort_by_key(|(node, _)| node.number);
    let rows = nodes
        .into_iter()
        .map(|(node, removed)| {
            let old = before.get(&node.number);
            let now: BTreeSet<String> = node.service_names();
            let change = match old {
                _ if removed => "removed",
                None if is_change => "new node",
                None => "",
                Some(old) if *old != now => "changed",
                Some(_) => "",
            };
            let mut services: Vec<(String, &str)> = now
                .iter()
                .map(|service| {
                    let added = !removed
                        && (old.is_some_and(|old| !old.contains(service))
                            || (is_change && old.is_none()));
                    let class = match (removed, added) {
                        (true, _) => "chip chip-removed",
                        (false, true) => "chip chip-added",
                        (false, false) => "chip",
                    };
                    (service.clone(), class)
                })
                .collect();
            if !removed {
                services.extend(
                    old.into_iter()
                        .flatten()
                        .filter(|service| !now.contains(*service))
                        .map(|service| (service.clone(), "chip chip-removed")),
                );
            }
            let services = services
                .into_iter()
                .map(|(service, class)| view! { <span class=class>{service}</span> " " })
                .collect_view();
            view! {
                <tr class:row-added=is_change && old.is_none() class:row-removed=removed>
                    <td>{node.number}</td>
                    <td>{node.hardwaretype.to_string()}</td>
                    <td>{node.imagetype.to_string()}</td>
                    <td>{services}</td>
                    <td class="muted">{change}</td>
                </tr>
            }
        })
        .collect_view();
    let tasks = preview.tasks;
    let nodes = preview.to.nodes.len();
    let credentials = preview.credentials.map(|credentials| {
        view! { <p class="plan-credentials" data-testid="plan-credentials">"Credentials: " {credentials}</p> }
    });
    let upgrade = preview
        .upgrade
        .map(|upgrade| view! { <UpgradeView upgrade/> });
    let cost = preview.cost.map(|cost| {
        view! { <p class="plan-cost" data-testid="plan-cost">{cost_text(&cost)}</p> }
    });
    let warnings = preview
        .warnings
        .into_iter()
        .map(|warning| view! { <p class="banner banner-bad" role="alert" data-testid="plan-warning">{warning}</p> })
        .collect_view();
    view! {
        <div class="plan" data-testid="plan-preview">
            <p class="plan-summary">
                <strong>{nodes}</strong> " node(s), " <strong>{tasks}</strong> " task(s) to run."
            </p>
            {credentials}
            {cost}
            {warnings}
            {upgrade}
            <div class="table-scroll">
                <table class="data">
                    <thead><tr>
                        <th scope="col">"Node"</th><th scope="col">"Hardware"</th>
                        <th scope="col">"Image"</th><th scope="col">"Services"</th>
                        <th scope="col"><span class="visually-hidden">"Change"</span></th>
                    </tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            </div>
            {match preview.dag.filter(|_| tasks as u64 <= PICTURE_MAX_TASKS) {
                Some(dag) => view! {
                    <details class="plan-dag" open=tasks <= 60>
                        <summary>"Task graph (" {tasks} " tasks)"</summary>
                        <DagPicture dag states=Signal::derive(HashMap::new)/>
                    </details>
                }
                .into_any(),
                None => {
                let steps = preview
                    .steps
                    .into_iter()
                    .map(|(step, count)| view! { <li><strong>{step}</strong> " — " {count} " tasks"</li> })
                    .collect_view();
                view! {
                    <div class="plan-dag">
                        <p class="muted">"The tasks by step (too many to draw as a graph):"</p>
                        <ul class="task-groups" data-testid="plan-steps">{steps}</ul>
                    </div>
                }
                .into_any()
                }
            }}
        </div>
    }
}

/// What an upgrade changes: each entity's definition diff, what each changed service
/// runs, the dependants configured afterwards, and the batches.
#[component]
fn UpgradeView(upgrade: api_types::UpgradePlanView) -> impl IntoView {
    let pretty =
        |value: &serde_json::Value| serde_json::to_string_pretty(value).unwrap_or_default();
    let changes = upgrade
        .changes
        .iter()
        .map(|change| {
            let new = change.after.as_ref().map(pretty).unwrap_or_default();
            view! {
                <details class="upgrade-change" open=true>
                    <summary>{change.kind.clone()} " " <strong>{change.name.clone()}</strong> " " {change.change.as_str()}</summary>
                    <DiffView old=pretty(&change.before) new/>
                </details>
            }
        })
        .collect_view();
    let runs = upgrade
        .services
        .iter()
        .map(|service| {
            let steps = match service.runs {
                api_types::UpgradeRun::Restart => "stop (old definition), start",
                api_types::UpgradeRun::Reconfigure => "stop (old definition), configure, start",
                api_types::UpgradeRun::Reinstall => "stop (old definition), install, configure, start",
            };
            view! { <li><strong>{service.service.clone()}</strong> " " {service.runs.as_str()} ": " {steps}</li> }
        })
        .collect_view();
    let reconfigure = (!upgrade.reconfigure.is_empty()).then(|| {
        view! { <li>"then configure " {upgrade.reconfigure.join(", ")} " (they depend on a restarted service)"</li> }
    });
    let batches = upgrade.batches_text(", ", " → ");
    view! {
        <div class="upgrade" data-testid="upgrade-preview">
            <h3>"What changes"</h3>
            {changes}
            <h3>"What runs"</h3>
            <ul>{runs}{reconfigure}</ul>
            <p class="hint" data-testid="upgrade-batches">"Nodes in batches: " {batches}</p>
        </div>
    }
}

/// A plan's estimated cost in words: per hour and per month, what a change adds, or
/// "no prices set" when no node has a price (docs/cost.md).
fn cost_text(cost: &api_types::CostEstimate) -> String {
    use api_types::money;
    if cost.priced_nodes == 0 {
        return "Estimated cost: no prices set.".to_owned();
    }
    let mut text = format!(
        "Estimated cost: {} per hour, {} per month",
        money(cost.per_hour),
        money(cost.per_month)
    );
    if let (Some(hour), Some(month)) = (cost.change_per_hour, cost.change_per_month) {
        text.push_str(&format!(
            " (change: {hour:+.2} per hour, {month:+.2} per month)"
        ));
    }
    if cost.unpriced_nodes > 0 {
        text.push_str(&format!(
            "; {} node(s) without a price",
            cost.unpriced_nodes
        ));
    }
    text.push('.');
    text
}
