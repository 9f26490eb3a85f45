//! `corral login` and `corral logout`: sign in with a password (or, with `--sso`,
//! through a single sign-on issuer in the browser) once, keep an API token for every
//! later command.

use std::io::Read;
use std::process::ExitCode;

use anyhow::Context;
use api_types::{LoginRequest, TokenRequest, TokenScope};
use clap::Args;

use super::remote::{Client, Credentials};

#[derive(Debug, Args)]
pub struct LoginArgs {
    /// The server's base URL, e.g. http://127.0.0.1:8080.
    #[arg(long)]
    pub server: String,
    #[arg(long, required_unless_present = "sso", conflicts_with = "sso")]
    pub username: Option<String>,
    /// Read the password from standard input (the only way: never on the command line).
    #[arg(long, required_unless_present = "sso", conflicts_with = "sso")]
    pub password_stdin: bool,
    /// Sign in through the server's single sign-on issuer NAME in a browser instead:
    /// Corral listens on 127.0.0.1 for the browser to come back, then keeps a token.
    #[arg(long, value_name = "NAME")]
    pub sso: Option<String>,
    /// With --sso: only print the address to open, do not start a browser.
    #[arg(long, requires = "sso")]
    pub no_browser: bool,
    /// Trust this PEM certificate authority for an https:// server whose certificate
    /// it issued (a private CA); kept for later commands.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<std::path::PathBuf>,
}

/// How long a `corral login` token lives without being used.
const CLI_TOKEN_IDLE_SECS: u64 = 30 * 24 * 3600;

pub async fn login(args: LoginArgs) -> anyhow::Result<ExitCode> {
    if let Some(issuer) = &args.sso {
        return super::login_sso::login(&args, issuer).await;
    }
    let username = args.username.clone().unwrap_or_default();
    let mut password = String::new();
    std::io::stdin()
        .read_to_string(&mut password)
        .context("cannot read the password from standard input")?;
    let password = password.trim_end_matches(['\n', '\r']);
    let ca_cert = read_ca_cert(&args)?;
    let mut client = Client::new(&args.server, None, ca_cert.as_deref()).with_context(|| {
        match &args.ca_cert {
            Some(path) => format!("cannot use {}", path.display()),
            None => "cannot make an HTTP client".to_owned(),
        }
    })?;
    client
        .sign_in(&LoginRequest {
            username: username.clone(),
            password: password.to_owned(),
        })
        .await?;
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "cli".to_owned());
    let token = client
        .create_token(&TokenRequest {
            name: format!("corral CLI on {host}"),
            // Expires after 30 days without use; each use starts the 30 days again.
            expires_in_seconds: Some(CLI_TOKEN_IDLE_SECS),
            renew_on_use: true,
            scope: TokenScope::default(),
        })
        .await?;
    // The browser-style session is not needed any more.
    let _ = client.sign_out().await;
    let credentials = Credentials {
        server: args.server.trim_end_matches('/').to_owned(),
        username: username.clone(),
        token_id: token.token.id,
        token: token.secret,
        ca_cert,
    };
    let path = credentials.save()?;
    println!(
        "Signed in to {} as {} (token saved in {})",
        credentials.server,
        username,
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The PEM of `--ca-cert`, when given.
pub(super) fn read_ca_cert(args: &LoginArgs) -> anyhow::Result<Option<String>> {
    match &args.ca_cert {
        Some(path) => Ok(Some(std::fs::read_to_string(path).with_context(|| {
            format!("cannot read the CA certificate {}", path.display())
        })?)),
        None => Ok(None),
    }
}

/// Revokes the saved token and forgets it.
pub async fn logout() -> anyhow::Result<ExitCode> {
    let credentials = Credentials::load()?;
    let client = super::remote::client_for(&credentials)?;
    if let Err(error) = client.revoke_token(&credentials.token_id).await {
        eprintln!("warning: the token was not revoked on the server: {error}");
    }
    Credentials::remove()?;
    println!("Signed out of {}", credentials.server);
    Ok(ExitCode::SUCCESS)
}
