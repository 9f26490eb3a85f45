//! A state shown as colour plus text (never colour alone), for clusters, jobs,
//! tasks and nodes alike.

use leptos::prelude::*;

/// The CSS class for a state: `state-ok`, `state-busy`, `state-bad`, `state-idle`.
pub fn state_class(state: &str) -> &'static str {
    match state {
        "active" | "succeeded" | "running-ok" | "up" => "state state-ok",
        "creating" | "updating" | "deleting" | "running" | "queued" | "ready" | "cancelling"
        | "claimed" => "state state-busy",
        "failed" | "dead" => "state state-bad",
        _ => "state state-idle",
    }
}

/// Node states (`planned`, `created`, `confirmed`, `ready`): a `ready` node is up,
/// unlike a `ready` task, which is waiting to run.
pub fn node_state_class(state: &str) -> &'static str {
    match state {
        "ready" => "state state-ok",
        "created" | "confirmed" => "state state-busy",
        other => state_class(other),
    }
}

#[component]
pub fn StateBadge(
    #[prop(into)] state: Signal<String>,
    /// The badge of a node rather than of a job or task.
    #[prop(optional)]
    node: bool,
) -> impl IntoView {
    let class = move || {
        state.with(|state| {
            if node {
                node_state_class(state)
            } else {
                state_class(state)
            }
        })
    };
    view! {
        <span class=class data-state=move || state.get()>
            {move || state.get()}
        </span>
    }
}
