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

#[component]
pub fn StateBadge(#[prop(into)] state: Signal<String>) -> impl IntoView {
    view! {
        <span class=move || state.with(|state| state_class(state)) data-state=move || state.get()>
            {move || state.get()}
        </span>
    }
}
