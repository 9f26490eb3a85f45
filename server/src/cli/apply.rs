//! `corral apply FILE` and `corral plan FILE`: converge the signed-in tenant's clusters
//! on an environment file (CloudARK-style YAML, see [`file`]). Plan prints the changes
//! (create / amend / delete); apply prints them, asks (unless `--yes`), converges the
//! clusters side by side (each cluster's jobs one after another, waiting for each), and
//! prints every listed cluster's links. A second apply of the same file finds nothing
//! to do.
//!
//! Creates are checked with the server's dry run before anything is asked or done, so
//! an unsatisfiable entry is reported (with its line) while nothing has changed yet.

mod diff;
mod file;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use api_types::{ClusterCreateRequest, JobState, SubmittedJob};
use clap::Args;
use serde_json::{Map, Value};

use super::remote::{Client, Notices};
use diff::{describe, Existing, Plan, Step};
use file::EnvFile;

/// How often a running job is polled.
const POLL: Duration = Duration::from_millis(300);

#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// The environment file (YAML).
    pub file: PathBuf,
    /// Make the changes without asking.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Remove services a cluster runs that its entry's `services` no longer lists
    /// (without it they are kept, and the plan says so).
    #[arg(long)]
    pub prune_services: bool,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The environment file (YAML).
    pub file: PathBuf,
    /// Plan the removal of services an entry no longer lists (as apply would with it).
    #[arg(long)]
    pub prune_services: bool,
}

/// The file, the plan for it, and the client that made it.
struct Prepared {
    file: EnvFile,
    plan: Plan,
    client: Client,
}

/// Reads the file (before signing in: a bad file needs no server), lists the
/// clusters, diffs, and dry-runs each create and each change of an amend (a removal
/// the template or a service's requirements forbid is refused here, before anything
/// is done).
async fn prepare(path: &Path, prune_services: bool) -> anyhow::Result<Prepared> {
    let origin = path.display().to_string();
    let file = file::read(path)?;
    let client = super::remote::signed_in()?;
    let listed = client.clusters("limit=500").await?;
    let existing: Vec<Existing> = listed.items.into_iter().map(Existing::from_view).collect();
    let plan = diff::diff(&file, &origin, &existing, prune_services).map_err(|problems| {
        anyhow::anyhow!("{origin} cannot be applied:\n{}", problems.join("\n"))
    })?;
    let mut problems = Vec::new();
    for step in &plan.steps {
        match step {
            Step::Create { spec, config } => {
                let dry_run = client
                    .plan_create_cluster(&create_request(spec, config))
                    .await;
                if let Err(error) = dry_run {
                    problems.push(format!(
                        "{origin}:{}: cluster {}: {error:#}",
                        spec.line,
                        spec.name.as_str()
                    ));
                }
            }
            Step::Amend { id, name, line, .. } => {
                // Each change is planned against the cluster as it is now; a later one
                // may still fail after an earlier one ran (its job then says why).
                for (what, change) in step.changes() {
                    let planned = client.plan_cluster_change(id, &change).await;
                    if let Err(error) = planned {
                        problems.push(format!(
                            "{origin}:{line}: cluster {name}: {what}: {error:#}"
                        ));
                    }
                }
            }
            Step::Delete { .. } => {}
        }
    }
    if !problems.is_empty() {
        bail!("{origin} cannot be applied:\n{}", problems.join("\n"));
    }
    Ok(Prepared { file, plan, client })
}

fn create_request(spec: &file::ClusterSpec, config: &Map<String, Value>) -> ClusterCreateRequest {
    ClusterCreateRequest {
        name: spec.name.as_str().to_owned(),
        template: spec.template.as_str().to_owned(),
        size: spec.size.0,
        services: spec
            .services
            .as_ref()
            .map(|services| services.iter().map(ToString::to_string).collect()),
        provider: spec.provider.as_ref().map(ToString::to_string),
        hardwaretype: spec.hardwaretype.as_ref().map(ToString::to_string),
        imagetype: spec.imagetype.as_ref().map(ToString::to_string),
        config: Some(config.clone()),
        parameters: (!spec.parameters.is_empty()).then(|| spec.parameters.clone()),
    }
}

