//! `/clusters/{id}`: the cluster's nodes, services, config, lease, links and job
//! history, and its day-2 operations. An operation is chosen in the query string
//! (`?op=add-nodes&count=2`), previewed (layout diff and task DAG) and only then
//! confirmed, with or without JavaScript. The node table shows a page of nodes at a
//! time (`?node_page=3`), so a thousand-node cluster's page stays light.

use api_types::{ClusterState, JobView, NodeView, Operation, ServiceHealth, ServiceHealthView};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::components::Form;
use leptos_router::hooks::{use_params_map, use_query_map};

use super::list::ExtendButton;
use crate::components::errors::{action_error, FieldError, FormError, PageError};
use crate::components::form::{Field, PostForm};
use crate::components::plan::PlanView;
use crate::components::session::{csrf_token, CsrfField};
use crate::components::state::StateBadge;
use crate::components::table::DataTable;
use crate::components::time::{duration, now_ms, timestamp, LeaseLeft};
use crate::error::UiError;

use crate::server_fns::clusters::change::ChangeCluster;
use crate::server_fns::clusters::extend_lease::ExtendLease;
use crate::server_fns::clusters::healing::SetHealing;
use crate::server_fns::clusters::pin::PinCluster;
use crate::server_fns::clusters::plan_change::plan_change;
use crate::server_fns::clusters::show::load_cluster_page;
use crate::server_fns::clusters::{tab_title, ChangeForm, CHANGE_TABS, NODES_PER_PAGE};
use crate::server_fns::clusters::{ChangePreview, ClusterPage};

/// The newest approval request, as its requester reads it: what it waits for, or how it
/// was decided and why.
fn approval_banner(approval: api_types::ApprovalView) -> impl IntoView {
    use api_types::ApprovalState;
    let (class, text) = match approval.state {
        ApprovalState::Pending => (
            "banner banner-busy",
            format!(
                "Waiting for approval ({}): nothing is made until an approver decides, by {}.",
                approval.rule,
                timestamp(approval.expires_at_ms)
            ),
        ),
        ApprovalState::Approved => (
            "banner",
            format!(
                "Approved by {}.",
                approval.decided_by.clone().unwrap_or_default()
            ),
        ),
        ApprovalState::Denied => (
            "banner banner-bad",
            format!(
                "Denied by {}: {}",
                approval.decided_by.clone().unwrap_or_default(),
                approval.reason.clone().unwrap_or_default()
            ),
        ),
        ApprovalState::Expired => (
            "banner banner-bad",
            format!(
                "The request expired: {}.",
                approval.reason.clone().unwrap_or_default()
            ),
        ),
    };
    view! {
        <p class=class role="status" data-testid="approval-banner" data-state=approval.state.as_str()>{text}</p>
    }
}

#[component]
pub fn ClusterShowPage() -> impl IntoView {
    let params = use_params_map();
    let id = Memo::new(move |_| params.with(|params| params.get("id").unwrap_or_default()));
    let extend = ServerAction::<ExtendLease>::new();
    let pin = ServerAction::<PinCluster>::new();
    let heal = ServerAction::<SetHealing>::new();
    // Health and job states change behind the page: it reloads every few seconds in
    // the browser, unless an operation is being chosen (its inputs would be reset).
    let refreshed = RwSignal::new(0u32);
    // The chosen operation lives in the query string, and so does the node table's
    // page (a page number that is not one shows the first).
    let query = use_query_map();
    let node_page = Memo::new(move |_| {
        query.with(|query| {
            query
                .get("node_page")
                .and_then(|page| page.parse::<usize>().ok())
                .unwrap_or(1)
        })
    });
    let page = Resource::new(
        move || {
            (
                id.get(),
                node_page.get(),
                extend.version().get(),
                pin.version().get(),
                heal.version().get(),
                refreshed.get(),
            )
        },
        |(id, node_page, _, _, _, _)| load_cluster_page(id, node_page),
    );
    let form = Memo::new(move |_| {
        query.with(|query| {
            // An unknown word (or `create`, not a change) chooses no operation.
            let op = query
                .get("op")
                .and_then(|op| op.parse::<Operation>().ok())
                .filter(|op| *op != Operation::Create);
            op.map(|op| ChangeForm {
                op,
                services: crate::query::list(query, "services").unwrap_or_default(),
                count: query.get("count"),
                nodes: crate::query::list(query, "nodes").unwrap_or_default(),
                job_id: query.get("job_id"),
                config: query.get("config"),
                force: query.get("force"),
            })
        })
    });
    Effect::new(move |_| {
        let ticker = set_interval_with_handle(
            move || {
                if form.with_untracked(Option::is_none) {
                    refreshed.update(|count| *count += 1);
                }
            },
            std::time::Duration::from_secs(5),
        )
        .ok();
        on_cleanup(move || {
            if let Some(ticker) = ticker {
                ticker.clear();
            }
        });
    });
    // Made here, before anything suspends: resources made inside a suspended view
    // would not line up with the server's when hydrating.
    let preview = Resource::new(
        move || form.get().map(|form| (id.get(), form)),
        |request| async move {
            match request {
                Some((id, form)) => plan_change(id, form).await.map(Some),
                None => Ok(None),
            }
        },
    );
    let change = ServerAction::<ChangeCluster>::new();
    view! {
        // Sibling boundaries, not nested ones (a boundary inside another's resolved
        // view does not hydrate): the cluster, then its operations with the preview.
        <Transition fallback=|| view! { <p class="muted">"Loading cluster…"</p> }>
            {move || Suspend::new(async move {
                match page.await {
                    Err(error) => view! { <PageError error/> }.into_any(),
                    Ok(page) => view! { <ClusterDetails page extend pin heal/> }.into_any(),
                }
            })}
        </Transition>
        <Transition>
            {move || Suspend::new(async move {
                let Ok(page) = page.await else { return ().into_any() };
                let preview = preview.await;
                view! { <Operations page form preview change/> }.into_any()
            })}
        </Transition>
    }
}

