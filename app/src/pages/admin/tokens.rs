//! `/admin/tokens`: the admin's API tokens (for the CLI and scripts); a new
//! token's secret is shown once, right after it is created.

use api_types::TokenView;
use leptos::prelude::*;
use leptos_meta::Title;

use crate::components::errors::action_error;
use crate::components::form::{AdminForm, IdButton, TextField};
use crate::components::table::DataTable;
use crate::components::time::timestamp;
use crate::pages::admin::loaded::{Loaded, OnceLoaded};
use crate::server_fns::admin::create_token::CreateToken;
use crate::server_fns::admin::revoke_token::RevokeToken;
use crate::server_fns::admin::tokens::list_tokens;

#[component]
pub fn TokensPage() -> impl IntoView {
    let create = ServerAction::<CreateToken>::new();
    let revoke = ServerAction::<RevokeToken>::new();
    let tokens = Resource::new(move || create.version().get(), |_| list_tokens());
    let error = action_error(create);
    let created = move || create.value().get().and_then(Result::ok);
    let maybe = |ms: Option<i64>| ms.map_or_else(|| "—".to_owned(), timestamp);
    view! {
        <Title text="API tokens · Admin · Corral"/>
        <div class="page-head"><h1>"API tokens"</h1></div>
        {move || created().map(|token| view! {
            <div class="banner banner-ok" role="status" data-testid="new-token">
                <p>"Token " <strong>{token.name}</strong> " created. Copy its secret now; it is not shown again:"</p>
                <p><code class="secret">{token.secret}</code></p>
            </div>
        })}
        <Loaded data=tokens render={move |rows: Vec<TokenView>| {
            if rows.is_empty() {
                return view! { <p class="muted">"No tokens yet."</p> }.into_any();
            }
            let rows = rows.into_iter().map(|row| {
                let state = if row.revoked_at_ms.is_some() { ("state state-idle", "revoked") } else { ("state state-ok", "active") };
                let active = row.revoked_at_ms.is_none();
                view! {
                    <tr>
                        <th scope="row">{row.name}</th>
                        <td><span class=state.0>{state.1}</span></td>
                        <td>{row.scope.as_str()}</td>
                        <td>{timestamp(row.created_at_ms)}</td>
                        <td>{maybe(row.last_used_at_ms)}</td>
                        <td>{maybe(row.expires_at_ms)}{row.renews_on_use.then_some(" (renewed on use)")}</td>
                        <td>{active.then(|| view! {
                            <ActionForm action=revoke attr:class="inline">
                                <IdButton id=row.id.clone() label="Revoke" class="button button-small button-danger"/>
                            </ActionForm>
                        })}</td>
                    </tr>
                }
            }).collect_view();
            view! {
                <DataTable card=true columns=&["Name", "State", "Scope", "Created", "Last used", "Expires", ""]>
                    {rows}
                </DataTable>
            }.into_any()
        }}/>
        <OnceLoaded data=tokens>
            <section class="card">
                <h2>"New token"</h2>
                <p class="muted">"Without JavaScript the secret cannot be shown after the form posts; use " <code>"corral login"</code> " or the API instead."</p>
                <AdminForm action=create error submit="Create token">
                    <TextField label="What it is for" id="token-name" name="name" error
                        required=true placeholder="e.g. ci"/>
                    <TextField label="Expires after (days)" id="token-days" name="days" error
                        inputmode="numeric" placeholder="never"/>
                    <div class="field">
                        <label><input type="checkbox" name="read_only" value="on"/>" Read-only: it can list and show, but not change anything"</label>
                    </div>
                </AdminForm>
            </section>
        </OnceLoaded>
    }
}
