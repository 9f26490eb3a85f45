//! Talking to one configured OpenID Connect issuer: its discovery document (read once,
//! on first use), its keys (JWKS: cached, fetched again once when a token names a key
//! the cache lacks, which is how issuers rotate keys) and its token endpoint (the
//! authorization code exchanged with the PKCE verifier).
//!
//! Network rule: the server only calls the discovery URL the operator configured and
//! the token and key endpoints its document names, which must be on the discovery
//! URL's host (or one the operator lists in `allowed-hosts`). No redirects are
//! followed, no proxy from the environment is used, every call has a 10 s timeout.
//! Tokens and the client secret never reach a log line or an error text.

use std::time::Duration;

use jsonwebtoken::jwk::JwkSet;
use serde::Deserialize;
use tokio::sync::{OnceCell, RwLock};

use super::config::IssuerSettings;
use super::token::{validate, Expected, IdClaims, TokenError};

const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a sign-in could not be finished with the issuer.
#[derive(Debug, thiserror::Error)]
pub enum IssuerError {
    #[error("the issuer could not be reached ({0})")]
    Unreachable(String),
    #[error("the issuer's {what} is not usable: {problem}")]
    BadDocument { what: &'static str, problem: String },
    #[error("the issuer refused the sign-in code ({0})")]
    CodeRefused(String),
    #[error(transparent)]
    Token(#[from] TokenError),
}

/// What Corral reads of the discovery document.
#[derive(Debug, Clone, Deserialize)]
pub struct Metadata {
    pub issuer: String,
    pub authorization_endpoint: url::Url,
    pub token_endpoint: url::Url,
    pub jwks_uri: url::Url,
}

/// One configured issuer, with its secret opened and its document and keys cached.
pub struct Issuer {
    pub settings: IssuerSettings,
    client_secret: String,
    http: reqwest::Client,
    metadata: OnceCell<Metadata>,
    keys: RwLock<Option<JwkSet>>,
}

impl std::fmt::Debug for Issuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Issuer")
            .field("name", &self.settings.name)
            .finish_non_exhaustive()
    }
}

