//! `corral cluster ...` and `corral job ...`: the cluster operations of the API from
//! the command line, as tables or `--json`.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use api_types::{
    ClusterChangeRequest, ClusterCreateRequest, ClusterList, ClusterView, EventKind, JobState,
    JobView, LeaseExtension, NodeView, Operation, OutputStream, Page, PlanView, ServiceHealth,
    SubmittedJob, TaskView, UpgradePlanView,
};
use clap::{Args, Subcommand};
use serde::Serialize;
use serde_json::{Map, Value};

use super::catalog::ClusterShape;
use super::remote::{print_json, print_table, Client, OutputArgs};

#[derive(Debug, Args)]
pub struct ClusterArgs {
    #[command(subcommand)]
    pub command: ClusterCommand,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// Your tenant's clusters, expiring first (every page of the list).
    List,
    /// One cluster (by id or name) with its nodes, jobs and links.
    Show { id: String },
    /// Create a cluster (or only show the plan with --dry-run).
    Create(CreateArgs),
    /// Show what a change would do, without doing it.
    Plan(ChangeArgs),
    /// Submit a change: add or remove services or nodes, reconfigure, start, stop,
    /// restart, roll back.
    Change(ChangeArgs),
    /// Let the cluster live this many more hours from now; a cluster its lease stopped
    /// (within the template's grace) starts again.
    Lease {
        id: String,
        #[arg(long)]
        hours: u64,
    },
    /// Turn healing (replacing dead nodes by itself) on or off for the cluster, or back
    /// to what its template says.
    Heal {
        id: String,
        #[arg(value_enum)]
        choice: HealChoice,
    },
    /// Pin the cluster to its catalog revision: a rollout of its template's new
    /// revision lists it and passes it over.
    Pin { id: String },
    /// Unpin the cluster: the next rollout of its template upgrades it.
    Unpin { id: String },
    /// Open an SSH session to a node through the server (a shell, or `-- COMMAND`),
    /// or print an OpenSSH config for the cluster's nodes (`--config`).
    Ssh(super::node_ssh::SshArgs),
    /// Delete the cluster and its nodes.
    Delete {
        id: String,
        /// Go on when a service's stop or remove step fails, and delete the nodes anyway.
        #[arg(long)]
        force: bool,
    },
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    pub name: String,
    #[command(flatten)]
    pub cluster: ClusterShape,
    /// Config as a JSON object, merged over the template's.
    #[arg(long)]
    pub config: Option<String>,
    /// A template parameter's value, `NAME=VALUE` (repeatable); the server reads the
    /// value as the parameter's type and checks it.
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
    #[arg(long)]
    pub dry_run: bool,
    /// Wait for the create job to finish, printing its progress.
    #[arg(long)]
    pub wait: bool,
}

/// `--param NAME=VALUE` as a name and its value (text, typed by the server).
fn parse_param(raw: &str) -> Result<(String, String), String> {
    match raw.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_owned(), value.to_owned()))
        }
        _ => Err(format!("{raw:?}: write NAME=VALUE")),
    }
}

/// `corral cluster heal`'s choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HealChoice {
    On,
    Off,
    /// Whatever the cluster's template says.
    Template,
}

#[derive(Debug, Args)]
pub struct ChangeArgs {
    pub id: String,
    /// What to do (`create` and `delete` have commands of their own).
    #[arg(value_enum)]
    pub operation: Operation,
    #[arg(long, value_delimiter = ',')]
    pub services: Option<Vec<String>>,
    /// Nodes to add (add-nodes) or to remove (remove-nodes: Corral picks which).
    #[arg(long)]
    pub count: Option<u32>,
    /// The nodes to remove or replace, by number (remove-nodes, replace-nodes).
    #[arg(long, value_delimiter = ',')]
    pub nodes: Option<Vec<u32>>,
    /// Replace nodes even though their stateful services' data is lost (replace-nodes).
    #[arg(long)]
    pub force: bool,
    /// Restart services around their configure (reconfigure).
    #[arg(long)]
    pub restart: bool,
    /// The job to roll back (rollback).
    #[arg(long)]
    pub job: Option<String>,
    /// At most this many nodes of a service upgraded at once (upgrade; default 1).
    #[arg(long)]
    pub max_unavailable: Option<u32>,
}

