//! What `corral login` keeps (the server, the API token, a private CA) and the API
//! client every later command makes of it (the client itself is `api_client`'s).

use std::path::PathBuf;

use anyhow::Context;
use api_client::Client;
use serde::{Deserialize, Serialize};

/// What `corral login` saves.
#[derive(Serialize, Deserialize)]
pub struct Credentials {
    pub server: String,
    pub username: String,
    pub token_id: String,
    pub token: String,
    /// The private certificate authority (PEM) `corral login --ca-cert` was told to
    /// trust for this server, kept so every later command trusts it too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_cert: Option<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("server", &self.server)
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

/// Where the credentials live.
pub fn config_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CORRAL_CONFIG_DIR") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CONFIG_HOME") {
        return Ok(PathBuf::from(dir).join("corral"));
    }
    let home = std::env::var_os("HOME").context("neither CORRAL_CONFIG_DIR nor HOME is set")?;
    Ok(PathBuf::from(home).join(".config").join("corral"))
}

fn credentials_path() -> anyhow::Result<PathBuf> {
    Ok(config_dir()?.join("cli.toml"))
}

impl Credentials {
    pub fn load() -> anyhow::Result<Self> {
        let path = credentials_path()?;
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "not signed in ({} is missing): run `corral login --server URL --username NAME --password-stdin`",
                path.display()
            )
        })?;
        toml::from_str(&text).with_context(|| format!("{} is not valid", path.display()))
    }

    /// Writes the file readable by its owner only (0600), replacing any other.
    pub fn save(&self) -> anyhow::Result<PathBuf> {
        use std::io::Write;
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let path = credentials_path()?;
        let dir = path.parent().context("credentials path has no directory")?;
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let text = toml::to_string(self)?;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)
            .with_context(|| format!("cannot write {}", path.display()))?;
        // An existing file keeps its old mode through open(): set it explicitly.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        file.write_all(text.as_bytes())?;
        Ok(path)
    }

    pub fn remove() -> anyhow::Result<()> {
        let path = credentials_path()?;
        match std::fs::remove_file(&path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                Err(error).with_context(|| format!("cannot remove {}", path.display()))
            }
            _ => Ok(()),
        }
    }
}

/// The client of the server `corral login` signed in to, with its token.
pub fn signed_in() -> anyhow::Result<Client> {
    client_for(&Credentials::load()?)
}

/// The client of `credentials`' server, with their token and CA.
pub fn client_for(credentials: &Credentials) -> anyhow::Result<Client> {
    Client::new(
        &credentials.server,
        Some(credentials.token.clone()),
        credentials.ca_cert.as_deref(),
    )
}
