//! Command-line interface: `corral serve`, `corral migrate`, ...

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
    /// Apply pending database migrations and exit.
    Migrate(ServerArgs),
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        match cli.command {
            Command::Serve(args) => {
                let config = Config::load(args)?;
                crate::telemetry::init(config.log_format);
                crate::serve::serve(config).await?;
            }
            Command::Migrate(args) => {
                let config = Config::load(args)?;
                crate::telemetry::init(config.log_format);
                let store = crate::serve::open_store(&config).await?;
                let status = store.migration_status().await?;
                println!(
                    "migrations: {} of {} applied on {}",
                    status.applied,
                    status.known,
                    config.database_url.redacted()
                );
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}