impl ChangeArgs {
    /// The API's change request for the arguments; a missing argument is named.
    fn request(&self) -> anyhow::Result<ClusterChangeRequest> {
        let services = self.services.clone();
        Ok(match self.operation {
            Operation::AddServices => ClusterChangeRequest::AddServices {
                services: services.context("add-services needs --services")?,
            },
            Operation::RemoveServices => ClusterChangeRequest::RemoveServices {
                services: services.context("remove-services needs --services")?,
            },
            Operation::AddNodes => ClusterChangeRequest::AddNodes {
                count: self.count.context("add-nodes needs --count")?,
            },
            Operation::RemoveNodes => {
                if self.count.is_none() && self.nodes.is_none() {
                    bail!("remove-nodes needs --count N (Corral picks the nodes) or --nodes 1003,1004");
                }
                ClusterChangeRequest::RemoveNodes {
                    count: self.count,
                    nodes: self.nodes.clone(),
                }
            }
            Operation::Reconfigure => ClusterChangeRequest::Reconfigure {
                restart: self.restart,
                config: None,
            },
            Operation::Start => ClusterChangeRequest::Start { services },
            Operation::Stop => ClusterChangeRequest::Stop { services },
            Operation::Restart => ClusterChangeRequest::Restart { services },
            Operation::Rollback => ClusterChangeRequest::Rollback {
                job_id: self.job.clone().context("rollback needs --job")?,
            },
            Operation::Upgrade => ClusterChangeRequest::Upgrade {
                max_unavailable: self.max_unavailable,
            },
            Operation::ReplaceNodes => ClusterChangeRequest::ReplaceNodes {
                nodes: self
                    .nodes
                    .clone()
                    .context("replace-nodes needs --nodes 1001,1002")?,
                force: self.force,
            },
            Operation::SyncKeys => ClusterChangeRequest::SyncKeys {},
            // clap does not offer them (`value(skip)`); named for the match only.
            Operation::Create | Operation::Delete => {
                bail!(
                    "{} is not a change: see `corral cluster {}`",
                    self.operation,
                    self.operation
                )
            }
        })
    }
}

#[derive(Debug, Args)]
pub struct JobArgs {
    #[command(subcommand)]
    pub command: JobCommand,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Subcommand)]
pub enum JobCommand {
    /// A job's state and tasks.
    Show {
        id: String,
    },
    /// Follow a job until it finishes, printing task changes and the failure if any.
    Watch {
        id: String,
    },
    Cancel {
        id: String,
    },
    /// Run a failed or cancelled job again from where it stopped.
    Retry {
        id: String,
    },
}

const CLUSTER_COLUMNS: &[(&str, &str)] = &[
    ("id", "id"),
    ("name", "name"),
    ("state", "state"),
    ("template", "template"),
    ("size", "size"),
];

/// The lease as `corral cluster show` says it: when it ends, or that its end stopped
/// the cluster and when it is deleted unless extended; `None` without a lease.
fn lease_line(cluster: &ClusterView) -> Option<String> {
    let at = |ms: i64| {
        chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms)
            .map(|time| time.format("%Y-%m-%d %H:%M:%S UTC").to_string())
            .unwrap_or_else(|| ms.to_string())
    };
    let now = chrono::Utc::now().timestamp_millis();
    if let Some(deletes_at) = cluster.lease_deletes_at_ms {
        return Some(format!(
            "stopped: lease expired; deleted at {} unless extended (corral cluster lease {} --hours N)",
            at(deletes_at),
            cluster.id
        ));
    }
    let expires = cluster.lease_expires_ms?;
    Some(format!(
        "lease: ends {} ({})",
        at(expires),
        cluster.lease_left(now).unwrap_or_default()
    ))
}

