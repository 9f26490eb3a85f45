//! `/clusters`: the tenant's clusters with state, owner and lease, expiring first,
//! filterable by the query string (`?state=&template=&q=&mine=1`), so filters work
//! without JavaScript and can be bookmarked. The database filters and pages the list
//! (a tenant can have thousands of clusters): a page shows 50, and its "Next" link
//! (`&cursor=`, a plain link) goes on right after its last cluster.

use api_types::{ClusterCost, ClusterList, ClusterState, ClusterView};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::Form;
use leptos_router::hooks::use_query_map;

use crate::components::errors::{action_error, FormError, PageError};
use crate::components::form::PostForm;
use crate::components::session::{csrf_token, CsrfField};
use crate::components::state::StateBadge;
use crate::components::table::DataTable;
use crate::components::time::{duration, now_ms, timestamp, LeaseLeft};
use crate::query::encode_value;
use crate::server_fns::clusters::extend_lease::ExtendLease;
use crate::server_fns::clusters::list::list_clusters;

/// What the filter form asks for.
#[derive(Debug, Clone, Default, PartialEq)]
struct Filter {
    /// `None`: any state (an unknown word in the query string too).
    state: Option<ClusterState>,
    template: String,
    text: String,
    mine: bool,
}

impl Filter {
    /// The list's address with this filter (and `cursor`, when given).
    fn href(&self, cursor: Option<&str>) -> String {
        let mut pairs = Vec::new();
        if let Some(state) = self.state {
            pairs.push(format!("state={}", state.as_str()));
        }
        if !self.template.is_empty() {
            pairs.push(format!("template={}", encode_value(&self.template)));
        }
        if !self.text.is_empty() {
            pairs.push(format!("q={}", encode_value(&self.text)));
        }
        if self.mine {
            pairs.push("mine=1".to_owned());
        }
        if let Some(cursor) = cursor {
            pairs.push(format!("cursor={}", encode_value(cursor)));
        }
        if pairs.is_empty() {
            "/clusters".to_owned()
        } else {
            format!("/clusters?{}", pairs.join("&"))
        }
    }
}

#[component]
pub fn ClusterListPage() -> impl IntoView {
    let extend = ServerAction::<ExtendLease>::new();
    let query = use_query_map();
    let filter = Memo::new(move |_| {
        query.with(|query| Filter {
            state: query.get("state").and_then(|state| state.parse().ok()),
            template: query.get("template").unwrap_or_default(),
            text: query.get("q").unwrap_or_default(),
            mine: query.get("mine").is_some_and(|mine| mine == "1"),
        })
    });
    let cursor = Memo::new(move |_| query.with(|query| query.get("cursor").unwrap_or_default()));
    let clusters = Resource::new(
        move || (extend.version().get(), filter.get(), cursor.get()),
        |(_, filter, cursor)| {
            list_clusters(
                filter
                    .state
                    .map_or_else(String::new, |state| state.as_str().to_owned()),
                filter.template,
                filter.text,
                filter.mine,
                cursor,
            )
        },
    );
    let extend_error = action_error(extend);
    view! {
        <Title text="Clusters · Corral"/>
        <div class="page-head">
            <h1>"Clusters"</h1>
            <a class="button" href="/clusters/new">"New cluster"</a>
        </div>
        <FormError error=extend_error/>
        <Suspense fallback=|| view! { <p class="muted">"Loading clusters…"</p> }>
            {move || Suspend::new(async move {
                match clusters.await {
                    Err(error) => view! { <PageError error/> }.into_any(),
                    Ok(list) => {
                        let filter = filter.get_untracked();
                        let paged = !cursor.get_untracked().is_empty();
                        let ClusterList { items, total, next, cost, templates, states, .. } = list;
                        // No live cluster at all (the states of the tenant's live
                        // clusters are unfiltered), not merely none matching.
                        let none_yet = states.is_empty();
                        let next = next.map(|next| filter.href(Some(&next)));
                        let first = paged.then(|| filter.href(None));
                        view! {
                            <FilterForm filter=filter templates states/>
                            <ClusterTable clusters=items total none_yet cost extend/>
                            <Pager first next/>
                        }
                        .into_any()
                    }
                }
            })}
        </Suspense>
    }
}

/// Links to the list's first page (once past it) and to the next one (while there is
/// one): plain links, so paging works without JavaScript.
#[component]
fn Pager(first: Option<String>, next: Option<String>) -> impl IntoView {
    (first.is_some() || next.is_some()).then(|| {
        view! {
            <nav class="pager" aria-label="Pages" data-testid="cluster-pager">
                {first.map(|href| view! { <a href=href rel="first">"← First page"</a> " " })}
                {next.map(|href| view! { <a href=href rel="next" data-testid="next-page">"Next →"</a> })}
            </nav>
        }
    })
}

