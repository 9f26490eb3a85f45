//! The parts every form is made of, so a page writes only what its form asks for:
//! [`Field`] (a label, the control, a hint and the field's problems), [`TextField`]
//! and [`SelectField`] (the same for a text input or a fixed choice, in one line),
//! [`AdminForm`] (a post form with the session's CSRF token, the form's error and its
//! submit button), [`IdButton`] (one row action's button) and [`PostForm`] (a post form
//! for the pages every visitor loads). The markup is the one the stylesheet and the
//! tests rely on: `div.field`, `label[for]`, `p.hint`, `p.field-error[data-field]`,
//! `p.form-error`.

use leptos::prelude::*;
use leptos::server_fn::client::Client;
use leptos::server_fn::codec::PostUrl;
use leptos::server_fn::request::ClientReq;
use leptos::server_fn::{Http, ServerFn};
use leptos::web_sys::FormData;
use serde::de::DeserializeOwned;

use super::errors::{FieldError, FormError, FormErrors};
use super::session::CsrfField;

/// A form posting to a server function, for what every visitor loads (the page frame,
/// the cluster list). Without JavaScript the browser posts its fields, as it posts an
/// `ActionForm`'s; with it, a submit dispatches `input`'s typed arguments (the same
/// values as the fields) to `action`. `ActionForm` instead parses the fields back into
/// arguments, and that parsing (serde_qs) would be in the bundle's main module, which
/// every page downloads (docs/bundle.md).
#[component]
pub fn PostForm<ServFn, Input>(
    action: ServerAction<ServFn>,
    /// The arguments a submit sends.
    input: Input,
    #[prop(optional)] class: &'static str,
    children: Children,
) -> impl IntoView
where
    ServFn: ServerFn + Clone + Send + Sync + 'static,
    ServFn::Output: Send + Sync + 'static,
    ServFn::Error: Send + Sync + 'static,
    Input: Fn() -> ServFn + 'static,
{
    let submit = move |event: leptos::ev::SubmitEvent| {
        event.prevent_default();
        action.dispatch(input());
    };
    view! {
        <form method="post" action=ServFn::url() class=class on:submit=submit>
            {children()}
        </form>
    }
}

/// One labelled control: `<div class="field">` with the label, the control (the
/// children, which carry the `id` the label names), an optional hint and, with
/// `error` and `field`, the problems the server found with that field. For a
/// plain text input, [`TextField`] says it in one line.
#[component]
pub fn Field(
    label: &'static str,
    /// The control's `id`, which the label is `for`.
    id: &'static str,
    /// The form's errors; with `field`, that field's problems show under it.
    #[prop(optional, into)]
    error: Option<FormErrors>,
    /// The field as the server names it in its problems (the control's `name`).
    #[prop(optional)]
    field: Option<&'static str>,
    /// What to enter, under the control.
    #[prop(optional, into)]
    hint: Option<TextProp>,
    children: Children,
) -> impl IntoView {
    let problems = error.zip(field);
    field_view(label, id, children(), hint, problems)
}

/// A labelled text input named `name`, which is also what the server calls the
/// field in its problems (shown under it with `error`). The other props are the
/// input's attributes of the same names; `password` makes it `type="password"`.
#[component]
pub fn TextField(
    label: &'static str,
    id: &'static str,
    name: &'static str,
    #[prop(optional, into)] error: Option<FormErrors>,
    #[prop(optional, into)] hint: Option<TextProp>,
    #[prop(optional)] password: bool,
    #[prop(optional)] required: bool,
    #[prop(optional)] autofocus: bool,
    #[prop(optional)] autocomplete: Option<&'static str>,
    #[prop(optional)] inputmode: Option<&'static str>,
    #[prop(optional)] pattern: Option<&'static str>,
    #[prop(optional)] minlength: Option<usize>,
    #[prop(optional)] placeholder: Option<&'static str>,
) -> impl IntoView {
    let input = view! {
        <input id=id name=name type=password.then_some("password") required=required
            autofocus=autofocus autocomplete=autocomplete inputmode=inputmode
            pattern=pattern minlength=minlength placeholder=placeholder/>
    };
    let problems = error.map(|error| (error, name));
    field_view(label, id, input.into_any(), hint, problems)
}

