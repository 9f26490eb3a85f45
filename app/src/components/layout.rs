//! The frame around every page: top bar with the product name and navigation.

use leptos::prelude::*;

#[component]
pub fn Layout(children: Children) -> impl IntoView {
    view! {
        <header class="topbar">
            <a class="brand" href="/">
                <span class="brand-mark" aria-hidden="true">"◆"</span>
                " Corral"
            </a>
            <nav class="topnav" aria-label="Main">
                <a href="/">"Overview"</a>
            </nav>
        </header>
        <main class="page">{children()}</main>
    }
}
