//! `/clusters`: the tenant's clusters with state, owner and lease, filterable by the
//! query string (`?state=&template=&q=&mine=1`), so filters work without
//! JavaScript and can be bookmarked.

use api_types::{ClusterState, ClusterView};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::Form;
use leptos_router::hooks::use_query_map;

use crate::components::errors::{action_error, FormError, PageError};
use crate::components::form::PostForm;
use crate::components::session::{csrf_token, use_me, CsrfField};
use crate::components::state::StateBadge;
use crate::components::table::DataTable;
use crate::components::time::{duration, now_ms, timestamp, LeaseLeft};
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
    fn keeps(&self, cluster: &ClusterView, me: &str) -> bool {
        self.state.is_none_or(|state| cluster.state == state)
            && (self.template.is_empty() || cluster.template == self.template)
            && (self.text.is_empty()
                || cluster
                    .name
                    .to_lowercase()
                    .contains(&self.text.to_lowercase()))
            && (!self.mine || cluster.owner.as_deref() == Some(me))
    }
}

#[component]
pub fn ClusterListPage() -> impl IntoView {
    let extend = ServerAction::<ExtendLease>::new();
    let clusters = Resource::new(move || extend.version().get(), |_| list_clusters());
    let query = use_query_map();
    let filter = Memo::new(move |_| {
        query.with(|query| Filter {
            state: query.get("state").and_then(|state| state.parse().ok()),
            template: query.get("template").unwrap_or_default(),
            text: query.get("q").unwrap_or_default(),
            mine: query.get("mine").is_some_and(|mine| mine == "1"),
        })
    });
    let me = use_me();
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
                let me = me.await;
                let me = me.ok().flatten().map(|me| me.username).unwrap_or_default();
                match clusters.await {
                    Err(error) => view! { <PageError error/> }.into_any(),
                    Ok(all) => {
                        let templates = distinct(all.iter().map(|cluster| cluster.template.clone()));
                        let states = distinct(all.iter().map(|cluster| cluster.state));
                        let total = all.len();
                        let shown: Vec<ClusterView> = filter.with(|filter| {
                            all.into_iter().filter(|cluster| filter.keeps(cluster, &me)).collect()
                        });
                        view! {
                            <FilterForm filter=filter.get_untracked() templates states/>
                            <ClusterTable clusters=shown total extend/>
                        }
                        .into_any()
                    }
                }
            })}
        </Suspense>
    }
}

fn distinct<T: Ord>(values: impl Iterator<Item = T>) -> Vec<T> {
    let mut values: Vec<T> = values.collect();
    values.sort();
    values.dedup();
    values
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
    total: usize,
    extend: ServerAction<ExtendLease>,
) -> impl IntoView {
    if total == 0 {
        return view! {
            <section class="card empty">
                <h2>"No clusters yet"</h2>
                <p>"Pick a template and a size; you will see the layout and every step before anything runs."</p>
                <a class="button" href="/clusters/new">"Create your first cluster"</a>
            </section>
        }
        .into_any();
    }
    let costs: Vec<&api_types::ClusterCost> = clusters
        .iter()
        .filter_map(|cluster| cluster.cost.as_ref())
        .collect();
    let cost_sum = (!costs.is_empty()).then(|| {
        let per_hour: f64 = costs.iter().map(|cost| cost.per_hour).sum();
        let so_far: f64 = costs.iter().map(|cost| cost.so_far).sum();
        format!(
            "; together {} per hour, {} so far",
            api_types::money(per_hour),
            api_types::money(so_far)
        )
    });
    let shown = clusters.len();
    // Expiring first: what goes soonest is what its owner must see.
    let mut clusters = clusters;
    api_types::sort_expiring_first(&mut clusters);
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
