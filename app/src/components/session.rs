//! The signed-in user as every page sees it: loaded once by the layout and shared
//! through context, with the hidden CSRF field every state-changing form carries.

use leptos::prelude::*;

use crate::error::UiError;
use crate::server_fns::session::me::current_user;
use crate::server_fns::session::Me;

/// The signed-in user, or `None` for a visitor.
pub type MeResource = Resource<Result<Option<Me>, UiError>>;

/// Bumped when someone signs in or out in this tab, so the user is read again.
#[derive(Clone, Copy)]
struct SessionVersion(RwSignal<u32>);

/// Loads the signed-in user and shares it with every page below.
pub fn provide_me() -> MeResource {
    let version = RwSignal::new(0u32);
    provide_context(SessionVersion(version));
    let me = Resource::new(move || version.get(), |_| current_user());
    provide_context(me);
    me
}

/// Tells the layout that the signed-in user changed (after signing in or out
/// without a page load).
pub fn session_changed() {
    if let Some(SessionVersion(version)) = use_context::<SessionVersion>() {
        version.update(|version| *version += 1);
    }
}

pub fn use_me() -> MeResource {
    expect_context::<MeResource>()
}

/// The session's CSRF token, the same on the server and in the browser without a
/// resource or a suspense boundary: the server has it from the request (the
/// session layer's middleware puts it there) and writes it into the page head;
/// the browser reads it back from there. Signing in loads a new page, so the
/// token in the head is always the session's.
pub fn csrf_token() -> String {
    #[cfg(feature = "ssr")]
    {
        use_context::<http::request::Parts>()
            .and_then(|parts| {
                parts
                    .extensions
                    .get::<crate::session::CsrfToken>()
                    .map(|token| token.0.clone())
            })
            .unwrap_or_default()
    }
    #[cfg(not(feature = "ssr"))]
    {
        document()
            .query_selector("meta[name=csrf-token]")
            .ok()
            .flatten()
            .and_then(|meta| meta.get_attribute("content"))
            .unwrap_or_default()
    }
}

/// `<input type="hidden" name="csrf">` with the session's token, for every form
/// that changes something.
#[component]
pub fn CsrfField() -> impl IntoView {
    view! { <input type="hidden" name="csrf" value=csrf_token()/> }
}
