//! The signed-in user as every page sees it: loaded once by the layout and shared
//! through context, with the hidden CSRF field every state-changing form carries.

use leptos::prelude::*;

use crate::error::UiError;
use crate::model::Me;
use crate::server_fns::session::me::current_user;

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

/// `<input type="hidden" name="csrf">` with the session's token. Pages pass the
/// token down from the user they awaited in their own suspense boundary: a
/// boundary of its own here, nested in theirs, would not hydrate.
#[component]
pub fn CsrfField(#[prop(into)] token: String) -> impl IntoView {
    view! { <input type="hidden" name="csrf" value=token/> }
}

/// The CSRF token of the signed-in user (empty for a visitor, whose forms the
/// server refuses anyway).
pub fn csrf_of(me: &Result<Option<Me>, UiError>) -> String {
    match me {
        Ok(Some(me)) => me.csrf.clone(),
        _ => String::new(),
    }
}