impl Issuer {
    pub fn new(settings: IssuerSettings, client_secret: String) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(CALL_TIMEOUT)
            .build()?;
        Ok(Self {
            settings,
            client_secret,
            http,
            metadata: OnceCell::new(),
            keys: RwLock::new(None),
        })
    }

    /// The discovery document, read on first use and kept.
    pub async fn metadata(&self) -> Result<&Metadata, IssuerError> {
        self.metadata
            .get_or_try_init(|| async {
                let url = self.settings.discovery_document();
                let metadata: Metadata = self.get_json(url.clone(), "discovery document").await?;
                let expected_issuer = url
                    .as_str()
                    .trim_end_matches(".well-known/openid-configuration")
                    .trim_end_matches('/');
                if metadata.issuer.trim_end_matches('/') != expected_issuer {
                    return Err(IssuerError::BadDocument {
                        what: "discovery document",
                        problem: format!(
                            "it names the issuer {} but was read from {expected_issuer}",
                            metadata.issuer
                        ),
                    });
                }
                for (what, endpoint) in [
                    ("token endpoint", &metadata.token_endpoint),
                    ("jwks_uri", &metadata.jwks_uri),
                ] {
                    self.check_host(what, endpoint)?;
                }
                Ok(metadata)
            })
            .await
    }

    /// Whether `url` is on a host Corral may call for this issuer.
    fn check_host(&self, what: &'static str, url: &url::Url) -> Result<(), IssuerError> {
        let authority = |url: &url::Url| match url.port() {
            Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
            None => url.host_str().unwrap_or_default().to_owned(),
        };
        let discovery = &self.settings.discovery_url;
        let same = url.scheme() == discovery.scheme()
            && url.host_str() == discovery.host_str()
            && url.port_or_known_default() == discovery.port_or_known_default();
        let listed = self
            .settings
            .allowed_hosts
            .iter()
            .any(|host| *host == authority(url) || *host == url.host_str().unwrap_or_default());
        if same || (listed && matches!(url.scheme(), "https" | "http")) {
            return Ok(());
        }
        Err(IssuerError::BadDocument {
            what: "discovery document",
            problem: format!(
                "its {what} is on {}, neither the discovery URL's host nor one of allowed-hosts",
                authority(url)
            ),
        })
    }

    async fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        url: url::Url,
        what: &'static str,
    ) -> Result<T, IssuerError> {
        let response = self
            .http
            .get(url)
            .send()
            .await
            .map_err(|error| IssuerError::Unreachable(describe(error)))?;
        if !response.status().is_success() {
            return Err(IssuerError::BadDocument {
                what,
                problem: format!("status {}", response.status()),
            });
        }
        response
            .json()
            .await
            .map_err(|error| IssuerError::BadDocument {
                what,
                problem: describe(error),
            })
    }

    /// The address the browser is sent to, asking for a code for this sign-in.
    pub async fn authorization_url(
        &self,
        state: &str,
        nonce: &str,
        challenge: &str,
    ) -> Result<url::Url, IssuerError> {
        let metadata = self.metadata().await?;
        let mut url = metadata.authorization_endpoint.clone();
        let scopes = std::iter::once("openid")
            .chain(self.settings.scopes.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.settings.client_id)
            .append_pair("redirect_uri", self.settings.redirect_uri.as_str())
            .append_pair("scope", &scopes)
            .append_pair("state", state)
            .append_pair("nonce", nonce)
            .append_pair("code_challenge", challenge)
            .append_pair("code_challenge_method", "S256");
        Ok(url)
    }

    /// Exchanges `code` (with the sign-in's PKCE verifier) for an ID token and checks
    /// it: signature against the issuer's keys, issuer, audience, expiry, `nonce`.
    pub async fn exchange(
        &self,
        code: &str,
        verifier: &str,
        nonce: &str,
    ) -> Result<IdClaims, IssuerError> {
        let metadata = self.metadata().await?;
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", self.settings.redirect_uri.as_str()),
            ("code_verifier", verifier),
        ];
        // client_secret_basic: both parts form-encoded first (RFC 6749 2.3.1).
        let encode =
            |text: &str| url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
        let response = self
            .http
            .post(metadata.token_endpoint.clone())
            .basic_auth(
                encode(&self.settings.client_id),
                Some(encode(&self.client_secret)),
            )
            .form(&form)
            .send()
            .await
            .map_err(|error| IssuerError::Unreachable(describe(error)))?;
        let status = response.status();
        let body: serde_json::Value = response.json().await.unwrap_or_default();
        if !status.is_success() {
            // The error code is the standard's word (invalid_grant...); the description
            // the issuer's text about this code, which holds no secret of ours.
            let code = body["error"].as_str().unwrap_or("no error code");
            let detail = body["error_description"].as_str().unwrap_or_default();
            return Err(IssuerError::CodeRefused(
                format!("{status}: {code} {detail}").trim().to_owned(),
            ));
        }
        let Some(id_token) = body["id_token"].as_str() else {
            return Err(IssuerError::BadDocument {
                what: "token response",
                problem: "it holds no id_token".to_owned(),
            });
        };
        self.check_token(id_token, nonce, metadata).await
    }

    async fn check_token(
        &self,
        id_token: &str,
        nonce: &str,
        metadata: &Metadata,
    ) -> Result<IdClaims, IssuerError> {
        let now_secs = engine::store::now_ms() / 1000;
        let expected = Expected {
            issuer: &metadata.issuer,
            client_id: &self.settings.client_id,
            nonce,
            now_secs,
        };
        let cached = self.keys.read().await.clone();
        let keys = match cached {
            Some(keys) => keys,
            None => self.fetch_keys(metadata).await?,
        };
        match validate(id_token, &keys, expected) {
            // Rotated: a key the cached set lacks. Fetch once more, then decide.
            Err(TokenError::UnknownKey { .. }) => {
                let fresh = self.fetch_keys(metadata).await?;
                Ok(validate(id_token, &fresh, expected)?)
            }
            other => Ok(other?),
        }
    }

    async fn fetch_keys(&self, metadata: &Metadata) -> Result<JwkSet, IssuerError> {
        let keys: JwkSet = self
            .get_json(metadata.jwks_uri.clone(), "key set (JWKS)")
            .await?;
        *self.keys.write().await = Some(keys.clone());
        Ok(keys)
    }
}

/// An HTTP client error without the URL's query (which may hold a code).
fn describe(error: reqwest::Error) -> String {
    error.without_url().to_string()
}