/// The loaded cluster page: its state, nodes, jobs and changes (the view of an
/// [`api_types::ClusterView`] and more, hence not that name).
#[component]
fn ClusterDetails(
    page: ClusterPage,
    extend: ServerAction<ExtendLease>,
    pin: ServerAction<PinCluster>,
    heal: ServerAction<SetHealing>,
) -> impl IntoView {
    let cluster = page.cluster.clone();
    let running = page.running_job().cloned();
    let down = page.down.clone();
    let down_count = page.down_count;
    let extend_error = action_error(extend);
    let terminal = page
        .terminal
        .then(|| (cluster.id.clone(), cluster.name.clone()));
    let nodes = page
        .nodes
        .iter()
        .map(|node| node_row(node, terminal.as_ref()))
        .collect_view();
    let node_pages = page.node_pages();
    let node_pager = {
        let (current, node_count) = (page.node_page, page.node_count);
        let first = (current - 1) * NODES_PER_PAGE + 1;
        let last = (current * NODES_PER_PAGE).min(node_count);
        let previous = (current > 1).then(|| format!("?node_page={}", current - 1));
        let next = (current < node_pages).then(|| format!("?node_page={}", current + 1));
        move || {
            view! {
                <nav class="pager" aria-label="Node pages" data-testid="node-pager">
                    {previous.map(|href| view! { <a href=href rel="prev">"← previous"</a> })}
                    <span>{format!("nodes {first}–{last} of {node_count}, page {current} of {node_pages}")}</span>
                    {next.map(|href| view! { <a href=href rel="next">"next →"</a> })}
                </nav>
            }
        }
    };
    let links = page
        .links
        .iter()
        // The server sends web URLs only; checked again where they become `href`s.
        .filter(|link| domain::catalog::Link::is_web_url(&link.url))
        .map(|link| {
            view! { <li><a href=link.url.clone() target="_blank" rel="noopener">{link.label.clone()}</a> " " <code>{link.url.clone()}</code></li> }
        })
        .collect_view();
    let has_links = !page.links.is_empty();
    let services = page.services.join(", ");
    let jobs = page.jobs.clone();
    let cluster_id = cluster.id.clone();
    view! {
        <Title text=format!("{} · Corral", cluster.name)/>
        <nav class="crumbs" aria-label="Breadcrumb"><a href="/clusters">"Clusters"</a> " / " {cluster.name.clone()}</nav>
        <div class="page-head">
            <h1>{cluster.name.clone()}</h1>
            <StateBadge state=cluster.state/>
        </div>
        // A cluster its lease stopped is down on purpose: its banner says so instead.
        {(!down.is_empty() && cluster.lease_deletes_at_ms.is_none()).then(|| view! {
            <div class="banner banner-bad" role="alert" data-testid="health-banner">
                <strong>"Down: "</strong>
                <ul class="plain">{down.clone().into_iter().map(|(node, health)| {
                    let restart = format!(
                        "?op=restart&{}={}",
                        crate::query::item("services", 0),
                        crate::query::encode_value(&health.service)
                    );
                    view! {
                        <li>
                            {health.service.clone()} " on node " {node} ": "
                            {health.detail.clone().unwrap_or_default()} " "
                            <a href=restart>"restart it"</a>
                        </li>
                    }
                }).collect_view()}</ul>
                {(down_count > down.len()).then(|| view! {
                    <p>{format!("and {} more", down_count - down.len())}</p>
                })}
            </div>
        })}
        {page.heal_note.clone().filter(|_| cluster.state != ClusterState::Deleted).map(|note| view! {
            <p class="banner" role="status" data-testid="heal-note">"Healing: " {note.text}</p>
        })}
        {cluster.catalog_behind_summary().filter(|_| cluster.state != ClusterState::Deleted).map(|summary| view! {
            <p class="banner" role="status" data-testid="catalog-behind">
                {summary} ". " <a href="?op=upgrade">"Preview the upgrade"</a>
            </p>
        })}
        {cluster.lease_deletes_at_ms.filter(|_| cluster.state.is_live()).map(|deletes_at| view! {
            <p class="banner banner-busy" role="status" data-testid="lease-stopped-banner">
                "Stopped: lease expired; deleted at " {timestamp(deletes_at)}
                " unless extended. Extending the lease starts it again: its machines where they were stopped, then its services."
            </p>
        })}
        {lease_notice(&cluster, &page.jobs).map(|notice| view! {
            <p class="banner banner-busy" role="status" data-testid="lease-notice">{notice}</p>
        })}
        {page.approval.clone().map(approval_banner)}
        {(cluster.state == ClusterState::Deleted).then(|| view! {
            <p class="banner" role="status" data-testid="deleted-banner">
                "This cluster was deleted " {timestamp(cluster.updated_at_ms)}
                ". Its nodes are gone; what it was and every job it ran stay here to read."
            </p>
        })}
        {running.map(|job| {
            let href = format!("/clusters/{}/jobs/{}", cluster.id, job.id);
            view! {
                <p class="banner banner-busy" role="status">
                    "A " {job.operation.label()} " job is " {job.state.as_str()} ": "
                    <a href=href>"watch it live"</a>
                </p>
            }
        })}
        <div class="grid">
            <section class="card">
                <h2>"Overview"</h2>
                <table class="kv"><tbody>
                    <tr><th scope="row">"Template"</th><td>{cluster.template.clone()}</td></tr>
                    <tr><th scope="row">"Nodes"</th><td>{cluster.size}</td></tr>
                    <tr><th scope="row">"Services"</th><td>{services}</td></tr>
                    <tr><th scope="row">"Owner"</th><td>{cluster.owner.clone().unwrap_or_else(|| "—".to_owned())}</td></tr>
                    <tr><th scope="row">"Created"</th><td>{timestamp(cluster.created_at_ms)}</td></tr>
                    <tr><th scope="row">"Cost"</th><td data-testid="cluster-cost">{match &cluster.cost {
                        Some(cost) => format!(
                            "{} so far ({} this month); {} per hour now",
                            api_types::money(cost.so_far),
                            api_types::money(cost.this_month),
                            api_types::money(cost.per_hour)
                        ),
                        None => "no prices set".to_owned(),
                    }}</td></tr>
                    <tr><th scope="row">"Lease"</th><td>
                        <LeaseLeft expires_ms=cluster.lease_expires_ms/>
                        {(cluster.state != ClusterState::Deleted).then(|| view! {
                            <ExtendButton id=cluster_id.clone() cluster=cluster.clone() extend/>
                        })}
                        {cluster.lease_latest_end_ms.map(|latest| view! {
                            <div class="hint">"The template's maximum: " {timestamp(latest)}</div>
                        })}
                        <FieldError error=extend_error field="hours"/>
                        <FormError error=extend_error/>
                    </td></tr>
                    <tr><th scope="row">"Pinned"</th><td>
                        <PinSwitch id=cluster.id.clone() pinned=page.pinned
                            live=cluster.state != ClusterState::Deleted pin/>
                    </td></tr>
                    <tr><th scope="row">"Healing"</th><td>
                        <HealingSwitch id=cluster.id.clone() healing=page.healing.clone()
                            live=cluster.state != ClusterState::Deleted heal/>
                    </td></tr>
                </tbody></table>
            </section>
            <section class="card">
                <h2>"Links"</h2>
                {if has_links {
                    view! { <ul class="links" data-testid="service-links">{links}</ul> }.into_any()
                } else {
                    view! { <p class="muted">"The template exposes no links."</p> }.into_any()
                }}
                <h2>"Config"</h2>
                <pre class="config">{page.config.clone()}</pre>
            </section>
        </div>
        <section class="card">
            <h2>"Nodes"</h2>
            {if page.terminal {
                view! {
                    <DataTable testid="node-table" numeric=&["#"]
                        columns=&["#", "Hostname", "Address", "Hardware", "Image", "Services", "State", "Machine", "Terminal"]>
                        {nodes}
                    </DataTable>
                }.into_any()
            } else {
                view! {
                    <DataTable testid="node-table" numeric=&["#"]
                        columns=&["#", "Hostname", "Address", "Hardware", "Image", "Services", "State", "Machine"]>
                        {nodes}
                    </DataTable>
                }.into_any()
            }}
            {(node_pages > 1).then(node_pager)}
        </section>
        <section class="card">
            <h2>"Jobs"</h2>
            <JobHistory cluster_id=cluster.id.clone() jobs/>
        </section>
    }
}

