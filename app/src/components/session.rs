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

/// `<input type="hidden" name="csrf">` with the session's token.
#[component]
pub fn CsrfField() -> impl IntoView {
    let me = use_me();
    view! {
        <Suspense>
            {move || Suspend::new(async move {
                let token = match me.await {
                    Ok(Some(me)) => me.csrf,
                    _ => String::new(),
                };
                view! { <input type="hidden" name="csrf" value=token/> }
            })}
        </Suspense>
    }
}
