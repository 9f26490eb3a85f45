//! How a page shows a server function's error: what went wrong and what to do next
//! (sign in again, go back to the list), with the matching HTTP status when the page
//! is rendered on the server; and how a form shows its last submission's error, each
//! problem once: next to the field it is about, the rest above the button.

use leptos::prelude::*;
use leptos_router::hooks::use_location;

use crate::error::UiError;

/// A form's error and the fields that show their own problems, so that the form's
/// error line ([`FormError`]) leaves out what a field already says. Each
/// [`FieldError`] adds its field when it is made, before anything renders; a field
/// made later (inside a view that appears afterwards) counts from the next error on.
#[derive(Clone, Copy)]
pub struct FormErrors {
    error: Signal<Option<UiError>>,
    fields_shown: StoredValue<Vec<&'static str>>,
}

impl FormErrors {
    pub fn new(error: Signal<Option<UiError>>) -> Self {
        Self {
            error,
            fields_shown: StoredValue::new(Vec::new()),
        }
    }

    /// The whole error (tracked, like a signal's `get`).
    pub fn get(&self) -> Option<UiError> {
        self.error.get()
    }

    /// Notes that `field`'s problems show next to it.
    fn show_at_field(&self, field: &'static str) {
        self.fields_shown.update_value(|fields| {
            if !fields.contains(&field) {
                fields.push(field);
            }
        });
    }

    /// The error unless one of the form's fields shows a problem of it.
    fn general(&self) -> Option<UiError> {
        self.get().filter(|error| {
            self.fields_shown.with_value(|fields| {
                fields
                    .iter()
                    .all(|field| error.problems_for(field).is_empty())
            })
        })
    }
}

impl From<Signal<Option<UiError>>> for FormErrors {
    fn from(error: Signal<Option<UiError>>) -> Self {
        Self::new(error)
    }
}

/// The error of `action`'s last submission (`None` before one, or after a success),
/// for the form's error line and its fields.
pub fn action_error<S>(action: ServerAction<S>) -> FormErrors
where
    S: leptos::server_fn::ServerFn<Error = UiError> + Clone + Send + Sync + 'static,
    S::Output: Clone + Send + Sync + 'static,
{
    FormErrors::new(Signal::derive(move || {
        action.value().get().and_then(Result::err)
    }))
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
    let pathname = location.pathname;
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
        // A query naming nothing (`?state=sleeping`): the page without it.
        UiError::Invalid { .. } => view! {
            <p><a href=move || pathname.get()>"Show the page without its query"</a></p>
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

/// A form's error line: the message, unless a field of the form shows its problem.
#[component]
pub fn FormError(#[prop(into)] error: FormErrors) -> impl IntoView {
    view! {
        {move || error.general().map(|error| view! {
            <p class="form-error" role="alert">{error.to_string()}</p>
        })}
    }
}

/// The messages for one field, under it (and so left out of the form's error line).
#[component]
pub fn FieldError(#[prop(into)] error: FormErrors, field: &'static str) -> impl IntoView {
    error.show_at_field(field);
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