#[component]
fn FilterForm(filter: Filter, templates: Vec<String>, states: Vec<ClusterState>) -> impl IntoView {
    let states = states
        .into_iter()
        .map(|state| state.as_str().to_owned())
        .collect();
    view! {
        <Form method="GET" action="" attr:class="filters" attr:role="search">
            <label>"Name " <input type="search" name="q" value=filter.text placeholder="part of a name"/></label>
            {one_or_any("State ", "state", states, filter.state.map_or("", ClusterState::as_str))}
            {one_or_any("Template ", "template", templates, &filter.template)}
            <label class="check"><input type="checkbox" name="mine" value="1" checked=filter.mine/> " Mine only"</label>
            <button class="button button-quiet" type="submit">"Filter"</button>
        </Form>
    }
}

/// A filter keeping the clusters with one of `values` in `name`, or, left at
/// "any", all of them.
fn one_or_any(
    label: &'static str,
    name: &'static str,
    values: Vec<String>,
    selected: &str,
) -> impl IntoView {
    let options = values
        .into_iter()
        .map(|value| {
            let is_selected = value == selected;
            let text = value.clone();
            view! { <option value=value selected=is_selected>{text}</option> }
        })
        .collect_view();
    view! {
        <label>{label}
            <select name=name>
                <option value="">"any"</option>
                {options}
            </select>
        </label>
    }
}

#[component]
fn ClusterTable(
    clusters: Vec<ClusterView>,
    /// How many clusters match the filters (every page).
    total: u64,
    /// The tenant has no live cluster at all.
    none_yet: bool,
    /// What the matching clusters cost together (every page).
    cost: Option<ClusterCost>,
    extend: ServerAction<ExtendLease>,
) -> impl IntoView {
    if none_yet {
        return view! {
            <section class="card empty">
                <h2>"No clusters yet"</h2>
                <p>"Pick a template and a size; you will see the layout and every step before anything runs."</p>
                <a class="button" href="/clusters/new">"Create your first cluster"</a>
            </section>
        }
        .into_any();
    }
    let cost_sum = cost.map(|cost| {
        format!(
            "; together {} per hour, {} so far",
            api_types::money(cost.per_hour),
            api_types::money(cost.so_far)
        )
    });
    let shown = clusters.len();
    // Expiring first (the database's order): what goes soonest is what its owner must
    // see.
    let rows = clusters
        .into_iter()
        .map(|cluster| {
            let href = format!("/clusters/{}", cluster.id);
            let lease = cluster.lease_expires_ms;
            let stopped = cluster
                .lease_deletes_at_ms
                .and_then(|_| cluster.lease_left(now_ms()));
            let id = cluster.id.clone();
            view! {
                <tr data-cluster=cluster.name.clone()>
                    <td><a href=href>{cluster.name.clone()}</a></td>
                    <td>
                        {cluster.template.clone()}
                        {cluster.catalog_behind_summary().map(|summary| view! {
                            " " <span class="chip chip-behind" title=summary data-testid="behind-chip">"behind"</span>
                        })}
                    </td>
                    <td class="num">{cluster.size}</td>
                    <td><StateBadge state=cluster.state/></td>
                    <td>{cluster.owner.clone().unwrap_or_else(|| "—".to_owned())}</td>
                    <td>
                        {match stopped {
                            Some(stopped) => view! { <span class="lease" data-testid="lease-stopped">{stopped}</span> }.into_any(),
                            None => view! { <span class="lease"><LeaseLeft expires_ms=lease/></span> }.into_any(),
                        }}
                        <ExtendButton id cluster=cluster.clone() extend/>
                    </td>
                    <td class="num" data-testid="cluster-cost">{cluster.cost.as_ref().map_or_else(
                        || "—".to_owned(),
                        |cost| api_types::money(cost.so_far),
                    )}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <p class="muted">{format!("{shown} of {total} cluster(s){}", cost_sum.unwrap_or_default())}</p>
        <DataTable testid="cluster-table" numeric=&["Nodes", "Cost so far"]
            columns=&["Name", "Template", "Nodes", "State", "Owner", "Lease", "Cost so far"]>
            {rows}
        </DataTable>
    }
    .into_any()
}

/// One click: the lease goes a template step further (up to its maximum).
#[component]
pub fn ExtendButton(
    id: String,
    cluster: ClusterView,
    extend: ServerAction<ExtendLease>,
) -> impl IntoView {
    let Some(end) = cluster.lease_next_end_ms else {
        return cluster
            .lease_expires_ms
            .map(|_| view! { <span class="muted" title="The template allows no longer lease">" (at maximum)"</span> })
            .into_any();
    };
    let added = end - cluster.lease_expires_ms.unwrap_or(end).max(now_ms());
    let label = format!("+{}", duration(added));
    let title = format!("Extend the lease to {}", timestamp(end));
    let input = {
        let id = id.clone();
        move || ExtendLease {
            csrf: csrf_token(),
            id: id.clone(),
            hours: None,
            until_ms: Some(end.to_string()),
        }
    };
    view! {
        <PostForm action=extend input class="inline">
            <CsrfField/>
            <input type="hidden" name="id" value=id/>
            <input type="hidden" name="until_ms" value=end.to_string()/>
            <button class="button button-small button-quiet" type="submit" title=title data-testid="extend-lease">{label}</button>
        </PostForm>
    }
    .into_any()
}
