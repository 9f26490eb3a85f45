//! The parts of `/admin/providers/<name>` beyond its definition: the tenant's
//! credentials for it (which fields are set, a form to set them, a button to remove
//! them; values are never shown, not even right after they were typed) and the Test
//! button, which runs the provider check and shows each phase with its time.

use leptos::prelude::*;

use api_types::{PhaseOutcome, ProviderTestReport};

use crate::components::errors::{action_error, FormError};
use crate::components::form::{AdminForm, Field};
use crate::components::session::CsrfField;
use crate::components::time::timestamp;
use crate::server_fns::admin::provider_credentials::{
    DeleteProviderCredentials, ProviderCredentialsView, SetProviderCredentials,
};
use crate::server_fns::admin::test_provider::TestProvider;

/// The credentials section and the Test button. `credentials` comes with the page;
/// after a save or a removal the panel shows what the server answered.
#[component]
pub fn ProviderPanel(credentials: ProviderCredentialsView) -> impl IntoView {
    let set = ServerAction::<SetProviderCredentials>::new();
    let delete = ServerAction::<DeleteProviderCredentials>::new();
    let name = credentials.provider.clone();
    let current = RwSignal::new(credentials);
    // Whichever action answered last holds what is set now.
    Effect::new(move |_| {
        if let Some(Ok(view)) = set.value().get() {
            current.set(view);
        }
    });
    Effect::new(move |_| {
        if let Some(Ok(view)) = delete.value().get() {
            current.set(view);
        }
    });
    let set_error = action_error(set);
    let delete_error = action_error(delete);
    let form_name = name.clone();
    view! {
        <section class="card" data-testid="provider-credentials">
            <h2>"Credentials"</h2>
            <p class="muted">
                "What Corral signs in to this provider with, for this tenant: a JSON object of strings "
                "(for " <code>"ec2"</code> ": " <code>"{\"access_key_id\": \"…\", \"secret_access_key\": \"…\"}"</code> "). "
                "They are encrypted at rest and never shown again; only their field names are."
            </p>
            {move || credentials_state(current.get(), delete)}
            <FormError error=delete_error/>
            <AdminForm action=set error=set_error submit="Save credentials" testid="set-credentials">
                <input type="hidden" name="name" value=form_name/>
                <Field label="New credentials (JSON)" id="provider-credentials" error=set_error field="credentials"
                    hint="Replaces what is set. Also: corral provider credentials set NAME --stdin">
                    // Emptied after every save, so the secret never stays in the page.
                    <textarea id="provider-credentials" name="credentials" rows="4" required
                        autocomplete="off" spellcheck="false"
                        prop:value=move || { set.version().get(); String::new() }
                        placeholder="{\"access_key_id\": \"…\", \"secret_access_key\": \"…\"}"></textarea>
                </Field>
            </AdminForm>
        </section>
        <ProviderTest name/>
    }
}

fn credentials_state(
    view: ProviderCredentialsView,
    delete: ServerAction<DeleteProviderCredentials>,
) -> impl IntoView {
    let unusable = (!view.usable).then(|| {
        view! {
            <p class="banner banner-bad" role="alert" data-testid="provider-unusable">
                "This tenant may not build on provider type " <code>{view.providertype.clone()}</code>
                ": clusters on this provider are refused until a superadmin enables the type on the tenants page."
            </p>
        }
    });
    if !view.set {
        return view! {
            {unusable}
            <p data-testid="credentials-state">"No credentials are set for this tenant."</p>
        }
        .into_any();
    }
    let by = view
        .updated_by
        .map(|by| format!(" by {by}"))
        .unwrap_or_default();
    view! {
        {unusable}
        <p data-testid="credentials-state">
            "Set" {by} " " {view.updated_at_ms.map(timestamp)} ": fields "
            {view.fields.into_iter().map(|field| view! { <code>{field}</code> " " }).collect_view()}
        </p>
        <ActionForm action=delete attr:class="inline">
            <CsrfField/>
            <input type="hidden" name="name" value=view.provider/>
            <button class="button button-small button-danger" type="submit"
                data-testid="delete-credentials">"Remove credentials"</button>
        </ActionForm>
    }
    .into_any()
}

#[component]
fn ProviderTest(name: String) -> impl IntoView {
    let test = ServerAction::<TestProvider>::new();
    let error = action_error(test);
    let report = move || test.value().get().and_then(Result::ok);
    view! {
        <section class="card" data-testid="provider-test">
            <h2>"Test"</h2>
            <p class="muted">
                "Checks the credentials and the endpoint; with a machine, also makes one (the first "
                "hardware and image types mapped to this provider), reaches it over SSH and deletes it."
            </p>
            <AdminForm action=test error submit="Test provider" class="stack" testid="test-provider">
                <input type="hidden" name="name" value=name/>
                <label class="check">
                    <input type="checkbox" name="create"/>
                    " Make, reach and delete one machine"
                </label>
            </AdminForm>
            {move || test.pending().get().then(|| view! {
                <p class="muted" role="status">"Testing… (making a machine can take a minute)"</p>
            })}
            {move || report().map(test_report)}
        </section>
    }
}

fn test_report(report: ProviderTestReport) -> impl IntoView {
    let (class, verdict) = if report.passed {
        ("banner banner-ok", "passed")
    } else {
        ("banner banner-bad", "failed")
    };
    let rows = report
        .phases
        .into_iter()
        .map(|phase| {
            let (tone, word) = match phase.outcome {
                PhaseOutcome::Passed => ("state state-ok", "passed"),
                PhaseOutcome::Failed => ("state state-bad", "failed"),
                PhaseOutcome::Skipped => ("state", "skipped"),
            };
            let name = phase.phase;
            let key = name.clone();
            view! {
                <tr data-phase=key>
                    <th scope="row">{name}</th>
                    <td><span class=tone>{word}</span></td>
                    <td class="num">{format!("{:.1} s", phase.elapsed_ms as f64 / 1000.0)}</td>
                    <td>{phase.detail}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class=class role="status" data-testid="test-report">
            <p><strong>{format!("Provider {} ({}) {verdict}.", report.provider, report.providertype)}</strong></p>
        </div>
        <div class="table-scroll">
            <table class="data">
                <thead><tr>
                    <th scope="col">"Phase"</th><th scope="col">"Outcome"</th>
                    <th scope="col" class="num">"Time"</th><th scope="col">"Detail"</th>
                </tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}
