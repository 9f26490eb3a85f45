//! `/admin/showback`: what the tenant's clusters cost in a month (`?month=YYYY-MM`,
//! this month by default), per user and per template, with a CSV download of the same
//! tables from the API (docs/cost.md). Tenant admins only: the server function refuses
//! others.

use api_types::{money, ShowbackLineView, ShowbackView};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::Form;
use leptos_router::hooks::use_query_map;

use crate::components::form::Field;
use crate::components::table::DataTable;
use crate::pages::admin::loaded::Loaded;
use crate::server_fns::admin::showback::showback_page;

fn rows(lines: Vec<ShowbackLineView>, by: &'static str) -> impl IntoView {
    if lines.is_empty() {
        return view! { <p class="muted">"Nothing priced ran this month."</p> }.into_any();
    }
    let rows = lines
        .into_iter()
        .map(|line| {
            view! {
                <tr data-showback=by data-name=line.name.clone()>
                    <th scope="row">{line.name.clone()}</th>
                    <td class="num">{money(line.cost)}</td>
                </tr>
            }
        })
        .collect_view();
    let columns: &'static [&'static str] = if by == "user" {
        &["User", "Cost"]
    } else {
        &["Template", "Cost"]
    };
    view! { <DataTable numeric=&["Cost"] columns>{rows}</DataTable> }.into_any()
}

fn tables(view: ShowbackView) -> impl IntoView {
    let csv = format!("/api/v1/showback?month={}&format=csv", view.month);
    let month = view.month.clone();
    view! {
        // Inside the loaded view: the field shows the month the tables are of, also
        // when the query names none.
        <Form method="GET" action="" attr:class="filters">
            <Field label="Month" id="showback-month">
                <input id="showback-month" type="month" name="month" value=month/>
            </Field>
            <button class="button button-quiet" type="submit">"Show"</button>
        </Form>
        <p data-testid="showback-total">
            {view.month.clone()} ": total " <strong>{money(view.total)}</strong> " "
            <a href=csv download data-testid="showback-csv">"Download CSV"</a>
        </p>
        <section class="card">
            <h2>"Per user"</h2>
            {rows(view.per_user, "user")}
        </section>
        <section class="card">
            <h2>"Per template"</h2>
            {rows(view.per_template, "template")}
        </section>
    }
}

#[component]
pub fn ShowbackPage() -> impl IntoView {
    let query = use_query_map();
    let month = move || query.with(|query| query.get("month"));
    let data = Resource::new(month, showback_page);
    view! {
        <Title text="Showback · Admin · Corral"/>
        <div class="page-head"><h1>"Showback"</h1></div>
        <p class="muted">
            "What your tenant's clusters cost in a month (UTC), from the hours each ran at its hardware types' prices."
        </p>
        <Loaded data render={move |view: ShowbackView| tables(view).into_any()}/>
    }
}
