//! `corral provider ...`: a tenant's providers on the server: their credentials (set
//! from a file or standard input, never from the command line, where every user of the
//! machine could read them in the process list) and the provider check.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use api_types::{PhaseOutcome, ProviderCredentialsView, ProviderTestReport, ProviderTestRequest};
use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub struct ProviderArgs {
    #[command(subcommand)]
    pub command: ProviderCommand,
}

#[derive(Debug, Subcommand)]
pub enum ProviderCommand {
    /// Set, show or remove your tenant's credentials for a provider (with --mine: your
    /// own, where the provider takes users' own).
    #[command(subcommand)]
    Credentials(CredentialsCommand),
    /// Check a provider: its credentials and endpoint, and with --create one machine
    /// made, reached over SSH and deleted. Exits non-zero when a phase fails.
    Test(TestArgs),
}

#[derive(Debug, Subcommand)]
pub enum CredentialsCommand {
    /// Set (or replace) the credentials: a JSON object of strings, e.g.
    /// {"access_key_id": "...", "secret_access_key": "..."} for ec2.
    Set(SetArgs),
    /// Show which credential fields are set (never their values).
    Show {
        provider: String,
        #[command(flatten)]
        whose: Whose,
    },
    /// Remove the credentials.
    Delete {
        provider: String,
        #[command(flatten)]
        whose: Whose,
    },
}

#[derive(Debug, Args)]
pub struct Whose {
    /// Your own credentials rather than the tenant's, for a provider that takes users'
    /// own (`"user_credentials": true`): nodes made by jobs you ask for use them.
    #[arg(long)]
    pub mine: bool,
}

#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub struct CredentialsSource {
    /// Read the JSON object from this file.
    #[arg(long, value_name = "FILE")]
    pub from_file: Option<PathBuf>,
    /// Read the JSON object from standard input.
    #[arg(long)]
    pub stdin: bool,
}

#[derive(Debug, Args)]
pub struct SetArgs {
    pub provider: String,
    #[command(flatten)]
    pub source: CredentialsSource,
    #[command(flatten)]
    pub whose: Whose,
}

#[derive(Debug, Args)]
pub struct TestArgs {
    pub provider: String,
    /// Also make one machine, reach it and delete it.
    #[arg(long)]
    pub create: bool,
    /// The machine's hardware type (default: the first mapped to the provider).
    #[arg(long, alias = "hardwaretype", requires = "create")]
    pub hardware: Option<String>,
    /// The machine's image type (default: the first mapped to the provider).
    #[arg(long, alias = "imagetype", requires = "create")]
    pub image: Option<String>,
}

pub async fn run(args: ProviderArgs) -> anyhow::Result<ExitCode> {
    let client = super::remote::signed_in()?;
    match args.command {
        ProviderCommand::Credentials(CredentialsCommand::Set(args)) => {
            let json = match &args.source.from_file {
                Some(path) => std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read {}", path.display()))?,
                None => {
                    let mut input = String::new();
                    std::io::stdin()
                        .read_to_string(&mut input)
                        .context("cannot read the credentials from standard input")?;
                    input
                }
            };
            let view: ProviderCredentialsView = client
                .put_json_text(&credentials_path(&args.provider, &args.whose), json)
                .await?;
            print_credentials(&view);
            Ok(ExitCode::SUCCESS)
        }
        ProviderCommand::Credentials(CredentialsCommand::Show { provider, whose }) => {
            print_credentials(&client.get(&credentials_path(&provider, &whose)).await?);
            Ok(ExitCode::SUCCESS)
        }
        ProviderCommand::Credentials(CredentialsCommand::Delete { provider, whose }) => {
            let view: ProviderCredentialsView =
                client.delete(&credentials_path(&provider, &whose)).await?;
            print_credentials(&view);
            Ok(ExitCode::SUCCESS)
        }
        ProviderCommand::Test(args) => {
            let request = ProviderTestRequest {
                create: args.create,
                hardwaretype: args.hardware,
                imagetype: args.image,
            };
            println!(
                "testing provider {}{}…",
                args.provider,
                if request.create {
                    " (with one machine)"
                } else {
                    ""
                }
            );
            let report: ProviderTestReport = client
                .post(
                    &format!("/api/v1/providers/{}/test", args.provider),
                    &request,
                )
                .await?;
            for phase in &report.phases {
                let outcome = match phase.outcome {
                    PhaseOutcome::Passed => "ok",
                    PhaseOutcome::Failed => "FAILED",
                    PhaseOutcome::Skipped => "skipped",
                };
                println!(
                    "{:<7} {:<8} {:>7.1} s  {}",
                    phase.phase,
                    outcome,
                    phase.elapsed_ms as f64 / 1000.0,
                    phase.detail
                );
            }
            if report.passed {
                println!(
                    "provider {} ({}) passed",
                    report.provider, report.providertype
                );
                Ok(ExitCode::SUCCESS)
            } else {
                println!(
                    "provider {} ({}) FAILED",
                    report.provider, report.providertype
                );
                Ok(ExitCode::FAILURE)
            }
        }
    }
}

fn credentials_path(provider: &str, whose: &Whose) -> String {
    let mine = if whose.mine { "/mine" } else { "" };
    format!("/api/v1/providers/{provider}/credentials{mine}")
}

fn print_credentials(view: &ProviderCredentialsView) {
    if view.set {
        println!(
            "provider {} ({}): credentials set, fields {}{}",
            view.provider,
            view.providertype,
            view.fields.join(", "),
            view.updated_by
                .as_deref()
                .map(|by| format!(" (by {by})"))
                .unwrap_or_default()
        );
    } else {
        println!(
            "provider {} ({}): no credentials set",
            view.provider, view.providertype
        );
    }
}