/// The cluster's pin: its state, and for a cluster that may still change, one
/// button that flips it (a plain form, so it works without JavaScript).
#[component]
fn PinSwitch(id: String, pinned: bool, live: bool, pin: ServerAction<PinCluster>) -> impl IntoView {
    let error = action_error(pin);
    let (state, label, title) = if pinned {
        (
            "pinned",
            "Unpin",
            "Let rollouts move this cluster to the catalog's current revision",
        )
    } else {
        (
            "not pinned",
            "Pin",
            "Keep this cluster on its catalog revision",
        )
    };
    let next = (!pinned).to_string();
    let form = live.then(|| {
        let input = {
            let (id, next) = (id.clone(), next.clone());
            move || PinCluster {
                csrf: csrf_token(),
                id: id.clone(),
                pinned: next.clone(),
            }
        };
        view! {
            <PostForm action=pin input class="inline">
                <CsrfField/>
                <input type="hidden" name="id" value=id.clone()/>
                <input type="hidden" name="pinned" value=next.clone()/>
                <button class="button button-small button-quiet" type="submit" title=title
                    aria-pressed=pinned.to_string() data-testid="pin-switch">{label}</button>
            </PostForm>
        }
    });
    view! {
        <span data-testid="pin-state" data-pinned=pinned.to_string()>{state}</span>
        " " {form}
        <div class="hint">"A pinned cluster keeps its catalog revision; rollouts skip it."</div>
        <FormError error/>
    }
}