/// A labelled `<select>` named `name` among fixed `options` (value, text; the first is
/// chosen at first). As with [`TextField`], the server calls the field `name` in the
/// problems shown under it with `error`.
#[component]
pub fn SelectField(
    label: &'static str,
    id: &'static str,
    name: &'static str,
    options: &'static [(&'static str, &'static str)],
    #[prop(optional, into)] error: Option<FormErrors>,
) -> impl IntoView {
    let options = options
        .iter()
        .map(|&(value, text)| view! { <option value=value>{text}</option> })
        .collect_view();
    let select = view! { <select id=id name=name>{options}</select> };
    let problems = error.map(|error| (error, name));
    field_view(label, id, select.into_any(), None, problems)
}

/// The markup of a field: `div.field` > `label[for]`, the control, `p.hint`, the
/// field's `p.field-error`s.
fn field_view(
    label: &'static str,
    id: &'static str,
    control: AnyView,
    hint: Option<TextProp>,
    problems: Option<(FormErrors, &'static str)>,
) -> impl IntoView {
    view! {
        <div class="field">
            <label for=id>{label}</label>
            {control}
            {hint.map(|hint| view! { <p class="hint">{move || hint.get()}</p> })}
            {problems.map(|(error, field)| view! { <FieldError error field/> })}
        </div>
    }
}

/// A form that changes something: posted to `action`'s server function (in place
/// with JavaScript, as a plain post without), the session's CSRF field first,
/// then the fields (the children), the form's error and a submit button labelled
/// `submit`.
#[component]
pub fn AdminForm<ServFn, OutputProtocol>(
    action: ServerAction<ServFn>,
    /// The form's errors (see [`action_error`](super::errors::action_error)); what
    /// no field shows goes above the button.
    #[prop(into)]
    error: FormErrors,
    submit: &'static str,
    /// The form's class; most forms are a narrow stack of fields.
    #[prop(default = "stack narrow-form")]
    class: &'static str,
    /// `data-testid` of the form, for tests.
    #[prop(optional)]
    testid: Option<&'static str>,
    children: Children,
) -> impl IntoView
where
    // What `ActionForm` asks of a server function: posted as a URL-encoded form.
    ServFn: DeserializeOwned
        + ServerFn<Protocol = Http<PostUrl, OutputProtocol>>
        + Clone
        + Send
        + Sync
        + 'static,
    <<ServFn::Client as Client<ServFn::Error>>::Request as ClientReq<ServFn::Error>>::FormData:
        From<FormData>,
    ServFn::Output: Send + Sync + 'static,
    ServFn::Error: Send + Sync + 'static,
    ServFn::Client: Client<ServFn::Error>,
{
    view! {
        <ActionForm action attr:class=class attr:data-testid=testid>
            <CsrfField/>
            {children()}
            <FormError error/>
            <button class="button" type="submit">{submit}</button>
        </ActionForm>
    }
}

/// What a form of one button among a row's actions (Remove, Revoke…) holds inside its
/// `ActionForm`: the session's CSRF field, `id` as the field `id`, and the button.
#[component]
pub fn IdButton(
    id: String,
    /// The button's text.
    label: &'static str,
    /// The button's class.
    #[prop(default = "button button-small")]
    class: &'static str,
) -> impl IntoView {
    view! {
        <CsrfField/>
        <input type="hidden" name="id" value=id/>
        <button class=class type="submit">{label}</button>
    }
}

/// Submits the form an input event came from again: a GET form whose preview
/// follows its inputs as they change (with JavaScript; without, it has a button).
pub fn resubmit_form(event: leptos::ev::Event) {
    use leptos::wasm_bindgen::JsCast;
    let form = event_target::<leptos::web_sys::Element>(&event)
        .closest("form")
        .ok()
        .flatten()
        .and_then(|form| form.dyn_into::<leptos::web_sys::HtmlFormElement>().ok());
    if let Some(form) = form {
        let _ = form.request_submit();
    }
}
