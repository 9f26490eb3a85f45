//! `corral cluster ...` and `corral job ...`: the cluster operations of the API from
//! the command line, as tables or `--json`.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Subcommand};
use serde_json::{json, Map, Value};

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
    /// Your tenant's clusters.
    List,
    /// One cluster (by id or name) with its nodes, jobs and links.
    Show { id: String },
    /// Create a cluster (or only show the plan with --dry-run).
    Create(CreateArgs),
    /// Show what a change would do, without doing it.
    Plan(ChangeArgs),
    /// Submit a change: add services or nodes, reconfigure, start, stop, restart, roll back.
    Change(ChangeArgs),
    /// Let the cluster live this many more hours from now.
    Lease {
        id: String,
        #[arg(long)]
        hours: u64,
    },
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
    #[arg(long)]
    pub template: String,
    #[arg(long)]
    pub size: u32,
    #[arg(long, value_delimiter = ',')]
    pub services: Option<Vec<String>>,
    /// Config as a JSON object, merged over the template's.
    #[arg(long)]
    pub config: Option<String>,
    #[arg(long)]
    pub dry_run: bool,
    /// Wait for the create job to finish, printing its progress.
    #[arg(long)]
    pub wait: bool,
}

#[derive(Debug, Args)]
pub struct ChangeArgs {
    pub id: String,
    /// add-services, add-nodes, reconfigure, start, stop, restart or rollback.
    pub operation: String,
    #[arg(long, value_delimiter = ',')]
    pub services: Option<Vec<String>>,
    /// Nodes to add (add-nodes).
    #[arg(long)]
    pub count: Option<u32>,
    /// Restart services around their configure (reconfigure).
    #[arg(long)]
    pub restart: bool,
    /// The job to roll back (rollback).
    #[arg(long)]
    pub job: Option<String>,
}

