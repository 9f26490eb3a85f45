//! A small HTTP client of the API: bearer authentication, JSON in and out, and API
//! errors (`{error, message, details}`) turned into one readable message.

use std::path::PathBuf;

use anyhow::{bail, Context};
use api_types::ErrorBody;
use reqwest::Method;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// An API client for one server, authenticated by a token (or not yet). Clones share
/// one connection pool.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    server: String,
    token: Option<String>,
}

impl Client {
    /// A client of `server`; an `https://` server must present a certificate the
    /// system trusts, or one issued by `ca_cert` (PEM) when given.
    pub fn new(server: &str, token: Option<String>, ca_cert: Option<&str>) -> anyhow::Result<Self> {
        let server = server.trim_end_matches('/').to_owned();
        if !(server.starts_with("http://") || server.starts_with("https://")) {
            bail!("the server must be an http:// or https:// URL, not {server:?}");
        }
        let mut http = reqwest::Client::builder().cookie_store(true);
        if let Some(pem) = ca_cert {
            let certificates = reqwest::Certificate::from_pem_bundle(pem.as_bytes())
                .context("the CA certificate is not valid PEM")?;
            if certificates.is_empty() {
                bail!("the CA certificate file holds no PEM certificate");
            }
            for certificate in certificates {
                http = http.add_root_certificate(certificate);
            }
        }
        let http = http.build()?;
        Ok(Self {
            http,
            server,
            token,
        })
    }

    pub fn signed_in() -> anyhow::Result<Self> {
        let credentials = Credentials::load()?;
        Self::for_credentials(&credentials)
    }

    pub fn for_credentials(credentials: &Credentials) -> anyhow::Result<Self> {
        Self::new(
            &credentials.server,
            Some(credentials.token.clone()),
            credentials.ca_cert.as_deref(),
        )
    }

    /// Sends a request and returns the JSON answer (`Null` for an empty one).
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> anyhow::Result<Value> {
        let mut request = self.request(method, path);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        self.answer(request).await
    }

    /// POSTs raw bytes (a plugin resource upload) and returns the JSON answer.
    pub async fn post_bytes(&self, path: &str, bytes: Vec<u8>) -> anyhow::Result<Value> {
        let request = self
            .request(Method::POST, path)
            .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
            .body(bytes);
        self.answer(request).await
    }

    /// PUTs `json` as it is (not re-encoded: credentials are sent exactly as given and
    /// never pass through a `Value` that could end up in an error) and reads the answer
    /// as `T`.
    pub async fn put_json_text<T: DeserializeOwned>(
        &self,
        path: &str,
        json: String,
    ) -> anyhow::Result<T> {
        let request = self
            .request(Method::PUT, path)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(json);
        typed(path, self.answer(request).await?)
    }

    /// A request to `path` on the server, with this client's token.
    fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        let request = self.http.request(method, format!("{}{path}", self.server));
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    /// Sends `request`: the JSON answer of a success, or an error saying what the server
    /// refused and why (each problem on its own line).
    async fn answer(&self, request: reqwest::RequestBuilder) -> anyhow::Result<Value> {
        let response = request.send().await.map_err(|error| {
            let error = anyhow::Error::new(error);
            // rustls names the problem ("invalid peer certificate: UnknownIssuer");
            // what to do about it is ours to say.
            let hint = if format!("{error:#}").contains("certificate") {
                " (a server whose certificate a private CA issued needs `corral login --ca-cert FILE`)"
            } else {
                ""
            };
            error.context(format!("cannot reach {}{hint}", self.server))
        })?;
        let status = response.status();
        let text = response.text().await?;
        if status.is_success() {
            return Ok(if text.is_empty() {
                Value::Null
            } else {
                serde_json::from_str(&text).context("the server sent invalid JSON")?
            });
        }
        bail!(self.refusal(status, &text))
    }

    /// Opens a WebSocket to `path` (an HTTP/1.1 upgrade, with this client's token and
    /// TLS settings): the upgraded connection, for a WebSocket client without a
    /// handshake of its own.
    pub async fn websocket(&self, path: &str) -> anyhow::Result<reqwest::Upgraded> {
        use base64::Engine as _;
        use rand_core::RngCore as _;
        let mut nonce = [0u8; 16];
        rand_core::OsRng.fill_bytes(&mut nonce);
        let request = self
            .request(Method::GET, path)
            .header(reqwest::header::CONNECTION, "Upgrade")
            .header(reqwest::header::UPGRADE, "websocket")
            .header("Sec-WebSocket-Version", "13")
            .header(
                "Sec-WebSocket-Key",
                base64::engine::general_purpose::STANDARD.encode(nonce),
            );
        let response = request
            .send()
            .await
            .with_context(|| format!("cannot reach {}", self.server))?;
        let status = response.status();
        if status != reqwest::StatusCode::SWITCHING_PROTOCOLS {
            let text = response.text().await.unwrap_or_default();
            bail!(self.refusal(status, &text));
        }
        response
            .upgrade()
            .await
            .context("the server did not switch to a WebSocket")
    }

    /// What the server refused and why (each problem on its own line), from its answer.
    fn refusal(&self, status: reqwest::StatusCode, text: &str) -> String {
        let mut message = match serde_json::from_str::<ErrorBody>(text) {
            Ok(error) => {
                let mut message = format!("{} ({status})", error.message);
                for problem in error.details {
                    message.push_str(&format!("\n  {}: {}", problem.path, problem.message));
                }
                message
            }
            // Not Corral's error body (a proxy's page, say): show what came.
            Err(_) => format!("{status}: {}", text.trim()),
        };
        if status == reqwest::StatusCode::UNAUTHORIZED && self.token.is_some() {
            message.push_str("\nsign in again with `corral login`");
        }
        message
    }

    /// GETs `path` and reads the answer as `T`, a type of the wire contract.
    pub async fn get_as<T: DeserializeOwned>(&self, path: &str) -> anyhow::Result<T> {
        typed(path, self.get(path).await?)
    }

    /// POSTs `body` to `path` and reads the answer as `T`.
    pub async fn post_as<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> anyhow::Result<T> {
        let body = serde_json::to_value(body)?;
        typed(path, self.post(path, &body).await?)
    }

    /// PUTs `body` to `path` and reads the answer as `T`.
    pub async fn put_as<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> anyhow::Result<T> {
        let body = serde_json::to_value(body)?;
        typed(path, self.send(Method::PUT, path, Some(&body), &[]).await?)
    }

    /// DELETEs `path` and reads the answer as `T`.
    pub async fn delete_as<T: DeserializeOwned>(&self, path: &str) -> anyhow::Result<T> {
        typed(path, self.delete(path).await?)
    }

    pub async fn get(&self, path: &str) -> anyhow::Result<Value> {
        self.send(Method::GET, path, None, &[]).await
    }

    pub async fn post(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        self.send(Method::POST, path, Some(body), &[]).await
    }

    pub async fn delete(&self, path: &str) -> anyhow::Result<Value> {
        self.send(Method::DELETE, path, None, &[]).await
    }
}

/// An answer read as the contract's type; a mismatch means the server runs another
/// version of Corral than this CLI.
fn typed<T: DeserializeOwned>(path: &str, answer: Value) -> anyhow::Result<T> {
    serde_json::from_value(answer).with_context(|| {
        format!("the answer to {path} is not what this version of corral reads: is the server the same version?")
    })
}