/// Whether the cluster heals and who decided, and for a cluster that may still change,
/// the other choices as buttons (each a plain form, so it works without JavaScript).
#[component]
fn HealingSwitch(
    id: String,
    healing: api_types::HealingView,
    live: bool,
    heal: ServerAction<SetHealing>,
) -> impl IntoView {
    let error = action_error(heal);
    let state = match (healing.enabled, healing.owner_choice) {
        (true, Some(_)) => "on (the owner's choice)",
        (false, Some(_)) => "off (the owner's choice)",
        (true, None) => "on (the template's policy)",
        (false, None) => "off (the template's policy)",
    };
    let choices: Vec<(&str, &str, &str)> = [
        (
            "on",
            "Turn on",
            "Replace this cluster's dead nodes by themselves",
        ),
        ("off", "Turn off", "Leave dead nodes for someone to replace"),
        (
            "template",
            "Use the template's",
            "Let the template's healing policy decide",
        ),
    ]
    .into_iter()
    .filter(|(choice, _, _)| match *choice {
        "on" => healing.owner_choice != Some(true),
        "off" => healing.owner_choice != Some(false),
        _ => healing.owner_choice.is_some(),
    })
    .collect();
    let forms = live.then(|| {
        choices
            .into_iter()
            .map(|(choice, label, title)| {
                let input = {
                    let form_id = id.clone();
                    move || SetHealing {
                        csrf: csrf_token(),
                        id: form_id.clone(),
                        choice: choice.to_owned(),
                    }
                };
                let hidden_id = id.clone();
                view! {
                    <PostForm action=heal input class="inline">
                        <CsrfField/>
                        <input type="hidden" name="id" value=hidden_id/>
                        <input type="hidden" name="choice" value=choice/>
                        <button class="button button-small button-quiet" type="submit" title=title
                            data-testid="healing-switch" data-choice=choice>{label}</button>
                    </PostForm>
                    " "
                }
            })
            .collect_view()
    });
    view! {
        <span data-testid="healing-state" data-enabled=healing.enabled.to_string()>{state}</span>
        " " {forms}
        <div class="hint">"A healing cluster's dead nodes are replaced by themselves."</div>
        <FormError error/>
    }
}

