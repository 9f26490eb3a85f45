//! A card holding one data table: the column headers and the rows the page made.

use leptos::prelude::*;

/// `columns` are the header labels; those also in `numeric` are right-aligned.
#[component]
pub fn TableCard(
    columns: &'static [&'static str],
    #[prop(optional)] numeric: &'static [&'static str],
    /// `data-testid` of the table, for tests.
    #[prop(optional)]
    testid: &'static str,
    children: Children,
) -> impl IntoView {
    let headers = columns
        .iter()
        .map(|column| {
            let class = numeric.contains(column).then_some("num");
            view! { <th scope="col" class=class>{*column}</th> }
        })
        .collect_view();
    view! {
        <section class="card table-card">
            <div class="table-scroll">
                <table class="data" data-testid=(!testid.is_empty()).then_some(testid)>
                    <thead><tr>{headers}</tr></thead>
                    <tbody>{children()}</tbody>
                </table>
            </div>
        </section>
    }
}
