//! The frame around every page: the top bar (product, navigation by role, the
//! signed-in user, linking to their profile, and "Sign out"), the page, and a footer
//! naming the server.

use leptos::prelude::*;
use leptos_router::components::A;

use super::form::PostForm;
use super::session::{csrf_token, provide_me, session_changed, CsrfField};
use crate::server_fns::session::logout::Logout;
use crate::server_fns::status::get_server_status;

#[component]
pub fn Layout(children: Children) -> impl IntoView {
    let me = provide_me();
    let logout = ServerAction::<Logout>::new();
    Effect::new(move |_| {
        if logout.version().get() > 0 {
            session_changed();
        }
    });
    let status = Resource::new(|| (), |_| get_server_status());
    view! {
        <a class="skip-link" href="#main">"Skip to content"</a>
        <header class="topbar">
            <a class="brand" href="/clusters">
                <span class="brand-mark" aria-hidden="true">"◆"</span>
                " Corral"
            </a>
            <Suspense>
                {move || Suspend::new(async move {
                    match me.await {
                        Ok(Some(me)) => {
                            let admin = me.is_admin();
                            view! {
                                <nav class="topnav" aria-label="Main">
                                    <A href="/clusters" exact=true>"Clusters"</A>
                                    <A href="/clusters/new">"New cluster"</A>
                                    {admin.then(|| view! { <a href="/admin">"Admin"</a> })}
                                </nav>
                                <div class="usermenu">
                                    // The user's own page: who they are and their SSH keys.
                                    <A href="/profile" attr:class="who" attr:title="Your profile and SSH keys" attr:data-testid="signed-in-as">
                                        {me.username.clone()}
                                        <span class="role">{me.role.as_str()}</span>
                                    </A>
                                    <PostForm action=logout input=|| Logout { csrf: csrf_token() }>
                                        <CsrfField/>
                                        <button class="button button-quiet" type="submit">"Sign out"</button>
                                    </PostForm>
                                </div>
                            }
                            .into_any()
                        }
                        _ => view! {
                            <nav class="topnav" aria-label="Main">
                                <a href="/login">"Sign in"</a>
                            </nav>
                        }
                        .into_any(),
                    }
                })}
            </Suspense>
        </header>
        <main class="page" id="main">{children()}</main>
        <footer class="footer">
            <Suspense>
                {move || Suspend::new(async move {
                    status.await.ok().map(|status| view! {
                        "Corral " {status.version} " · " {status.backend}
                    })
                })}
            </Suspense>
        </footer>
    }
}