/// What a node's provider says of its machine, as a chip (the word as well as the
/// colour), with since when on hover; a dash before the monitor first asked.
fn machine_cell(node: &NodeView) -> impl IntoView {
    use api_types::NodePresence;
    node.machine.map_or_else(
        || view! { <span class="muted">"—"</span> }.into_any(),
        |machine| {
            let class = match machine.presence {
                NodePresence::Present => "chip chip-up",
                NodePresence::Gone => "chip chip-down",
                NodePresence::Unknown => "chip",
            };
            let title = format!("since {}", timestamp(machine.since_ms));
            view! {
                <span class=class title=title data-machine=machine.presence.as_str()>
                    {machine.presence.as_str()}
                </span>
            }
            .into_any()
        },
    )
}

/// One row of the node table: the node, its services with their health, its state,
/// and with `terminal` (the cluster's id and name, when the viewer may open one) a
/// Terminal button for a node that has been made.
fn node_row(node: &NodeView, terminal: Option<&(String, String)>) -> impl IntoView {
    let terminal_cell = terminal.map(|(cluster_id, cluster_name)| {
        let button = node.address.is_some().then(|| {
            let label = format!("{cluster_name}/{}", node.number);
            view! {
                <button type="button" class="button button-quiet terminal-open" data-testid="terminal-open"
                    data-terminal-cluster=cluster_id.clone()
                    data-terminal-node=node.number
                    data-terminal-label=label.clone()
                    aria-label=format!("Open a terminal on {label}")
                    on:click=open_terminal>
                    "Terminal"
                </button>
            }
        });
        view! { <td>{button}</td> }
    });
    let services = node
        .services
        .iter()
        .map(|service| {
            let health = node.health.iter().find(|health| &health.service == service);
            let (class, title) = match health {
                Some(health) => (
                    match health.health {
                        ServiceHealth::Up => "chip chip-up",
                        ServiceHealth::Down => "chip chip-down",
                        ServiceHealth::Unknown => "chip",
                    },
                    health_title(health),
                ),
                None => ("chip", String::new()),
            };
            // The word as well as the colour: health must not be colour alone.
            let mark = match health.map(|health| health.health) {
                Some(ServiceHealth::Up) => " ✓",
                Some(ServiceHealth::Down) => " ✗ down",
                _ => "",
            };
            view! { <span class=class title=title data-health=health.map(|h| h.health.as_str())>{service.clone()}{mark}</span> " " }
        })
        .collect_view();
    view! {
        <tr>
            <td class="num">{node.number}</td>
            <td>{node.hostname.clone().unwrap_or_else(|| "—".to_owned())}</td>
            <td><code>{node.address.clone().unwrap_or_else(|| "not yet".to_owned())}</code></td>
            <td>{node.hardwaretype.clone()}</td>
            <td>{node.imagetype.clone()}</td>
            <td>{services}</td>
            <td><StateBadge state=node.state/></td>
            <td>{machine_cell(node)}</td>
            {terminal_cell}
        </tr>
    }
}

/// Why the cluster is going or gone when its lease ended: Corral deleted it, and
/// forced the delete when the plain one failed (the owner learns it here).
fn lease_notice(cluster: &api_types::ClusterView, jobs: &[JobView]) -> Option<String> {
    let ended = cluster.lease_expires_ms.filter(|at| *at <= now_ms())?;
    if !matches!(
        cluster.state,
        ClusterState::Deleting | ClusterState::Deleted | ClusterState::Failed
    ) {
        return None;
    }
    let mut notice = format!(
        "The lease of this cluster ended {}, so Corral deletes it.",
        timestamp(ended)
    );
    // Jobs are newest first: a forced delete right after a failed plain one.
    let deletes: Vec<&JobView> = jobs
        .iter()
        .filter(|job| job.operation == Operation::Delete && job.created_at_ms >= ended)
        .collect();
    if let [forced, plain, ..] = deletes.as_slice() {
        if forced.forced && !plain.forced && plain.state == api_types::JobState::Failed {
            notice.push_str(&format!(
                " The delete failed ({}), so it was forced: steps that failed were passed \
                 over (marked skipped) and the nodes deleted.",
                plain.error.as_deref().unwrap_or("no error recorded")
            ));
        }
    }
    Some(notice)
}