/// Whose credentials the plan spends (when it makes machines on a provider that takes
/// credentials), what the caller should know before going ahead, then each task of a small plan, or a large one's steps with their task
/// counts (the server sends no more).
fn print_plan(plan: &PlanView) {
    if let Some(credentials) = &plan.credentials {
        println!("credentials: {credentials}");
    }
    if let Some(upgrade) = &plan.upgrade {
        print_upgrade(upgrade);
    }
    for warning in &plan.warnings {
        println!("warning: {warning}");
    }
    if let Some(keys) = &plan.keys {
        println!("keys the nodes will have ({}):", keys.len());
        for key in keys {
            println!("  {} {} {}", key.username, key.fingerprint, key.comment);
        }
    }
    if let Some(cost) = &plan.cost {
        println!("{}", cost_line(cost));
    }
    println!("{} task(s):", plan.tasks);
    match &plan.graph {
        Some(graph) => {
            for step in &graph.steps {
                println!("  {step}");
            }
        }
        None => {
            for count in &plan.step_counts {
                println!("  {} x{}", count.step, count.tasks);
            }
        }
    }
}

/// A plan's estimated cost in one line: per hour and per month (730 h), and for a
/// change what it adds; "no prices set" when no node has a price.
fn cost_line(cost: &api_types::CostEstimate) -> String {
    use api_types::money;
    if cost.priced_nodes == 0 {
        return "estimated cost: no prices set".to_owned();
    }
    let mut line = format!(
        "estimated cost: {} per hour, {} per month (730 h)",
        money(cost.per_hour),
        money(cost.per_month)
    );
    if let (Some(hour), Some(month)) = (cost.change_per_hour, cost.change_per_month) {
        line.push_str(&format!(
            "; change {hour:+.2} per hour, {month:+.2} per month"
        ));
    }
    if cost.unpriced_nodes > 0 {
        line.push_str(&format!("; {} node(s) unpriced", cost.unpriced_nodes));
    }
    line
}

/// What an upgrade changes (each entity's changed top-level fields), what each changed
/// service runs, and the batches.
fn print_upgrade(upgrade: &UpgradePlanView) {
    for change in &upgrade.changes {
        let fields = match (&change.before, &change.after) {
            (Value::Object(before), Some(Value::Object(after))) => {
                let mut keys: Vec<&str> = before
                    .iter()
                    .filter(|(key, value)| after.get(*key) != Some(*value))
                    .chain(after.iter().filter(|(key, _)| !before.contains_key(*key)))
                    .map(|(key, _)| key.as_str())
                    .collect();
                keys.dedup();
                format!(" ({})", keys.join(", "))
            }
            _ => String::new(),
        };
        println!(
            "{} {} {}{fields}",
            change.kind,
            change.name,
            change.change.as_str()
        );
    }
    for service in &upgrade.services {
        println!("upgrade: {} {}", service.service, service.runs.as_str());
    }
    if !upgrade.reconfigure.is_empty() {
        println!("then configure: {}", upgrade.reconfigure.join(", "));
    }
    println!("batches: {}", upgrade.batches_text(",", " | "));
}

fn print_submitted(submitted: &SubmittedJob) {
    if let Some(request) = &submitted.approval {
        println!(
            "cluster {} ({}) is {}: {} needs approval ({}); request {}",
            submitted.cluster.name,
            submitted.cluster.id,
            submitted.cluster.state,
            request.operation,
            request.rule,
            request.id
        );
        return;
    }
    println!(
        "cluster {} ({}) is {}; job {}",
        submitted.cluster.name, submitted.cluster.id, submitted.cluster.state, submitted.job_id
    );
}

/// A view as JSON, for `--json` and for the tables (which pick fields by name).
fn to_json(view: &impl Serialize) -> anyhow::Result<Value> {
    Ok(serde_json::to_value(view)?)
}

fn rows(views: &[impl Serialize]) -> anyhow::Result<Vec<Value>> {
    views.iter().map(to_json).collect()
}

