//! The two halves every admin list page with a create form repeated: the list
//! (or the page's error, the 403 card for a tenant user) and, under it, the
//! forms, shown only once the list has loaded.

use leptos::prelude::*;

use crate::error::UiError;

/// `render`s the loaded data, or shows the page's error.
#[component]
pub fn Loaded<T, F>(data: Resource<Result<T, UiError>>, render: F) -> impl IntoView
where
    T: Clone + Send + Sync + 'static,
    F: Fn(T) -> AnyView + Clone + Send + Sync + 'static,
{
    view! {
        <Suspense fallback=|| view! { <p class="muted">"Loading…"</p> }>
            {move || {
                let render = render.clone();
                Suspend::new(async move {
                    match data.await {
                        Ok(data) => render(data),
                        Err(error) => super::layout::admin_error(error),
                    }
                })
            }}
        </Suspense>
    }
}

/// The page's forms, once `data` has loaded (never beside a load error).
#[component]
pub fn OnceLoaded<T>(data: Resource<Result<T, UiError>>, children: ChildrenFn) -> impl IntoView
where
    T: Clone + Send + Sync + 'static,
{
    view! {
        <Suspense>
            {move || {
                let children = children.clone();
                Suspend::new(async move { data.await.is_ok().then(|| children()) })
            }}
        </Suspense>
    }
}