pub async fn plan(args: PlanArgs) -> anyhow::Result<ExitCode> {
    let prepared = prepare(&args.file, args.prune_services).await?;
    for line in describe(&prepared.plan, prepared.file.environment.as_str()) {
        println!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn apply(args: ApplyArgs) -> anyhow::Result<ExitCode> {
    let Prepared { file, plan, client } = prepare(&args.file, args.prune_services).await?;
    for line in describe(&plan, file.environment.as_str()) {
        println!("{line}");
    }
    if plan.steps.is_empty() {
        println!("nothing to do");
    } else {
        if !args.yes && !confirm()? {
            println!("nothing changed");
            return Ok(ExitCode::from(1));
        }
        // Clusters are independent: converge them side by side, each one's jobs in turn.
        let mut running = tokio::task::JoinSet::new();
        for step in plan.steps {
            let client = client.clone();
            running.spawn(async move { converge(&client, &step).await });
        }
        let mut failures = Vec::new();
        while let Some(done) = running.join_next().await {
            match done {
                Ok(Ok(())) => {}
                Ok(Err(error)) => failures.push(format!("{error:#}")),
                Err(error) => failures.push(format!("a step stopped: {error}")),
            }
        }
        if !failures.is_empty() {
            bail!(
                "environment {} is not fully applied:\n{}",
                file.environment,
                failures.join("\n")
            );
        }
        println!("environment {} applied", file.environment);
    }
    for spec in &file.clusters {
        print_links(&client, spec.name.as_str()).await?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Asks on the terminal; anything but y/yes is a no.
fn confirm() -> anyhow::Result<bool> {
    print!("Apply these changes? [y/N] ");
    std::io::stdout().flush()?;
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .context("cannot read the answer (use --yes to apply without asking)")?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// Makes one step, waiting for each job it submits.
async fn converge(client: &Client, step: &Step) -> anyhow::Result<()> {
    let name = step.name();
    match step {
        Step::Create { spec, config } => {
            let submitted = client
                .create_cluster(&create_request(spec, config))
                .await
                .with_context(|| format!("cannot create cluster {name}"))?;
            wait(client, name, "create", &submitted).await
        }
        Step::Amend { id, .. } => {
            for (what, change) in step.changes() {
                let submitted = client
                    .change_cluster(id, &change)
                    .await
                    .with_context(|| format!("cannot {what} on cluster {name}"))?;
                wait(client, name, what, &submitted).await?;
            }
            if let Some(change) = step.reconfigure() {
                let submitted = client.change_cluster(id, &change).await?;
                wait(client, name, "reconfigure", &submitted).await?;
            }
            Ok(())
        }
        Step::Delete { id, .. } => {
            let submitted = client.delete_cluster(id, false).await?;
            wait(client, name, "delete", &submitted).await
        }
    }
}

/// Polls the submitted job until it ends, printing progress; a failed job is an error
/// that says how to go on.
async fn wait(
    client: &Client,
    cluster: &str,
    what: &str,
    submitted: &SubmittedJob,
) -> anyhow::Result<()> {
    if let Some(request) = &submitted.approval {
        // Nothing runs until an approver decides; applying again then finds the rest.
        println!(
            "  {cluster}: {what} awaits approval ({}; request {}); apply again once it is decided",
            request.rule, request.id
        );
        return Ok(());
    }
    let job = &submitted.job_id;
    let mut shown = None;
    let mut notices = Notices::default();
    loop {
        notices
            .print_new(client, job, &format!("  {cluster}: {what}: "))
            .await?;
        let state = client.job(job).await?;
        let progress = (state.tasks_succeeded, state.tasks_total);
        if shown != Some(progress) {
            println!("  {cluster}: {what}: {}/{} tasks", progress.0, progress.1);
            shown = Some(progress);
        }
        match state.state {
            JobState::Succeeded => return Ok(()),
            JobState::Failed | JobState::Cancelled => bail!(
                "cluster {cluster}: {what} job {job} {}: {}\nsee `corral job show {job}`; \
                 `corral job retry {job}` resumes it, then apply again",
                state.state,
                state.error.as_deref().unwrap_or("no error recorded")
            ),
            _ => tokio::time::sleep(POLL).await,
        }
    }
}

async fn print_links(client: &Client, name: &str) -> anyhow::Result<()> {
    let cluster = match client.cluster(name).await {
        Ok(cluster) => cluster,
        // Deleted by this apply, or never made.
        Err(_) => return Ok(()),
    };
    println!(
        "{name}: {} ({} node(s), template {})",
        cluster.cluster.state, cluster.cluster.size, cluster.cluster.template
    );
    for link in &cluster.links {
        println!("  {}: {}", link.label, link.url);
    }
    Ok(())
}