impl ChangeArgs {
    fn body(&self) -> Value {
        let mut body = Map::new();
        body.insert("operation".into(), json!(self.operation));
        if let Some(services) = &self.services {
            body.insert("services".into(), json!(services));
        }
        if let Some(count) = self.count {
            body.insert("count".into(), json!(count));
        }
        if self.restart {
            body.insert("restart".into(), json!(true));
        }
        if let Some(job) = &self.job {
            body.insert("job_id".into(), json!(job));
        }
        Value::Object(body)
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

fn print_plan(plan: &Value) {
    println!("{} task(s):", plan["tasks"]);
    for step in plan["steps"].as_array().into_iter().flatten() {
        println!("  {}", step.as_str().unwrap_or_default());
    }
}

fn print_submitted(submitted: &Value) {
    println!(
        "cluster {} ({}) is {}; job {}",
        submitted["cluster"]["name"].as_str().unwrap_or_default(),
        submitted["cluster"]["id"].as_str().unwrap_or_default(),
        submitted["cluster"]["state"].as_str().unwrap_or_default(),
        submitted["job_id"].as_str().unwrap_or_default()
    );
}

pub async fn run(args: ClusterArgs) -> anyhow::Result<ExitCode> {
    let client = Client::signed_in()?;
    let json = args.output.json;
    let answer = match args.command {
        ClusterCommand::List => {
            let page = client.get("/api/v1/clusters?limit=500").await?;
            if !json {
                print_table(
                    page["items"].as_array().map_or(&[], Vec::as_slice),
                    CLUSTER_COLUMNS,
                );
                return Ok(ExitCode::SUCCESS);
            }
            page
        }
        ClusterCommand::Show { id } => {
            let cluster = client.get(&format!("/api/v1/clusters/{id}")).await?;
            if !json {
                print_table(std::slice::from_ref(&cluster), CLUSTER_COLUMNS);
                println!();
                print_table(
                    cluster["nodes"].as_array().map_or(&[], Vec::as_slice),
                    &[
                        ("node", "number"),
                        ("address", "address"),
                        ("state", "state"),
                        ("services", "services"),
                    ],
                );
                println!();
                print_table(
                    cluster["jobs"].as_array().map_or(&[], Vec::as_slice),
                    &[
                        ("job", "id"),
                        ("operation", "operation"),
                        ("state", "state"),
                        ("error", "error"),
                    ],
                );
                let links = cluster["links"].as_array().map_or(&[][..], Vec::as_slice);
                if !links.is_empty() {
                    println!();
                    print_table(links, &[("link", "label"), ("url", "url")]);
                }
                return Ok(ExitCode::SUCCESS);
            }
            cluster
        }
        ClusterCommand::Create(create) => {
            let config: Option<Value> = create
                .config
                .as_deref()
                .map(serde_json::from_str)
                .transpose()
                .context("--config must be a JSON object")?;
            let body = json!({
                "name": create.name, "template": create.template, "size": create.size,
                "services": create.services, "config": config,
            });
            let path = format!("/api/v1/clusters?dry_run={}", create.dry_run);
            let answer = client.post(&path, &body).await?;
            if create.wait && !create.dry_run {
                let job = answer["job_id"].as_str().unwrap_or_default().to_owned();
                return watch(&client, &job).await;
            }
            if !json {
                if create.dry_run {
                    print_plan(&answer);
                } else {
                    print_submitted(&answer);
                }
                return Ok(ExitCode::SUCCESS);
            }
            answer
        }
        ClusterCommand::Plan(change) => {
            let plan = client
                .post(
                    &format!("/api/v1/clusters/{}/plan", change.id),
                    &change.body(),
                )
                .await?;
            if !json {
                print_plan(&plan);
                return Ok(ExitCode::SUCCESS);
            }
            plan
        }
        ClusterCommand::Change(change) => {
            let submitted = client
                .post(
                    &format!("/api/v1/clusters/{}/changes", change.id),
                    &change.body(),
                )
                .await?;
            if !json {
                print_submitted(&submitted);
                return Ok(ExitCode::SUCCESS);
            }
            submitted
        }
        ClusterCommand::Lease { id, hours } => {
            client
                .send(
                    reqwest::Method::PUT,
                    &format!("/api/v1/clusters/{id}/lease"),
                    Some(&json!({"seconds": hours.saturating_mul(3600)})),
                    &[],
                )
                .await?
        }
        ClusterCommand::Delete { id, force } => {
            let path = if force {
                format!("/api/v1/clusters/{id}?force=true")
            } else {
                format!("/api/v1/clusters/{id}")
            };
            let submitted = client.delete(&path).await?;
            if !json {
                print_submitted(&submitted);
                return Ok(ExitCode::SUCCESS);
            }
            submitted
        }
    };
    print_json(&answer);
    Ok(ExitCode::SUCCESS)
}

pub async fn run_job(args: JobArgs) -> anyhow::Result<ExitCode> {
    let client = Client::signed_in()?;
    let answer = match args.command {
        JobCommand::Show { id } => {
            let job = client.get(&format!("/api/v1/jobs/{id}")).await?;
            let tasks = client
                .get(&format!("/api/v1/jobs/{id}/tasks?limit=500"))
                .await?;
            if !args.output.json {
                println!(
                    "job {} ({}): {} — {}/{} tasks succeeded",
                    id,
                    job["operation"].as_str().unwrap_or_default(),
                    job["state"].as_str().unwrap_or_default(),
                    job["tasks_succeeded"],
                    job["tasks_total"]
                );
                if let Some(error) = job["error"].as_str() {
                    println!("error: {error}");
                }
                print_table(
                    tasks["items"].as_array().map_or(&[], Vec::as_slice),
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
            json!({"job": job, "tasks": tasks})
        }
        JobCommand::Watch { id } => return watch(&client, &id).await,
        JobCommand::Cancel { id } => {
            client
                .post(&format!("/api/v1/jobs/{id}/cancel"), &json!({}))
                .await?
        }
        JobCommand::Retry { id } => {
            client
                .post(&format!("/api/v1/jobs/{id}/retry"), &json!({}))
                .await?
        }
    };
    print_json(&answer);
    Ok(ExitCode::SUCCESS)
}

/// Prints state events as they come until the job finishes; exit 1 if it failed.
async fn watch(client: &Client, job: &str) -> anyhow::Result<ExitCode> {
    let mut after = 0i64;
    loop {
        let events = client
            .get(&format!(
                "/api/v1/jobs/{job}/events?after={after}&limit=1000"
            ))
            .await?;
        for event in events.as_array().into_iter().flatten() {
            after = event["id"].as_i64().unwrap_or(after);
            if event["kind"] == "state" {
                println!("{}", event["data"].as_str().unwrap_or_default());
            }
        }
        let state = client.get(&format!("/api/v1/jobs/{job}")).await?;
        match state["state"].as_str().unwrap_or_default() {
            "succeeded" => {
                println!("job {job} succeeded");
                return Ok(ExitCode::SUCCESS);
            }
            "failed" | "cancelled" => {
                println!(
                    "job {job} {}: {}",
                    state["state"].as_str().unwrap_or_default(),
                    state["error"].as_str().unwrap_or("no error recorded")
                );
                println!("retry from the failure with `corral job retry {job}`");
                return Ok(ExitCode::from(1));
            }
            _ => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
}
