//! `/admin/resources`: plugin resources (scripts, archives, files) with every
//! version, which one is staged (what nodes get), and uploading a new version.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::components::errors::{FieldError, FormError};
use crate::components::session::CsrfField;
use crate::components::table::TableCard;
use crate::components::time::timestamp;
use crate::server_fns::admin::resources::list_resources;
use crate::server_fns::admin::stage_resource::StageResource;
use crate::server_fns::admin::upload_resource::UploadResource;

#[component]
pub fn ResourcesPage() -> impl IntoView {
    let upload = ServerAction::<UploadResource>::new();
    let stage = ServerAction::<StageResource>::new();
    let resources = Resource::new(
        move || (upload.version().get(), stage.version().get()),
        |_| list_resources(),
    );
    let error = Signal::derive(move || upload.value().get().and_then(Result::err));
    let general = Signal::derive(move || {
        error.get().filter(|error| {
            error.problems_for("name").is_empty() && error.problems_for("content").is_empty()
        })
    });
    view! {
            <Title text="Resources · Admin · Corral"/>
            <div class="page-head"><h1>"Plugin resources"</h1></div>
            <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match resources.await {
                        Ok(rows) if rows.is_empty() => view! { <p class="muted">"No resources yet. Scripts uploaded here can be named by shell actions."</p> }.into_any(),
                        Ok(rows) => {
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
                                        <td class="num">{row.size_bytes} " B"</td>
                                        <td><code title=row.sha256.clone()>{row.sha256.chars().take(12).collect::<String>()}</code></td>
                                        <td>{timestamp(row.created_at_ms)}</td>
                                    </tr>
                                }
                            }).collect_view();
                            view! {
                                <TableCard testid="resource-table"
                                    columns=&["Kind", "Name", "Version", "State", "Size", "SHA-256", "Uploaded"]
                                    numeric=&["Version", "Size"]>
                                    {rows}
                                </TableCard>
                            }.into_any()
                        }
                        Err(error) => crate::pages::admin::layout::admin_error(error),
                    }
                })}
            </Suspense>
            <Suspense>
                {move || Suspend::new(async move {
                    resources.await.is_ok().then(|| view! {
    <section class="card">
                <h2>"Upload a version"</h2>
                <ActionForm action=upload attr:class="stack narrow-form">
                    <CsrfField/>
                    <div class="field">
                        <label for="resource-kind">"Kind"</label>
                        <select id="resource-kind" name="kind">
                            <option value="scripts">"scripts"</option>
                            <option value="files">"files"</option>
                        </select>
                    </div>
                    <div class="field">
                        <label for="resource-name">"Name"</label>
                        <input id="resource-name" name="name" required placeholder="e.g. web.sh"/>
                        <FieldError error field="name"/>
                    </div>
                    <div class="field">
                        <label for="resource-content">"Content"</label>
                        <textarea id="resource-content" name="content" class="code" rows="10" spellcheck="false"></textarea>
                        <FieldError error field="content"/>
                    </div>
                    <label class="check"><input type="checkbox" name="stage" value="1" checked/> " Stage this version (nodes get it from now on)"</label>
                    <FormError error=general/>
                    <button class="button" type="submit">"Upload"</button>
                </ActionForm>
            </section>
                    })
                })}
            </Suspense>
        }
}
