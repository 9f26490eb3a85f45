//! `corral admin ...`: straight against the database and the data directory: user
//! administration for the first setup and for recovery when nobody can sign in, and
//! backups of the embedded SQLite deployment (see `backup`).

use std::io::Read;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use engine::accounts::{create_user, Password};
use engine::store::users::Role;

use crate::config::{Config, ServerArgs};

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Create a user. The password is read from standard input.
    CreateUser(CreateUserArgs),
    /// Write the SQLite database, its secret key and the provider keys to one archive,
    /// while Corral runs.
    Backup(super::backup::BackupArgs),
    /// Replace the data directory's database and keys with a backup's (stop every
    /// serve and worker on it first).
    Restore(super::backup::RestoreArgs),
    /// Seal a single sign-on issuer's client secret (read from standard input) with
    /// this data dir's secret key; prints the value for `client-secret` of its
    /// `[[sso]]` table.
    SealSsoSecret(SealSsoSecretArgs),
}

#[derive(Debug, Args)]
pub struct SealSsoSecretArgs {
    /// The issuer's `name` in the config file (a sealed secret opens only there).
    pub name: String,
    #[command(flatten)]
    pub server: ServerArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RoleArg {
    Superadmin,
    TenantAdmin,
    User,
}

impl From<RoleArg> for Role {
    fn from(role: RoleArg) -> Self {
        match role {
            RoleArg::Superadmin => Role::Superadmin,
            RoleArg::TenantAdmin => Role::TenantAdmin,
            RoleArg::User => Role::User,
        }
    }
}

#[derive(Debug, Args)]
pub struct CreateUserArgs {
    /// Login name (a-z, 0-9, '.', '_', '-').
    pub name: String,
    #[arg(long, value_enum)]
    pub role: RoleArg,
    /// Tenant name [default: default].
    #[arg(long)]
    pub tenant: Option<String>,
    /// Read the password from standard input (required: passwords never go on the command line).
    #[arg(long, required = true)]
    pub password_stdin: bool,
    #[command(flatten)]
    pub server: ServerArgs,
}

pub async fn run(command: AdminCommand) -> anyhow::Result<ExitCode> {
    match command {
        AdminCommand::CreateUser(args) => {
            let mut input = String::new();
            std::io::stdin()
                .read_to_string(&mut input)
                .context("cannot read the password from standard input")?;
            // One trailing newline is what `echo` and here-strings add; it is not part of it.
            let password = Password::new(input.strip_suffix('\n').unwrap_or(&input));
            let config = Config::load(args.server)?;
            let store = crate::serve::open_store(&config).await?;
            let user = create_user(
                &store,
                &args.name,
                args.role.into(),
                args.tenant.as_deref(),
                &password,
            )
            .await?;
            println!("created {} {}", user.role, user.username);
            Ok(ExitCode::SUCCESS)
        }
        AdminCommand::Backup(args) => super::backup::backup(args).await,
        AdminCommand::Restore(args) => super::backup::restore(args).await,
        AdminCommand::SealSsoSecret(args) => {
            let mut input = String::new();
            std::io::stdin()
                .read_to_string(&mut input)
                .context("cannot read the client secret from standard input")?;
            let secret = input.trim_end_matches(['\n', '\r']);
            anyhow::ensure!(!secret.is_empty(), "no client secret on standard input");
            let config = Config::load(args.server)?;
            std::fs::create_dir_all(&config.data_dir).with_context(|| {
                format!(
                    "cannot create the data directory {}",
                    config.data_dir.display()
                )
            })?;
            let key = engine::secrets::SecretKey::load(&config.data_dir)?;
            println!(
                "{}",
                key.seal(secret, &crate::sso::config::secret_context(&args.name))?
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}
