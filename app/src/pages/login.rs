//! `/login`: sign in, then go where the visitor was headed (`?next=`).

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::errors::{action_error, FormError};
use crate::components::form::TextField;
use crate::components::session::session_changed;
use crate::server_fns::session::login::{landing, Login};

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
        </section>
    }
}