/// Nodes as table rows, each with its services' health in one cell (`kv up`; only
/// services with a health check are listed there) and what its provider says of its
/// machine (`present`, `gone`, `unknown`, or `-` before the monitor asked).
fn node_rows(nodes: &[NodeView]) -> anyhow::Result<Vec<Value>> {
    let mut rows = rows(nodes)?;
    for (row, node) in rows.iter_mut().zip(nodes) {
        let health: Vec<String> = node
            .health
            .iter()
            .filter(|health| {
                health.checked_at_ms.is_some() || health.health != ServiceHealth::Unknown
            })
            .map(|health| format!("{} {}", health.service, health.health))
            .collect();
        row["health"] = Value::from(if health.is_empty() {
            "-".to_owned()
        } else {
            health.join(", ")
        });
        row["machine"] = Value::from(
            node.machine
                .map_or("-", |machine| machine.presence.as_str()),
        );
    }
    Ok(rows)
}

/// `corral cluster pin|unpin ID`.
async fn pin(client: &Client, id: &str, pinned: bool, json: bool) -> anyhow::Result<ExitCode> {
    let view = client
        .set_cluster_pinned(id, &api_types::PinChoice { pinned })
        .await?;
    print_answer(&view, json, |view| {
        if view.pinned {
            println!("cluster {id} is pinned: rollouts pass it over");
        } else {
            println!("cluster {id} is unpinned: the next rollout of its template upgrades it");
        }
    })
}

/// Prints the answer to a command: its JSON with `--json`, else as `print` shows it
/// to people.
fn print_answer<T: Serialize>(
    view: &T,
    json: bool,
    print: impl FnOnce(&T),
) -> anyhow::Result<ExitCode> {
    if json {
        print_json(&to_json(view)?);
    } else {
        print(view);
    }
    Ok(ExitCode::SUCCESS)
}

/// Every live cluster of the tenant: the list's pages, one cursor after another, as
/// one list.
async fn all_clusters(client: &Client) -> anyhow::Result<ClusterList> {
    const PAGE: &str = "limit=500";
    let mut list = client.clusters(PAGE).await?;
    while let Some(cursor) = list.next.take() {
        // Cursors are URL-safe base64: no escaping needed.
        let more = client.clusters(&format!("{PAGE}&cursor={cursor}")).await?;
        list.items.extend(more.items);
        list.next = more.next;
    }
    Ok(list)
}

