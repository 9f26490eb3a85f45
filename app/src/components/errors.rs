//! How a page shows a server function's error: what went wrong and what to do next
//! (sign in again, go back to the list), with the matching HTTP status when the page
//! is rendered on the server.

use leptos::prelude::*;
use leptos_router::hooks::use_location;

use crate::error::UiError;

/// The error of `action`'s last submission (`None` before one, or after a success),
/// for the form's error line and its fields.
pub fn action_error<S>(action: ServerAction<S>) -> Signal<Option<UiError>>
where
    S: leptos::server_fn::ServerFn<Error = UiError> + Clone + Send + Sync + 'static,
    S::Output: Clone + Send + Sync + 'static,
{
    Signal::derive(move || action.value().get().and_then(Result::err))
}

/// Sets the response status of a server-rendered page.
pub fn set_status(status: u16) {
    #[cfg(feature = "ssr")]
    {
        if let (Some(response), Ok(status)) = (
            use_context::<leptos_axum::ResponseOptions>(),
            http::StatusCode::from_u16(status),
        ) {
            response.set_status(status);
        }
    }
    #[cfg(not(feature = "ssr"))]
    let _ = status;
}

/// A whole-page error: the page could not load.
#[component]
pub fn PageError(error: UiError) -> impl IntoView {
    set_status(error.status_code());
    let location = use_location();
    let next = move || {
        format!(
            "/login?next={}",
            crate::query::encode_value(&format!(
                "{}{}",
                location.pathname.get(),
                location.search.get()
            ))
        )
    };
    let hint = match &error {
        UiError::Unauthenticated => {
            view! { <p><a class="button" href=next>"Sign in again"</a></p> }.into_any()
        }
        UiError::NotFound(_) | UiError::Forbidden(_) => view! {
            <p><a href="/clusters">"Back to your clusters"</a></p>
        }
        .into_any(),
        _ => view! { <p class="muted">"Reload the page to try again."</p> }.into_any(),
    };
    view! {
        <section class="card error-card" role="alert">
            <h1>"This page could not be shown"</h1>
            <p>{error.to_string()}</p>
            {hint}
        </section>
    }
}

/// A form's error: the message, unless every problem is shown next to its field.
#[component]
pub fn FormError(#[prop(into)] error: Signal<Option<UiError>>) -> impl IntoView {
    view! {
        {move || error.get().map(|error| view! {
            <p class="form-error" role="alert">{error.to_string()}</p>
        })}
    }
}

/// The messages for one field, under it.
#[component]
pub fn FieldError(
    #[prop(into)] error: Signal<Option<UiError>>,
    field: &'static str,
) -> impl IntoView {
    view! {
        {move || {
            error
                .get()
                .map(|error| error.problems_for(field))
                .unwrap_or_default()
                .into_iter()
                .map(|message| view! { <p class="field-error" data-field=field>{message}</p> })
                .collect_view()
        }}
    }
}