/// What a health chip says on hover: the health, when it was checked, and why.
fn health_title(health: &ServiceHealthView) -> String {
    let checked = health
        .checked_at_ms
        .map_or("not checked yet".to_owned(), |at| {
            format!("checked {}", timestamp(at))
        });
    match &health.detail {
        Some(detail) => format!("{}, {checked}: {detail}", health.health),
        None => format!("{}, {checked}", health.health),
    }
}

#[component]
fn JobHistory(cluster_id: String, jobs: Vec<JobView>) -> impl IntoView {
    let rows = jobs
        .into_iter()
        .map(|job| {
            let href = format!("/clusters/{cluster_id}/jobs/{}", job.id);
            let took = match (job.started_at_ms, job.finished_at_ms) {
                (Some(start), Some(end)) => duration(end - start),
                (Some(start), None) => format!("{} so far", duration(now_ms() - start)),
                _ => "—".to_owned(),
            };
            view! {
                <tr>
                    <td><a href=href>{job.operation.label()}</a></td>
                    <td><StateBadge state=job.state/></td>
                    <td class="num">{format!("{}/{}", job.tasks_succeeded, job.tasks_total)}</td>
                    <td>{timestamp(job.created_at_ms)}</td>
                    <td>{took}</td>
                    <td class="error-text">{job.error.clone().unwrap_or_default()}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <DataTable testid="job-table" numeric=&["Tasks"]
            columns=&["Operation", "State", "Tasks", "Started", "Took", "Error"]>
            {rows}
        </DataTable>
    }
}

/// The day-2 operations: choose one (a GET form), see its preview, confirm it.
#[component]
fn Operations(
    page: ClusterPage,
    form: Memo<Option<ChangeForm>>,
    preview: Result<Option<ChangePreview>, UiError>,
    change: ServerAction<ChangeCluster>,
) -> impl IntoView {
    if page.cluster.state == ClusterState::Deleted {
        // Every branch renders an element (empty views side by side do not hydrate).
        return view! { <p class="muted">"A deleted cluster cannot change."</p> }.into_any();
    }
    let change_error = action_error(change);
    let busy = page.running_job().is_some();
    let current = page.services.clone();
    let addable = page.addable_services.clone();
    let node_numbers: Vec<String> = page.node_numbers.iter().map(i64::to_string).collect();
    let tabs = CHANGE_TABS
        .iter()
        .map(|&op| {
            let href = format!("?op={op}");
            let selected = move || form.with(|form| form.as_ref().is_some_and(|form| form.op == op));
            view! { <a href=href class="tab" class:tab-selected=selected aria-current=move || selected().then_some("true")>{tab_title(op)}</a> }
        })
        .collect_view();
    let cluster_id = page.cluster.id.clone();
    view! {
        <section class="card" aria-labelledby="ops" data-testid="operations">
            <h2 id="ops">"Change this cluster"</h2>
            {busy.then(|| view! { <p class="hint">"A job is running; changes can be previewed now and run once it ends."</p> })}
            <nav class="tabs" aria-label="Operations">{tabs}</nav>
            {move || form.get().map(|chosen| {
                let current = current.clone();
                let addable = addable.clone();
                let nodes = node_numbers.clone();
                view! { <OperationInputs chosen current addable nodes/> }
            })}
            {match preview {
                Ok(None) => ().into_any(),
                Ok(Some(ChangePreview::Plan(plan))) => view! { <PlanView preview=*plan/> }.into_any(),
                Ok(Some(ChangePreview::Delete)) => view! {
                    <p class="banner banner-bad" role="status">
                        "Deleting stops every service and removes every node of this cluster. This cannot be undone."
                    </p>
                }.into_any(),
                Err(error) => view! {
                    <div class="unsatisfiable" role="alert">
                        <p><strong>"This change cannot be made: "</strong>{error.to_string()}</p>
                    </div>
                }.into_any(),
            }}
            {move || form.get().map(|chosen| {
                let cluster_id = cluster_id.clone();
                let danger = chosen.op == Operation::Delete;
                // Indexed names: the server function reads them as a list.
                let services = chosen.services.iter().enumerate().map(|(index, service)| view! {
                    <input type="hidden" name=crate::query::item("form[services]", index) value=service.clone()/>
                }).collect_view();
                let nodes = chosen.nodes.iter().enumerate().map(|(index, node)| view! {
                    <input type="hidden" name=crate::query::item("form[nodes]", index) value=node.clone()/>
                }).collect_view();
                view! {
                    <ActionForm action=change attr:class="confirm">
                        <CsrfField/>
                        <input type="hidden" name="id" value=cluster_id/>
                        <input type="hidden" name="form[op]" value=chosen.op.as_str()/>
                        {services}
                        {nodes}
                        {chosen.count.clone().map(|count| view! { <input type="hidden" name="form[count]" value=count/> })}
                        {chosen.job_id.clone().map(|job| view! { <input type="hidden" name="form[job_id]" value=job/> })}
                        {chosen.config.clone().map(|config| view! { <input type="hidden" name="form[config]" value=config/> })}
                        {(chosen.op == Operation::ReplaceNodes && chosen.force.is_some()).then(|| view! {
                            <input type="hidden" name="form[force]" value="on"/>
                        })}
                        {danger.then(|| view! {
                            <label class="check">
                                <input type="checkbox" name="form[force]" value="on" checked=chosen.force.is_some() data-testid="force-delete"/>
                                " Delete even if a service cannot be stopped: a failed stop or remove step is reported and passed over, and the nodes are deleted anyway"
                            </label>
                        })}
                        <FormError error=change_error/>
                        <button class="button" class:button-danger=danger type="submit" data-testid="confirm-change"
                            disabled=move || change.pending().get()>
                            {if danger { "Delete cluster" } else { "Run this change" }}
                        </button>
                    </ActionForm>
                }
            })}
        </section>
    }
    .into_any()
}

/// The inputs of the chosen operation, as a GET form that re-previews.
#[component]
fn OperationInputs(
    chosen: ChangeForm,
    current: Vec<String>,
    addable: Vec<String>,
    /// The cluster's node numbers.
    nodes: Vec<String>,
) -> impl IntoView {
    let boxes = |field: &'static str, choices: &[String], picked: &[String]| {
        choices
            .iter()
            .enumerate()
            .map(|(index, choice)| {
                let checked = picked.contains(choice);
                view! {
                    <label class="check">
                        <input type="checkbox" name=crate::query::item(field, index) value=choice.clone() checked=checked/>
                        " " {choice.clone()}
                    </label>
                }
            })
            .collect_view()
    };
    // The check boxes of `field` (one per choice) under `legend`.
    let picks = |legend: &'static str,
                 field: &'static str,
                 choices: &[String],
                 picked: &[String]| {
        view! { <fieldset class="field"><legend>{legend}</legend>{boxes(field, choices, picked)}</fieldset> }
    };
    let count = chosen.count.clone().unwrap_or_else(|| "1".to_owned());
    let count_field = |label: &'static str| {
        view! {
            <Field label=label id="count">
                <input id="count" name="count" type="number" min="1" value=count.clone()/>
            </Field>
        }
    };
    let inputs = match chosen.op {
        Operation::AddServices if addable.is_empty() => view! {
            <p class="muted">"Every service the template allows is already on this cluster."</p>
        }
        .into_any(),
        Operation::AddServices => {
            picks("Services to add", "services", &addable, &chosen.services).into_any()
        }
        Operation::RemoveServices => {
            let legend = "Services to stop and remove on every node";
            picks(legend, "services", &current, &chosen.services).into_any()
        }
        Operation::AddNodes => count_field("Nodes to add").into_any(),
        Operation::RemoveNodes => view! {
            {count_field("Nodes to remove (Corral picks which)")}
            {picks("Or pick the nodes yourself", "nodes", &nodes, &chosen.nodes)}
            <p class="hint">"Services that stay are reconfigured first, then the leaving nodes' services stop and the nodes are deleted."</p>
        }
        .into_any(),
        Operation::Start | Operation::Stop | Operation::Restart => {
            let legend = "Services (none picked: all)";
            picks(legend, "services", &current, &chosen.services).into_any()
        }
        Operation::Reconfigure => view! {
            <Field label="Config to merge (JSON object); services are reconfigured and restarted" id="config">
                <textarea id="config" name="config" rows="5">{chosen.config.clone().unwrap_or_default()}</textarea>
            </Field>
        }
        .into_any(),
        Operation::Upgrade => view! {
            {count_field("Nodes of a service upgraded at once")}
            <p class="hint">"Moves the cluster to the catalog's current definitions. Only what changed runs, one batch after another; each batch's services must answer their health checks before the next starts."</p>
        }
        .into_any(),
        Operation::ReplaceNodes => view! {
            {picks("Nodes to replace", "nodes", &nodes, &chosen.nodes)}
            <label class="check">
                <input type="checkbox" name="force" value="on" checked=chosen.force.is_some() data-testid="accept-data-loss"/>
                " Replace nodes whose services keep data (the data on them is lost)"
            </label>
            <p class="hint">"Each node gets a new node of the same hardware and image with the same services; the cluster is reconfigured around it, then the old node's services stop and it is deleted."</p>
        }
        .into_any(),
        Operation::Rollback => view! {
            <input type="hidden" name="job_id" value=chosen.job_id.clone().unwrap_or_default()/>
            <p>"Undo what the failed job did, as planned below."</p>
        }
        .into_any(),
        Operation::SyncKeys => view! {
            <p>"Every node gets the current users' SSH keys again, as planned below; no service is touched."</p>
        }
        .into_any(),
        // A create never gets here (the form's memo drops it).
        Operation::Delete | Operation::Create => view! { <p>"Every node and service of this cluster goes, as shown below."</p> }.into_any(),
    };
    // Every branch renders elements: empty views side by side do not hydrate.
    let action = if matches!(chosen.op, Operation::Delete | Operation::Rollback) {
        view! { <p class="hint">"Nothing to choose: confirm below."</p> }.into_any()
    } else {
        view! { <button class="button button-quiet" type="submit">"Preview"</button> }.into_any()
    };
    view! {
        <Form method="GET" action="" attr:class="stack op-inputs">
            <input type="hidden" name="op" value=chosen.op.as_str()/>
            {inputs}
            {action}
        </Form>
    }
}

