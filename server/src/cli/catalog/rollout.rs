//! `corral catalog rollout --template NAME [--max-parallel N] [--dry-run]`: lists the
//! template's clusters that are behind its current revision (each with its plan
//! summary, pinned ones marked) and, unless a dry run, starts the rollout and follows
//! it until it ends, printing each cluster's outcome; `corral catalog rollout show ID`
//! prints one rollout.

use std::process::ExitCode;
use std::time::Duration;

use api_types::{RolloutClusterState, RolloutRequest, RolloutStarted, RolloutState, RolloutView};
use clap::{Args, Subcommand};

/// How often a followed rollout is read again.
const FOLLOW_EVERY: Duration = Duration::from_secs(2);

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct RolloutArgs {
    #[command(subcommand)]
    pub command: Option<RolloutCommand>,
    /// The template whose current catalog revision is rolled out.
    #[arg(long)]
    pub template: Option<String>,
    /// Clusters upgraded at once.
    #[arg(long, default_value_t = 1)]
    pub max_parallel: u32,
    /// Only list the clusters and what their upgrades would do.
    #[arg(long)]
    pub dry_run: bool,
    /// Start the rollout and return without following it.
    #[arg(long)]
    pub no_follow: bool,
}

#[derive(Debug, Subcommand)]
pub enum RolloutCommand {
    /// One rollout: its state, reason, and each cluster's outcome and job.
    Show { id: String },
    /// Your tenant's rollouts, newest first.
    List,
}

pub async fn run(args: RolloutArgs) -> anyhow::Result<ExitCode> {
    let client = super::super::remote::signed_in()?;
    match args.command {
        Some(RolloutCommand::Show { id }) => {
            let rollout = client.rollout(&id).await?;
            print_rollout(&rollout);
            return Ok(exit_code(&rollout));
        }
        Some(RolloutCommand::List) => {
            let rollouts = client.rollouts().await?;
            for rollout in &rollouts {
                println!(
                    "{}  {}  {}  {}",
                    rollout.id,
                    rollout.template,
                    rollout.state,
                    rollout.reason.as_deref().unwrap_or("")
                );
            }
            return Ok(ExitCode::SUCCESS);
        }
        None => {}
    }
    let Some(template) = args.template else {
        anyhow::bail!("say which template: corral catalog rollout --template NAME");
    };
    let request = RolloutRequest {
        template,
        max_parallel: args.max_parallel,
        dry_run: args.dry_run,
    };
    let started = client.start_rollout(&request).await?;
    print_listing(&started);
    let Some(rollout) = started.rollout else {
        return Ok(ExitCode::SUCCESS);
    };
    println!("rollout {} started", rollout.id);
    if args.no_follow {
        return Ok(ExitCode::SUCCESS);
    }
    let id = rollout.id;
    let mut shown: Vec<(String, RolloutClusterState)> = Vec::new();
    loop {
        let rollout = client.rollout(&id).await?;
        // Each cluster's change of state, as it happens.
        for cluster in &rollout.clusters {
            let key = (cluster.cluster_id.clone(), cluster.state);
            if cluster.state != RolloutClusterState::Pending && !shown.contains(&key) {
                println!("  {}: {}", cluster.cluster_name, cluster_line(cluster));
                shown.push(key);
            }
        }
        if !rollout.state.is_active() {
            println!();
            print_rollout(&rollout);
            return Ok(exit_code(&rollout));
        }
        tokio::time::sleep(FOLLOW_EVERY).await;
    }
}

fn print_listing(started: &RolloutStarted) {
    let revision = started
        .revision
        .map(|revision| format!(" r{revision}"))
        .unwrap_or_default();
    if started.clusters.is_empty() {
        println!(
            "no cluster of template {} is behind{revision}: nothing to roll out",
            started.template
        );
        return;
    }
    println!(
        "clusters of template {} behind{revision}, in rollout order:",
        started.template
    );
    for candidate in &started.clusters {
        let pinned = if candidate.pinned {
            " [pinned: passed over]"
        } else {
            ""
        };
        println!(
            "  {}{pinned}: {}",
            candidate.cluster_name, candidate.summary
        );
    }
}

fn cluster_line(cluster: &api_types::RolloutClusterView) -> String {
    let mut line = cluster.state.to_string();
    if let Some(job) = &cluster.job_id {
        line.push_str(&format!(" (job {job})"));
    }
    if let Some(note) = &cluster.note {
        line.push_str(&format!(": {note}"));
    }
    line
}

fn print_rollout(rollout: &RolloutView) {
    println!(
        "rollout {} of {} ({} at once, by {}): {}",
        rollout.id, rollout.template, rollout.max_parallel, rollout.created_by, rollout.state
    );
    if let Some(reason) = &rollout.reason {
        println!("{reason}");
    }
    for cluster in &rollout.clusters {
        println!("  {}: {}", cluster.cluster_name, cluster_line(cluster));
    }
}

/// 0 when the rollout succeeded (or still runs), 1 when it stopped.
fn exit_code(rollout: &RolloutView) -> ExitCode {
    if rollout.state == RolloutState::Stopped {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
