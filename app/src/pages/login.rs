//! `/login`: sign in, then go where the visitor was headed (`?next=`).

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::errors::{action_error, FormError};
use crate::components::form::TextField;
use crate::components::session::session_changed;
use crate::server_fns::session::login::{landing, Login};
use crate::server_fns::session::sso::sso_issuers;

#[component]
pub fn LoginPage() -> impl IntoView {
    let login = ServerAction::<Login>::new();
    let query = use_query_map();
    Effect::new(move |_| {
        if matches!(login.value().get(), Some(Ok(()))) {
            session_changed();
            // A fresh page load: the new session's CSRF token is in its head.
            let next = query.with_untracked(|query| query.get("next"));
            let _ = window().location().set_href(&landing(next.as_deref()));
        }
    });
    let next = move || query.with(|query| query.get("next").unwrap_or_default());
    let error = action_error(login);
    // Single sign-on: plain links, so they work before (and without) the scripts.
    let issuers = Resource::new(|| (), |()| sso_issuers());
    let sso_href = move |name: &str| {
        let next = query.with(|query| query.get("next"));
        match next {
            Some(next) => format!(
                "/auth/sso/{name}/start?next={}",
                crate::query::encode_value(&next)
            ),
            None => format!("/auth/sso/{name}/start"),
        }
    };
    view! {
        <Title text="Sign in · Corral"/>
        <section class="card narrow">
            <h1>"Sign in"</h1>
            <ActionForm action=login>
                <input type="hidden" name="next" value=next/>
                <TextField label="Username" id="username" name="username" error
                    autocomplete="username" required=true autofocus=true/>
                <TextField label="Password" id="password" name="password" error
                    password=true autocomplete="current-password" required=true/>
                <FormError error/>
                <button class="button" type="submit" disabled=move || login.pending().get()>
                    {move || if login.pending().get() { "Signing in…" } else { "Sign in" }}
                </button>
            </ActionForm>
            <Suspense>
                {move || Suspend::new(async move {
                    let buttons = issuers.await.unwrap_or_default();
                    (!buttons.is_empty()).then(|| view! {
                        <div class="sso-buttons">
                            <p class="muted">"Or"</p>
                            {buttons.into_iter().map(|button| {
                                let href = sso_href(&button.name);
                                view! {
                                    <a class="button secondary" rel="external" href=href>
                                        {format!("Sign in with {}", button.label)}
                                    </a>
                                }
                            }).collect_view()}
                        </div>
                    })
                })}
            </Suspense>
        </section>
    }
}
