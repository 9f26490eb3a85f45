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
    let rows = preview
        .to
        .nodes
        .iter()
        .map(|node| {
            let old = before.get(&node.number);
            let change = match old {
                None if is_change => "new node",
                None => "",
                Some(old) if old.len() != node.services.len() => "changed",
                Some(_) => "",
            };
            let services = node
                .services
                .iter()
                .map(|service| {
                    let added = old.is_some_and(|old| !old.contains(service.as_str()))
                        || (is_change && old.is_none());
                    let class = if added { "chip chip-added" } else { "chip" };
                    view! { <span class=class>{service.to_string()}</span> " " }
                })
                .collect_view();
            view! {
                <tr class:row-added=is_change && old.is_none()>
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