/// A Terminal button's click: loads the terminal (browser only; a page without
/// JavaScript has no terminal, the button then does nothing).
fn open_terminal(event: leptos::ev::MouseEvent) {
    #[cfg(feature = "hydrate")]
    crate::terminal::open(&event);
    #[cfg(not(feature = "hydrate"))]
    let _ = event;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn cluster(state: &str, lease_expires_ms: i64) -> api_types::ClusterView {
        serde_json::from_value(json!({
            "id": "c1", "name": "shop", "state": state, "template": "web-stack",
            "template_version": 1, "provider": "local", "owner_id": null, "size": 0,
            "layout": {}, "config": {}, "lease_expires_ms": lease_expires_ms,
            "created_at_ms": 0, "updated_at_ms": 0
        }))
        .unwrap()
    }

    fn delete(forced: bool, state: &str, at: i64) -> JobView {
        serde_json::from_value(json!({
            "id": format!("j{at}"), "cluster_id": "c1", "operation": "delete", "state": state,
            "tasks_total": 4, "tasks_succeeded": 2, "created_at_ms": at,
            "started_at_ms": at, "finished_at_ms": at + 1,
            "error": (state == "failed").then_some("stop kv on node 1000 failed"),
            "forced": forced, "can_roll_back": false
        }))
        .unwrap()
    }

    #[test]
    fn an_expired_lease_says_the_cluster_goes_and_why_its_delete_was_forced() {
        let ended = 1_000;
        assert_eq!(lease_notice(&cluster("active", ended), &[]), None);
        assert_eq!(
            lease_notice(&cluster("deleting", now_ms() + 60_000), &[]),
            None
        );
        let plain = lease_notice(
            &cluster("deleting", ended),
            &[delete(false, "running", 2_000)],
        )
        .unwrap();
        assert!(plain.ends_with("so Corral deletes it."), "{plain}");
        let jobs = [
            delete(true, "succeeded", 3_000),
            delete(false, "failed", 2_000),
        ];
        let forced = lease_notice(&cluster("deleted", ended), &jobs).unwrap();
        assert!(
            forced.contains("The delete failed (stop kv on node 1000 failed), so it was forced"),
            "{forced}"
        );
    }
}
