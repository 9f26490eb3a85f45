//! Command-line interface: `corral serve`, `corral worker`, `corral migrate`,
//! `corral admin ...`, `corral catalog ...` (server-side and offline), and the API
//! client commands `corral login`, `corral cluster ...`, `corral job ...`,
//! `corral apply FILE`, `corral plan FILE`, `corral hook ...`, `corral group ...` and
//! `corral approval ...`; `corral completions`
//! and `corral man`.
//!
//! Each command group lives in its own module under `cli/`; this file only parses
//! and dispatches.

mod admin;
mod apply;
mod approval;
mod backup;
mod catalog;
mod cluster;
mod cost;
mod hook;
mod login;
mod login_sso;
mod manual;
mod node_ssh;
mod provider;
mod remote;
mod user;

use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};

use crate::config::{Config, ServerArgs};

#[derive(Debug, Parser)]
#[command(name = "corral", version, about = "Self-service cluster provisioning")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the web server (UI, API) with the in-process workers.
    Serve(ServerArgs),
    /// Run only task workers (no web server) against a shared database.
    Worker(crate::workers::WorkerArgs),
    /// Apply pending database migrations and exit.
    Migrate(ServerArgs),
    /// Administer users and back up the database directly (works while the server runs).
    #[command(subcommand)]
    Admin(admin::AdminCommand),
    /// Catalogs: offline (validate, convert, solve, plan) or on the server (import, export).
    Catalog(catalog::CatalogArgs),
    /// Sign in to a Corral server; later client commands use the saved token.
    Login(login::LoginArgs),
    /// Revoke the saved token and forget it.
    Logout,
    /// Create, inspect, change and delete clusters on the server.
    Cluster(cluster::ClusterArgs),
    /// Follow, cancel and retry jobs on the server.
    Job(cluster::JobArgs),
    /// Converge your clusters on an environment file (YAML): create, amend, delete.
    Apply(apply::ApplyArgs),
    /// Show what `corral apply FILE` would change, changing nothing.
    Plan(apply::PlanArgs),
    /// Your tenant's providers: credentials and checks.
    Provider(provider::ProviderArgs),
    /// Your tenant's lifecycle hooks: HTTP endpoints told of jobs, or asked first.
    Hook(hook::HookArgs),
    /// Your own SSH keys, which Corral puts on your clusters' nodes.
    User(user::UserArgs),
    /// Your tenant's user groups (tenant admins): templates may be limited to them.
    Group(approval::GroupArgs),
    /// Approval rules, and the creates and grows that wait for a decision.
    Approval(approval::ApprovalArgs),
    /// Your tenant's monthly budget (tenant admins).
    Budget(cost::BudgetArgs),
    /// What your tenant's clusters cost in a month, per user and per template.
    Showback(cost::ShowbackArgs),
    /// Print a shell completion script for corral.
    Completions(manual::CompletionsArgs),
    /// Print corral's manual page (or write one per command with --out-dir).
    Man(manual::ManArgs),
}

/// Runs an async command body on a fresh multi-threaded runtime.
pub(crate) fn block_on<F: std::future::Future<Output = anyhow::Result<ExitCode>>>(
    body: F,
) -> anyhow::Result<ExitCode> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?
        .block_on(body)
}

/// Runs a long-lived command (`serve`, `worker`) with logging and, when configured,
/// traces: set up before the runtime starts and flushed after it ended, because the
/// trace exporter's HTTP client blocks.
fn with_telemetry<F: std::future::Future<Output = anyhow::Result<ExitCode>>>(
    config: Config,
    role: &'static str,
    body: impl FnOnce(Config) -> F,
) -> anyhow::Result<ExitCode> {
    let telemetry =
        crate::telemetry::init(config.log_format, config.otlp_traces_url.as_ref(), role)?;
    let ended = block_on(body(config));
    telemetry.shutdown();
    ended
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve(args) => {
            let config = Config::load(args)?;
            with_telemetry(config, "serve", |config| async move {
                crate::serve::serve(config).await?;
                Ok(ExitCode::SUCCESS)
            })
        }
        Command::Worker(args) => {
            let config = Config::load(args.server)?;
            with_telemetry(config, "worker", |config| async move {
                crate::workers::run_worker(config, &args.tenants).await?;
                Ok(ExitCode::SUCCESS)
            })
        }
        Command::Migrate(args) => block_on(async move {
            let config = Config::load(args)?;
            // Logs only: a migration is not worth a trace.
            crate::telemetry::init(config.log_format, None, "migrate")?.shutdown();
            let store = crate::serve::open_store(&config).await?;
            let status = store.migration_status().await?;
            println!(
                "migrations: {} of {} applied on {}",
                status.applied,
                status.known,
                config.database_url.redacted()
            );
            Ok(ExitCode::SUCCESS)
        }),
        Command::Admin(command) => block_on(admin::run(command)),
        Command::Catalog(args) => catalog::run(args),
        Command::Login(args) => block_on(login::login(args)),
        Command::Logout => block_on(login::logout()),
        Command::Cluster(args) => block_on(cluster::run(args)),
        Command::Job(args) => block_on(cluster::run_job(args)),
        Command::Apply(args) => block_on(apply::apply(args)),
        Command::Plan(args) => block_on(apply::plan(args)),
        Command::Provider(args) => block_on(provider::run(args)),
        Command::Hook(args) => block_on(hook::run(args)),
        Command::User(args) => block_on(user::run(args)),
        Command::Group(args) => block_on(approval::run_group(args)),
        Command::Approval(args) => block_on(approval::run_approval(args)),
        Command::Budget(args) => block_on(cost::run_budget(args)),
        Command::Showback(args) => block_on(cost::run_showback(args)),
        Command::Completions(args) => manual::completions(args),
        Command::Man(args) => manual::man(args),
    }
}
