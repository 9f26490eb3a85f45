//! A plan preview: the layout it leads to (which services on which node, with
//! hardware and image), what changes against the current layout, and the task DAG.

use std::collections::{BTreeSet, HashMap};

use leptos::prelude::*;

use super::dag::DagPicture;
use crate::server_fns::clusters::PlanPreview;

#[component]
pub fn PlanView(preview: PlanPreview) -> impl IntoView {
    let before: HashMap<u32, BTreeSet<String>> = preview
        .from
        .as_ref()
        .map(|layout| {
            layout
                .nodes
                .iter()
                .map(|node| {
                    (
                        node.number,
                        node.services.iter().map(ToString::to_string).collect(),
                    )
                })
                .collect()
        })
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
            let now: BTreeSet<String> = node.services.iter().map(ToString::to_string).collect();
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
    let tasks = preview.dag.tasks().len();
    let nodes = preview.to.nodes.len();
    view! {
        <div class="plan" data-testid="plan-preview">
            <p class="plan-summary">
                <strong>{nodes}</strong> " node(s), " <strong>{tasks}</strong> " task(s) to run."
            </p>
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
            <details class="plan-dag" open=tasks <= 60>
                <summary>"Task graph (" {tasks} " tasks)"</summary>
                <DagPicture dag=preview.dag states=Signal::derive(HashMap::new)/>
            </details>
        </div>
    }
}
