//! `corral user keys add|list|remove`: the SSH public keys on your profile, which Corral
//! puts on the nodes of your clusters (docs/reaching-nodes.md), and `corral user
//! admin-keys on|off|show`: whether your tenant's admins' keys go on every cluster.

use std::io::Read as _;
use std::process::ExitCode;

use anyhow::Context as _;
use api_types::{AdminKeysSetting, KeySync, UserKeyRequest};
use clap::{Args, Subcommand, ValueEnum};

use super::remote::{print_json, Client, OutputArgs};

#[derive(Debug, Args)]
pub struct UserArgs {
    #[command(subcommand)]
    pub command: UserCommand,
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Your SSH public keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Whether your tenant's admins' keys go on every cluster of the tenant (tenant
    /// admins): `on`, `off`, or `show`.
    AdminKeys {
        #[arg(value_enum)]
        choice: AdminKeysChoice,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AdminKeysChoice {
    On,
    Off,
    Show,
}

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Keep a public key (a `.pub` file, or `-` for standard input) and put it on your
    /// clusters' nodes.
    Add {
        #[arg(value_name = "FILE")]
        file: String,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Your keys.
    List(OutputArgs),
    /// Take a key (by id or SHA256 fingerprint) off your profile and your clusters.
    Remove {
        #[arg(value_name = "KEY")]
        key: String,
        #[command(flatten)]
        output: OutputArgs,
    },
}

pub async fn run(args: UserArgs) -> anyhow::Result<ExitCode> {
    let client = super::remote::signed_in()?;
    match args.command {
        UserCommand::Keys(command) => keys(&client, command).await,
        UserCommand::AdminKeys { choice } => admin_keys(&client, choice).await,
    }
}

async fn keys(client: &Client, command: KeysCommand) -> anyhow::Result<ExitCode> {
    match command {
        KeysCommand::Add { file, output } => {
            let public_key = read_key(&file)?;
            let change = client.add_key(&UserKeyRequest { public_key }).await?;
            if output.json {
                print_json(&serde_json::to_value(&change)?);
            } else {
                if let Some(key) = &change.key {
                    println!(
                        "added {} {} {}",
                        key.fingerprint, key.algorithm, key.comment
                    );
                }
                print_syncs(&change.clusters);
            }
        }
        KeysCommand::List(output) => {
            let keys = client.keys().await?;
            if output.json {
                print_json(&serde_json::to_value(&keys)?);
            } else if keys.is_empty() {
                println!("no keys; add one with `corral user keys add ~/.ssh/id_ed25519.pub`");
            } else {
                for key in &keys {
                    println!(
                        "{}  {}  {}  {}",
                        key.id, key.fingerprint, key.algorithm, key.comment
                    );
                }
            }
        }
        KeysCommand::Remove { key, output } => {
            let keys = client.keys().await?;
            let id = keys
                .iter()
                .find(|candidate| candidate.id == key || candidate.fingerprint == key)
                .map_or(key.clone(), |found| found.id.clone());
            let change = client.remove_key(&id).await?;
            if output.json {
                print_json(&serde_json::to_value(&change)?);
            } else {
                println!("removed {key}");
                print_syncs(&change.clusters);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn admin_keys(client: &Client, choice: AdminKeysChoice) -> anyhow::Result<ExitCode> {
    let me = client.me().await?;
    let path = format!("/api/v1/tenants/{}/admin-keys", me.tenant_id);
    let on = match choice {
        AdminKeysChoice::Show => {
            let setting: AdminKeysSetting = client.get(&path).await?;
            println!("{}", describe(setting.admin_keys_on_all_clusters));
            return Ok(ExitCode::SUCCESS);
        }
        AdminKeysChoice::On => true,
        AdminKeysChoice::Off => false,
    };
    let synced: Vec<KeySync> = client
        .put(
            &path,
            &AdminKeysSetting {
                admin_keys_on_all_clusters: on,
            },
        )
        .await?;
    println!("{}", describe(on));
    print_syncs(&synced);
    Ok(ExitCode::SUCCESS)
}

fn describe(on: bool) -> &'static str {
    if on {
        "tenant admins' keys go on every cluster of the tenant"
    } else {
        "tenant admins' keys go on their own clusters only"
    }
}

fn read_key(file: &str) -> anyhow::Result<String> {
    let mut text = String::new();
    if file == "-" {
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the key from standard input")?;
    } else {
        text = std::fs::read_to_string(file).with_context(|| format!("cannot read {file}"))?;
    }
    Ok(text)
}

fn print_syncs(synced: &[KeySync]) {
    for sync in synced {
        match (&sync.job_id, &sync.note) {
            (Some(job), _) => println!("  {}: sync-keys job {job}", sync.cluster_name),
            (None, Some(note)) => println!("  {}: {note}", sync.cluster_name),
            (None, None) => println!("  {}", sync.cluster_name),
        }
    }
}
