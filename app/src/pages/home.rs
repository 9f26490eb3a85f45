//! The overview page: what Corral is and the state of this server.

use leptos::prelude::*;

use crate::server_fns::status::{get_server_status, ServerStatus};

#[component]
pub fn HomePage() -> impl IntoView {
    let status = Resource::new(|| (), |_| get_server_status());
    view! {
        <section class="hero">
            <h1>"Self-service clusters"</h1>
            <p class="lead">
                "Admins describe what may be built; users ask for a cluster from a template and a size. "
                "Corral solves the layout, plans the tasks and runs every step over SSH, live."
            </p>
        </section>
        <div class="grid">
            <section class="card" aria-labelledby="status-title">
                <h2 id="status-title">"This server"</h2>
                <Suspense fallback=|| view! { <p class="muted">"Checking…"</p> }>
                    {move || status.get().map(|result| match result {
                        Ok(status) => view! { <StatusTable status/> }.into_any(),
                        Err(err) => view! {
                            <p class="state state-failed">"Status unavailable: " {err.to_string()}</p>
                        }.into_any(),
                    })}
                </Suspense>
            </section>
            <section class="card" aria-labelledby="try-title">
                <h2 id="try-title">"Interactive check"</h2>
                <p class="muted">"This button only counts once the page has hydrated in your browser."</p>
                <HydrationCounter/>
            </section>
        </div>
    }
}

#[component]
fn StatusTable(status: ServerStatus) -> impl IntoView {
    let migrations = format!(
        "{} of {} applied",
        status.migrations_applied, status.migrations_known
    );
    view! {
        <table class="kv">
            <tbody>
                <tr><th scope="row">"Version"</th><td>{status.version}</td></tr>
                <tr><th scope="row">"Database"</th><td>{status.backend}</td></tr>
                <tr><th scope="row">"Migrations"</th><td>{migrations}</td></tr>
                <tr><th scope="row">"Tenants"</th><td>{status.tenants}</td></tr>
            </tbody>
        </table>
    }
}

/// A counter: proof in the browser test that the page hydrated.
#[component]
fn HydrationCounter() -> impl IntoView {
    let clicks = RwSignal::new(0u32);
    view! {
        <button class="button" data-testid="hydration-counter" on:click=move |_| *clicks.write() += 1>
            "Clicked " {move || clicks.get()} " times"
        </button>
    }
}