pub async fn run(args: ClusterArgs) -> anyhow::Result<ExitCode> {
    let client = super::remote::signed_in()?;
    let json = args.output.json;
    let answer = match args.command {
        ClusterCommand::Ssh(ssh) => return super::node_ssh::run(&client, ssh).await,
        ClusterCommand::List => {
            let mut page = all_clusters(&client).await?;
            if !json {
                // Expiring first: whoever reads the list should see what goes soonest.
                api_types::sort_expiring_first(&mut page.items);
                let now = chrono::Utc::now().timestamp_millis();
                let mut table = rows(&page.items)?;
                for (row, cluster) in table.iter_mut().zip(&page.items) {
                    row["lease"] =
                        Value::from(cluster.lease_left(now).unwrap_or_else(|| "none".to_owned()));
                    let names: Vec<&str> = cluster
                        .catalog_behind
                        .iter()
                        .map(|entity| entity.name.as_str())
                        .collect();
                    row["catalog"] = Value::from(if names.is_empty() {
                        "current".to_owned()
                    } else {
                        format!("behind ({})", names.join(", "))
                    });
                }
                let mut total = (0.0, 0.0, false);
                for (row, cluster) in table.iter_mut().zip(&page.items) {
                    row["cost"] = Value::from(match &cluster.cost {
                        Some(cost) => {
                            total = (total.0 + cost.per_hour, total.1 + cost.so_far, true);
                            format!(
                                "{}/h, {} so far",
                                api_types::money(cost.per_hour),
                                api_types::money(cost.so_far)
                            )
                        }
                        None => "-".to_owned(),
                    });
                }
                let mut columns = CLUSTER_COLUMNS.to_vec();
                columns.push(("lease", "lease"));
                columns.push(("catalog", "catalog"));
                columns.push(("cost", "cost"));
                print_table(&table, &columns);
                if total.2 {
                    println!(
                        "total: {} per hour, {} so far",
                        api_types::money(total.0),
                        api_types::money(total.1)
                    );
                }
                return Ok(ExitCode::SUCCESS);
            }
            to_json(&page)?
        }
        ClusterCommand::Show { id } => {
            let cluster = client.cluster(&id).await?;
            if !json {
                print_table(
                    &rows(std::slice::from_ref(&cluster.cluster))?,
                    CLUSTER_COLUMNS,
                );
                if let Some(line) = lease_line(&cluster.cluster) {
                    println!("{line}");
                }
                if let Some(behind) = cluster.cluster.catalog_behind_summary() {
                    println!("{behind} (corral cluster plan {id} upgrade)");
                }
                if cluster.pinned {
                    println!("pinned: rollouts pass it over (corral cluster unpin {id})");
                }
                match &cluster.cluster.cost {
                    Some(cost) => println!(
                        "cost: {} per hour now; {} so far ({} this month)",
                        api_types::money(cost.per_hour),
                        api_types::money(cost.so_far),
                        api_types::money(cost.this_month)
                    ),
                    None => println!("cost: no prices set"),
                }
                if cluster.healing.enabled || cluster.heal_note.is_some() {
                    let state = if cluster.healing.enabled { "on" } else { "off" };
                    match &cluster.heal_note {
                        Some(note) => println!("healing: {state}; {}", note.text),
                        None => println!("healing: {state}"),
                    }
                }
                println!();
                print_table(
                    &node_rows(&cluster.nodes)?,
                    &[
                        ("node", "number"),
                        ("address", "address"),
                        ("state", "state"),
                        ("machine", "machine"),
                        ("services", "services"),
                        ("health", "health"),
                    ],
                );
                for (node, health) in cluster.nodes.iter().flat_map(|node| {
                    node.health
                        .iter()
                        .filter(|health| health.health == ServiceHealth::Down)
                        .map(move |health| (node.number, health))
                }) {
                    println!(
                        "down: {} on node {node}: {}",
                        health.service,
                        health.detail.as_deref().unwrap_or("no detail")
                    );
                }
                println!();
                print_table(
                    &rows(&cluster.jobs)?,
                    &[
                        ("job", "id"),
                        ("operation", "operation"),
                        ("state", "state"),
                        ("error", "error"),
                    ],
                );
                if !cluster.links.is_empty() {
                    println!();
                    print_table(&rows(&cluster.links)?, &[("link", "label"), ("url", "url")]);
                }
                return Ok(ExitCode::SUCCESS);
            }
            to_json(&cluster)?
        }
        ClusterCommand::Create(create) => {
            let config: Option<Map<String, Value>> = create
                .config
                .as_deref()
                .map(serde_json::from_str)
                .transpose()
                .context("--config must be a JSON object")?;
            let request = ClusterCreateRequest {
                name: create.name,
                template: create.cluster.template,
                size: create.cluster.size,
                services: create.cluster.services,
                provider: create.cluster.provider,
                hardwaretype: create.cluster.hardwaretype,
                imagetype: create.cluster.imagetype,
                config,
                parameters: (!create.params.is_empty()).then(|| {
                    create
                        .params
                        .into_iter()
                        .map(|(name, value)| (name, Value::String(value)))
                        .collect()
                }),
            };
            if create.dry_run {
                let plan = client.plan_create_cluster(&request).await?;
                return print_answer(&plan, json, print_plan);
            }
            let submitted = client.create_cluster(&request).await?;
            if create.wait && submitted.approval.is_none() {
                return watch(&client, &submitted.job_id).await;
            }
            return print_answer(&submitted, json, print_submitted);
        }
        ClusterCommand::Plan(change) => {
            let plan = client
                .plan_cluster_change(&change.id, &change.request()?)
                .await?;
            return print_answer(&plan, json, print_plan);
        }
        ClusterCommand::Change(change) => {
            let submitted = client
                .change_cluster(&change.id, &change.request()?)
                .await?;
            return print_answer(&submitted, json, print_submitted);
        }
        ClusterCommand::Heal { id, choice } => {
            let enabled = match choice {
                HealChoice::On => Some(true),
                HealChoice::Off => Some(false),
                HealChoice::Template => None,
            };
            let view = client
                .set_cluster_healing(&id, &api_types::HealingChoice { enabled })
                .await?;
            return print_answer(&view, json, |view| {
                println!(
                    "healing is {} for cluster {id} ({})",
                    if view.enabled { "on" } else { "off" },
                    if view.owner_choice.is_some() {
                        "its own setting"
                    } else {
                        "as its template says"
                    }
                );
            });
        }
        ClusterCommand::Pin { id } => return pin(&client, &id, true, json).await,
        ClusterCommand::Unpin { id } => return pin(&client, &id, false, json).await,
        ClusterCommand::Lease { id, hours } => {
            let extension = LeaseExtension {
                seconds: hours.saturating_mul(3600),
            };
            to_json(&client.extend_cluster_lease(&id, &extension).await?)?
        }
        ClusterCommand::Delete { id, force } => {
            let submitted = client.delete_cluster(&id, force).await?;
            return print_answer(&submitted, json, print_submitted);
        }
    };
    print_json(&answer);
    Ok(ExitCode::SUCCESS)
}

