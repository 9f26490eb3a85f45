//! Data tables: the column headers and the rows the page made, scrolling sideways
//! on narrow screens, alone or as a card of their own.

use leptos::prelude::*;

/// `columns` are the header labels; those also in `numeric` are right-aligned.
#[component]
pub fn DataTable(
    columns: &'static [&'static str],
    #[prop(optional)] numeric: &'static [&'static str],
    /// `data-testid` of the table, for tests.
    #[prop(optional)]
    testid: &'static str,
    /// In a card of its own (a page's main list), not inside another card.
    #[prop(optional)]
    card: bool,
    children: Children,
) -> impl IntoView {
    let headers = columns
        .iter()
        .map(|column| {
            let class = numeric.contains(column).then_some("num");
            view! { <th scope="col" class=class>{*column}</th> }
        })
        .collect_view();
    let table = view! {
        <div class="table-scroll">
            <table class="data" data-testid=(!testid.is_empty()).then_some(testid)>
                <thead><tr>{headers}</tr></thead>
                <tbody>{children()}</tbody>
            </table>
        </div>
    };
    if card {
        view! { <section class="card table-card">{table}</section> }.into_any()
    } else {
        table.into_any()
    }
}
