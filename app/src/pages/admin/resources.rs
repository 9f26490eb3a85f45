//! `/admin/resources`: plugin resources (scripts, archives, files) with every
//! version, which one is staged (what nodes get), and uploading a new version:
//! a file of any kind (a multipart form post, so archives and binaries arrive
//! byte for byte, with or without JavaScript) or a script typed in.

use api_types::ResourceView;
use leptos::prelude::*;
use leptos::server::ServerActionError;
use leptos::server_fn::error::ServerFnUrlError;
use leptos::server_fn::ServerFn;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::errors::{action_error, FormError, FormErrors};
use crate::components::form::{AdminForm, Field, SelectField, TextField};
use crate::components::session::CsrfField;
use crate::components::table::DataTable;
use crate::components::time::timestamp;
use crate::error::UiError;
use crate::pages::admin::loaded::{Loaded, OnceLoaded};
use crate::server_fns::admin::resources::list_resources;
use crate::server_fns::admin::stage_resource::StageResource;
use crate::server_fns::admin::upload_resource::UploadResource;
use crate::server_fns::admin::upload_resource_file::UploadResourceFile;

/// A size as people read it; the exact count is in the cell's title.
fn size(bytes: i64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[component]
pub fn ResourcesPage() -> impl IntoView {
    let upload = ServerAction::<UploadResource>::new();
    let stage = ServerAction::<StageResource>::new();
    let resources = Resource::new(
        move || (upload.version().get(), stage.version().get()),
        |_| list_resources(),
    );
    let error = action_error(upload);
    view! {
        <Title text="Resources · Admin · Corral"/>
        <div class="page-head"><h1>"Plugin resources"</h1></div>
        <Uploaded/>
        <Loaded data=resources render={move |rows: Vec<ResourceView>| {
            if rows.is_empty() {
                return view! { <p class="muted">"No resources yet. Scripts uploaded here can be named by shell actions."</p> }.into_any();
            }
            let rows = rows.into_iter().map(|row| {
                let staged = row.staged;
                view! {
                    <tr>
                        <td>{row.kind.clone()}</td>
                        <th scope="row">{row.name.clone()}</th>
                        <td class="num">{row.version}</td>
                        <td>{if staged {
                            view! { <span class="state state-ok">"staged"</span> }.into_any()
                        } else {
                            view! {
                                <ActionForm action=stage attr:class="inline">
                                    <CsrfField/>
                                    <input type="hidden" name="kind" value=row.kind.clone()/>
                                    <input type="hidden" name="name" value=row.name.clone()/>
                                    <input type="hidden" name="version" value=row.version/>
                                    <button class="button button-small button-quiet" type="submit">"Stage"</button>
                                </ActionForm>
                            }.into_any()
                        }}</td>
                        <td class="num" title=format!("{} bytes", row.size_bytes)>{size(row.size_bytes)}</td>
                        <td><code title=row.sha256.clone()>{row.sha256.chars().take(12).collect::<String>()}</code></td>
                        <td>{timestamp(row.created_at_ms)}</td>
                    </tr>
                }
            }).collect_view();
            view! {
                <DataTable card=true testid="resource-table"
                    columns=&["Kind", "Name", "Version", "State", "Size", "SHA-256", "Uploaded"]
                    numeric=&["Version", "Size"]>
                    {rows}
                </DataTable>
            }.into_any()
        }}/>
        <OnceLoaded data=resources>
            <FileUpload/>
            <section class="card">
                <h2>"Type a new version"</h2>
                <AdminForm action=upload error submit="Upload">
                    <SelectField label="Kind" id="resource-kind" name="kind"
                        options=&[("scripts", "scripts"), ("files", "files")]/>
                    <TextField label="Name" id="resource-name" name="name" error
                        required=true placeholder="e.g. web.sh"/>
                    <Field label="Content" id="resource-content" error field="content">
                        <textarea id="resource-content" name="content" class="code" rows="10" spellcheck="false"></textarea>
                    </Field>
                    <label class="check"><input type="checkbox" name="stage" value="1" checked/> " Stage this version (nodes get it from now on)"</label>
                </AdminForm>
            </section>
        </OnceLoaded>
    }
}

/// What the last upload made, from the query string its redirect set.
#[component]
fn Uploaded() -> impl IntoView {
    let query = use_query_map();
    move || {
        query.with(|query| {
            let name = query.get("uploaded")?;
            let version = query.get("version").unwrap_or_default();
            Some(view! {
                <p class="banner banner-ok" role="status" data-testid="uploaded">
                    "Uploaded " <strong>{name}</strong> " version " {version} "."
                </p>
            })
        })
    }
}

/// A file of any kind as a new version: a plain multipart form, so it posts the
/// same with JavaScript off; an error comes back in the redirect's URL.
#[component]
fn FileUpload() -> impl IntoView {
    let error = use_context::<ServerActionError>()
        .filter(|error| error.path() == UploadResourceFile::PATH)
        .map(|error| ServerFnUrlError::<UiError>::decode_err(error.err()));
    let error = FormErrors::new(Signal::stored(error));
    view! {
        <section class="card">
            <h2>"Upload a file"</h2>
            <p class="muted">"Archives (" <code>".tar"</code> ", " <code>".tar.gz"</code> ", " <code>".tgz"</code> ") are unpacked on the node next to the file; scripts are made executable; files are copied as they are."</p>
            <form method="post" action=UploadResourceFile::url() enctype="multipart/form-data"
                class="stack narrow-form" data-testid="file-upload-form">
                <CsrfField/>
                <SelectField label="Kind" id="file-kind" name="kind"
                    options=&[("archives", "archives"), ("files", "files"), ("scripts", "scripts")]/>
                <Field label="File" id="file-file" error field="file">
                    <input id="file-file" name="file" type="file" class="file-input" required/>
                </Field>
                <TextField label="Name" id="file-name" name="name" error placeholder="the file's name"
                    hint="A new name starts at version 1; an existing one gets its next version."/>
                <label class="check"><input type="checkbox" name="stage" value="1" checked/> " Stage this version (nodes get it from now on)"</label>
                <FormError error/>
                <button class="button" type="submit" data-testid="upload-file">"Upload file"</button>
            </form>
        </section>
    }
}
