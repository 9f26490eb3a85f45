//! `/admin/catalog`: import a Coopr bundle (checked in full first: every problem is
//! listed and nothing is saved while there is one) and download the tenant's
//! catalog. The bundle is pasted or, with JavaScript, read from a chosen file.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::errors::action_error;
use crate::components::form::Field;
use crate::components::session::CsrfField;
use crate::server_fns::admin::import_catalog::ImportCatalog;

/// Fills the bundle box with the file chosen in `event`'s input. Without JavaScript
/// the input is inert, and pasting into the box is the way. (It was an inline
/// `onchange` attribute, which the pages' content security policy blocks.)
#[cfg(feature = "hydrate")]
fn fill_from_file(event: &leptos::ev::Event, bundle: NodeRef<leptos::html::Textarea>) {
    use leptos::wasm_bindgen::JsCast;
    let file = event
        .target()
        .and_then(|target| target.dyn_into::<web_sys::HtmlInputElement>().ok())
        .and_then(|input| input.files())
        .and_then(|files| files.get(0));
    let Some(file) = file else {
        return;
    };
    let text = wasm_bindgen_futures::JsFuture::from(file.text());
    leptos::task::spawn_local(async move {
        let text = text.await.ok().and_then(|text| text.as_string());
        // The page may be gone by the time the file is read.
        let textarea = bundle.try_get_untracked().flatten();
        if let (Some(text), Some(textarea)) = (text, textarea) {
            textarea.set_value(&text);
        }
    });
}

#[cfg(not(feature = "hydrate"))]
fn fill_from_file(_: &leptos::ev::Event, _: NodeRef<leptos::html::Textarea>) {}

#[component]
pub fn CatalogPage() -> impl IntoView {
    let query = use_query_map();
    let import = ServerAction::<ImportCatalog>::new();
    let error = action_error(import);
    let bundle_box = NodeRef::<leptos::html::Textarea>::new();
    let banner = move || {
        query.with(|query| {
            let warnings = query.get("warnings").unwrap_or_default();
            let warnings = match warnings.as_str() {
                "" | "0" => String::new(),
                count => format!(" ({count} warning(s))"),
            };
            if let Some(counts) = query.get("imported") {
                Some(format!(
                    "Imported: {counts}{warnings}. The catalog was replaced."
                ))
            } else {
                query.get("checked").map(|counts| {
                    format!("The bundle is valid: {counts}{warnings}. Nothing was saved yet.")
                })
            }
        })
    };
    let report = move || {
        error.get().map(|error| {
            let problems = error.problems_for("bundle");
            let count = problems.len();
            view! {
                <div class="report" role="alert" data-testid="import-report">
                    <h3>{error.to_string()}</h3>
                    {(count > 1).then(|| view! { <p class="muted">{count} " problems:"</p> })}
                </div>
            }
        })
    };
    view! {
        <Title text="Import / export · Admin · Corral"/>
        <div class="page-head"><h1>"Catalog import and export"</h1></div>
        {move || banner().map(|text| view! {
            <p class="banner banner-ok" role="status" data-testid="import-done">{text}</p>
        })}
        <div class="form-grid">
            <section class="card" aria-labelledby="import-head">
                <h2 id="import-head">"Import a Coopr bundle"</h2>
                <p class="muted">"A JSON object with providers, hardwaretypes, imagetypes, services, clustertemplates and partialtemplates. Importing replaces the whole catalog; it is checked first and nothing is saved while it has problems."</p>
                <ActionForm action=import attr:class="stack" attr:data-testid="import-form">
                    <CsrfField/>
                    <Field label="File" id="bundle-file"
                        hint="Choosing a file fills the box below (needs JavaScript); you can also paste.">
                        <input id="bundle-file" type="file" accept=".json,application/json"
                            on:change=move |event| fill_from_file(&event, bundle_box)
                            data-testid="bundle-file"/>
                    </Field>
                    <Field label="Bundle (JSON)" id="bundle" error field="bundle">
                        <textarea node_ref=bundle_box id="bundle" name="bundle" class="code" rows="14" spellcheck="false" required></textarea>
                        {report}
                    </Field>
                    <label class="check"><input type="checkbox" name="check_only" value="1"/> " Only check, do not import"</label>
                    <div class="actions">
                        <button class="button" type="submit" data-testid="import-submit"
                            disabled=move || import.pending().get()>
                            {move || if import.pending().get() { "Checking…" } else { "Import" }}
                        </button>
                    </div>
                </ActionForm>
            </section>
            <section class="card" aria-labelledby="export-head">
                <h2 id="export-head">"Export"</h2>
                <p>"The tenant's current catalog as a Coopr bundle, for another Corral or Coopr."</p>
                <p><a class="button" href="/api/v1/catalog" download="catalog.json" data-testid="export">"Download catalog.json"</a></p>
            </section>
        </div>
    }
}