/// `corral job show ID --json`: the job and its tasks.
#[derive(Serialize)]
struct JobWithTasks {
    job: JobView,
    tasks: Page<TaskView>,
}

pub async fn run_job(args: JobArgs) -> anyhow::Result<ExitCode> {
    let client = super::remote::signed_in()?;
    let answer = match args.command {
        JobCommand::Show { id } => {
            let job = client.job(&id).await?;
            let tasks = client.job_tasks(&id, 500).await?;
            if !args.output.json {
                println!(
                    "job {} ({}): {} — {}/{} tasks succeeded",
                    id,
                    job.operation.label(),
                    job.state,
                    job.tasks_succeeded,
                    job.tasks_total
                );
                if let Some(error) = &job.error {
                    println!("error: {error}");
                }
                print_table(
                    &rows(&tasks.items)?,
                    &[
                        ("node", "node"),
                        ("action", "action"),
                        ("service", "service"),
                        ("state", "state"),
                        ("attempts", "attempts"),
                        ("error", "error"),
                    ],
                );
                return Ok(ExitCode::SUCCESS);
            }
            to_json(&JobWithTasks { job, tasks })?
        }
        JobCommand::Watch { id } => return watch(&client, &id).await,
        JobCommand::Cancel { id } => to_json(&client.cancel_job(&id).await?)?,
        JobCommand::Retry { id } => to_json(&client.retry_job(&id).await?)?,
    };
    print_json(&answer);
    Ok(ExitCode::SUCCESS)
}

/// Prints state events and Corral's notices as they come until the job finishes;
/// exit 1 if it failed.
async fn watch(client: &Client, job: &str) -> anyhow::Result<ExitCode> {
    let mut after = 0i64;
    loop {
        let events = client.job_events(job, after, 1000).await?;
        for event in events {
            after = event.id;
            if event.kind == EventKind::State || event.stream == Some(OutputStream::Notice) {
                println!("{}", event.data.trim_end());
            }
        }
        let state = client.job(job).await?;
        match state.state {
            JobState::Succeeded => {
                println!("job {job} succeeded");
                return Ok(ExitCode::SUCCESS);
            }
            JobState::Failed | JobState::Cancelled => {
                println!(
                    "job {job} {}: {}",
                    state.state,
                    state.error.as_deref().unwrap_or("no error recorded")
                );
                println!("retry from the failure with `corral job retry {job}`");
                return Ok(ExitCode::from(1));
            }
            _ => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
}
