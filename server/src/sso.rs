//! Single sign-on with OpenID Connect: the authorization code flow with PKCE, state
//! and nonce, for the browser (`/auth/sso/NAME/start` → the issuer → `/auth/sso/NAME/
//! callback` → a signed-in session) and for `corral login --sso` (the same flow, whose
//! end hands a one-time code to the CLI listening on 127.0.0.1, which trades it for an
//! API token at `/auth/sso/cli-token`).
//!
//! Each start stores its state, nonce and PKCE verifier in the browser's session
//! (server side: the cookie holds only the session id); the callback takes the entry
//! whose state it carries out of the session before doing anything else, so a state
//! works once and only in the browser that started it, and the verifier never leaves
//! the server but to the issuer's token endpoint. The issuer's ID token is checked by
//! [`token::validate`]; its claim (`groups` by default) picks the tenant and role by
//! the operator's rules at every sign-in ([`engine::accounts::sign_in_sso`]).
//! Refusals are a plain page saying what went wrong and where to go, with 4xx/5xx.

pub mod config;
pub mod provider;
pub mod token;

use std::sync::Arc;

use api_types::{SsoCliToken, SsoCliTokenRequest};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use engine::accounts::{sign_in_sso, username_from_claim, SsoAccountError, SsoSignIn, TokenSecret};
use engine::principal::Principal;
use engine::secrets::SecretKey;
use engine::service::Caller;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tower_sessions::Session;

use crate::api::extract::{SessionData, SESSION_USER};
use crate::http::AppState;
use config::IssuerSettings;
use provider::{Issuer, IssuerError};

/// The configured issuers, in the config file's order (the login page's buttons).
#[derive(Debug, Clone, Default)]
pub struct Sso(Arc<Vec<Issuer>>);

impl Sso {
    /// Opens each issuer's sealed client secret with the server's key.
    pub fn new(settings: &[IssuerSettings], key: &SecretKey) -> anyhow::Result<Self> {
        config::check_all(settings)?;
        let issuers = settings
            .iter()
            .map(|settings| {
                let secret = key
                    .open(
                        &settings.client_secret,
                        &config::secret_context(&settings.name),
                    )
                    .map_err(|error| anyhow::anyhow!("sso issuer {}: {error}", settings.name))?;
                Issuer::new(settings.clone(), secret)
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Self(Arc::new(issuers)))
    }

    fn issuer(&self, name: &str) -> Option<&Issuer> {
        self.0.iter().find(|issuer| issuer.settings.name == name)
    }

    /// (name, label) of each issuer, for the login page.
    pub fn buttons(&self) -> Vec<(String, String)> {
        self.0
            .iter()
            .map(|issuer| {
                (
                    issuer.settings.name.clone(),
                    issuer.settings.label().to_owned(),
                )
            })
            .collect()
    }
}

/// The session key of the sign-ins started in this browser.
const PENDING_KEY: &str = "corral.sso.pending";
/// How long a started sign-in may take at the issuer.
const PENDING_TTL_MS: i64 = 10 * 60 * 1000;
/// Sign-ins one browser may have under way at once (several tabs).
const MAX_PENDING: usize = 5;
/// How long the CLI has to trade its one-time code.
const CLI_CODE_TTL_MS: i64 = 2 * 60 * 1000;
/// How long a `corral login --sso` token lives without being used (as `corral login`).
const CLI_TOKEN_IDLE_SECS: u64 = 30 * 24 * 3600;

/// A sign-in started in this browser, waiting for the issuer to send it back.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Pending {
    issuer: String,
    state: String,
    nonce: String,
    verifier: String,
    next: Option<String>,
    cli: Option<CliRequest>,
    started_at_ms: i64,
}

/// What `corral login --sso` asked for: where it listens, its own state and its PKCE
/// challenge (so only the process that started the sign-in can trade the code).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct CliRequest {
    port: u16,
    state: String,
    challenge: String,
}

/// The routes under `/auth/sso`.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/{name}/start", get(start))
        .route("/{name}/callback", get(callback))
        .route("/cli-token", post(cli_token))
}

fn random_token() -> String {
    // A Corral token minus its prefix: 256 bits from the OS, URL-safe.
    TokenSecret::generate()
        .expose()
        .trim_start_matches("corral_")
        .to_owned()
}

fn challenge_of(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

#[derive(Debug, Deserialize)]
struct StartQuery {
    next: Option<String>,
    cli_port: Option<u16>,
    cli_state: Option<String>,
    cli_challenge: Option<String>,
}

async fn start(
    State(state): State<AppState>,
    Path(name): Path<String>,
    session: Session,
    Query(query): Query<StartQuery>,
) -> Response {
    let Some(issuer) = state.sso.issuer(&name) else {
        return no_such_issuer(&name);
    };
    let cli = match (query.cli_port, query.cli_state, query.cli_challenge) {
        (None, None, None) => None,
        (Some(port), Some(cli_state), Some(challenge))
            if port > 0 && is_token_like(&cli_state) && is_token_like(&challenge) =>
        {
            Some(CliRequest {
                port,
                state: cli_state,
                challenge,
            })
        }
        _ => {
            return refusal(
                StatusCode::BAD_REQUEST,
                "Sign-in refused",
                "This command-line sign-in link is incomplete: start again with corral login --sso.",
            );
        }
    };
    let pending = Pending {
        issuer: name.clone(),
        state: random_token(),
        nonce: random_token(),
        verifier: random_token(),
        next: query.next,
        cli,
        started_at_ms: engine::store::now_ms(),
    };
    let url = match issuer
        .authorization_url(
            &pending.state,
            &pending.nonce,
            &challenge_of(&pending.verifier),
        )
        .await
    {
        Ok(url) => url,
        Err(error) => {
            tracing::warn!(issuer = %name, %error, "single sign-on cannot start");
            return refusal(
                StatusCode::BAD_GATEWAY,
                "Sign-in unavailable",
                &format!(
                    "Signing in with {} is not possible right now: {error}.",
                    issuer.settings.label()
                ),
            );
        }
    };
    let mut all = pending_sign_ins(&session).await;
    all.push(pending);
    let skip = all.len().saturating_sub(MAX_PENDING);
    let kept: Vec<Pending> = all.into_iter().skip(skip).collect();
    if let Err(error) = session.insert(PENDING_KEY, &kept).await {
        tracing::error!(%error, "single sign-on state not saved");
        return internal();
    }
    Redirect::to(url.as_str()).into_response()
}

/// The sign-ins under way in this session that have not timed out.
async fn pending_sign_ins(session: &Session) -> Vec<Pending> {
    let now = engine::store::now_ms();
    let all: Vec<Pending> = session
        .get(PENDING_KEY)
        .await
        .ok()
        .flatten()
        .unwrap_or_default();
    all.into_iter()
        .filter(|pending| now - pending.started_at_ms < PENDING_TTL_MS)
        .collect()
}

/// URL-safe base64 of a reasonable length: what states and challenges look like.
fn is_token_like(text: &str) -> bool {
    (16..=128).contains(&text.len())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
}

#[derive(Debug, Deserialize)]
struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

async fn callback(
    State(app): State<AppState>,
    Path(name): Path<String>,
    session: Session,
    Query(query): Query<CallbackQuery>,
) -> Response {
    let Some(issuer) = app.sso.issuer(&name) else {
        return no_such_issuer(&name);
    };
    // Take this sign-in out of the session first: its state works once, whatever follows.
    let mut all = pending_sign_ins(&session).await;
    let found = query.state.as_deref().and_then(|state| {
        all.iter().position(|pending| {
            pending.issuer == name
                && token::constant_time_eq(pending.state.as_bytes(), state.as_bytes())
        })
    });
    let pending = found.map(|index| all.remove(index));
    if let Err(error) = session.insert(PENDING_KEY, &all).await {
        tracing::error!(%error, "single sign-on state not saved");
        return internal();
    }
    let Some(pending) = pending else {
        return refusal(
            StatusCode::BAD_REQUEST,
            "Sign-in refused",
            "This sign-in's state is unknown: it was used already, it timed out, or it was \
             started in another browser. Start again from the sign-in page.",
        );
    };
    if let Some(error) = query.error {
        let detail = query.error_description.unwrap_or_default();
        return refusal(
            StatusCode::FORBIDDEN,
            "Sign-in refused",
            &format!(
                "{} did not sign you in: {error} {detail}",
                issuer.settings.label()
            ),
        );
    }
    let Some(code) = query.code.filter(|code| !code.is_empty()) else {
        return refusal(
            StatusCode::BAD_REQUEST,
            "Sign-in refused",
            "The issuer sent no authorization code. Start again from the sign-in page.",
        );
    };
    let claims = match issuer
        .exchange(&code, &pending.verifier, &pending.nonce)
        .await
    {
        Ok(claims) => claims,
        Err(error) => {
            tracing::warn!(issuer = %name, %error, "single sign-on refused");
            let status = match error {
                IssuerError::Unreachable(_) | IssuerError::BadDocument { .. } => {
                    StatusCode::BAD_GATEWAY
                }
                IssuerError::CodeRefused(_) | IssuerError::Token(_) => StatusCode::BAD_REQUEST,
            };
            return refusal(
                status,
                "Sign-in refused",
                &format!(
                    "Signing in with {} failed: {error}. Start again from the sign-in page.",
                    issuer.settings.label()
                ),
            );
        }
    };
    let settings = &issuer.settings;
    let values = claim_values(claims.other.get(&settings.claim));
    let username = claims
        .other
        .get(&settings.username_claim)
        .or_else(|| claims.other.get("email"))
        .and_then(|value| value.as_str())
        .map(username_from_claim)
        .unwrap_or_default();
    let Some(rule) = settings.rule_for(&values) else {
        tracing::info!(issuer = %name, user = %username, "single sign-on: no rule matches");
        let shown = if values.is_empty() {
            format!("no {}", settings.claim)
        } else {
            format!("{}: {}", settings.claim, values.join(", "))
        };
        return refusal(
            StatusCode::FORBIDDEN,
            "No access to Corral",
            &format!(
                "You signed in at {} as {username}, but no rule of this Corral server gives \
                 access to your account ({shown}). Ask your Corral administrator to map one \
                 of your groups to a tenant.",
                settings.label()
            ),
        );
    };
    let sign_in = SsoSignIn {
        issuer: &settings.name,
        subject: &claims.sub,
        username: &username,
        tenant: &rule.tenant,
        role: rule.role,
        local_passwords: settings.local_passwords,
    };
    let user = match sign_in_sso(&app.store, &sign_in).await {
        Ok(user) => user,
        Err(SsoAccountError::Store(error)) => {
            tracing::error!(%error, "single sign-on user not stored");
            return internal();
        }
        Err(error) => {
            return refusal(
                StatusCode::FORBIDDEN,
                "No access to Corral",
                &format!("{error}."),
            );
        }
    };
    tracing::info!(issuer = %name, user = %user.username, role = %user.role, "signed in with single sign-on");
    if let Some(cli) = pending.cli {
        return hand_to_cli(&app, &user, &cli).await;
    }
    // A new id on every sign-in: an id planted before sign-in is worth nothing after.
    if session.cycle_id().await.is_err() {
        return internal();
    }
    let data = SessionData {
        user: engine::service::SessionUser {
            epoch: user.session_epoch,
            user_id: user.id.clone(),
        },
        csrf: TokenSecret::generate().expose().to_owned(),
        signed_in_at_ms: engine::store::now_ms(),
    };
    if let Err(error) = session.insert(SESSION_USER, &data).await {
        tracing::error!(%error, "session not saved");
        return internal();
    }
    Redirect::to(&app::server_fns::session::login::landing(
        pending.next.as_deref(),
    ))
    .into_response()
}

/// A claim's values: a string, or a list's strings.
fn claim_values(claim: Option<&serde_json::Value>) -> Vec<String> {
    match claim {
        Some(serde_json::Value::String(value)) => vec![value.clone()],
        Some(serde_json::Value::Array(values)) => values
            .iter()
            .filter_map(|value| value.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// Ends a CLI sign-in in the browser: a one-time code, sent to the CLI's loopback
/// listener (only ever 127.0.0.1: the port is all the CLI chooses).
async fn hand_to_cli(
    app: &AppState,
    user: &engine::store::users::User,
    cli: &CliRequest,
) -> Response {
    let code = random_token();
    let hash = TokenSecret::parse(&format!("corral_{code}")).map(|secret| secret.sha256_hex());
    let Some(hash) = hash else {
        return internal();
    };
    let expires = engine::store::now_ms() + CLI_CODE_TTL_MS;
    if let Err(error) = app
        .store
        .create_sso_cli_code(&hash, &user.id, &cli.challenge, expires)
        .await
    {
        tracing::error!(%error, "one-time code not stored");
        return internal();
    }
    let target = format!(
        "http://127.0.0.1:{}/callback?code={code}&state={}",
        cli.port, cli.state
    );
    Redirect::to(&target).into_response()
}

/// Trades a one-time code (with the CLI's PKCE verifier) for an API token.
async fn cli_token(
    State(app): State<AppState>,
    crate::api::extract::ClientAddress(address): crate::api::extract::ClientAddress,
    Json(request): Json<SsoCliTokenRequest>,
) -> Response {
    let refused = |message: &str| {
        (
            StatusCode::BAD_REQUEST,
            Json(serde_json::json!({"error": "invalid_grant", "message": message})),
        )
            .into_response()
    };
    let Some(secret) = TokenSecret::parse(&format!("corral_{}", request.code)) else {
        return refused("the one-time code is not one of this server's");
    };
    let taken = match app.store.take_sso_cli_code(&secret.sha256_hex()).await {
        Ok(taken) => taken,
        Err(error) => {
            tracing::error!(%error, "one-time code not read");
            return internal();
        }
    };
    let Some(taken) = taken else {
        return refused(
            "the one-time code is unknown or was used already; run corral login --sso again",
        );
    };
    if taken.expires_at_ms < engine::store::now_ms() {
        return refused("the one-time code has expired; run corral login --sso again");
    }
    if !token::constant_time_eq(
        challenge_of(&request.code_verifier).as_bytes(),
        taken.challenge.as_bytes(),
    ) {
        return refused("the code verifier does not match the sign-in's challenge");
    }
    let user = match app.store.user(&taken.user_id).await {
        Ok(user) => user,
        Err(error) => {
            tracing::error!(%error, "user of a one-time code not read");
            return internal();
        }
    };
    let caller = Caller::new(Principal::from_user(&user), address);
    let name = request
        .token_name
        .unwrap_or_else(|| "corral CLI (single sign-on)".to_owned());
    let created = app
        .service
        .create_token(
            &caller,
            &api_types::TokenRequest {
                name,
                expires_in_seconds: Some(CLI_TOKEN_IDLE_SECS),
                renew_on_use: true,
                scope: Default::default(),
            },
        )
        .await;
    match created {
        Ok(created) => Json(SsoCliToken {
            username: user.username,
            token_id: created.token.id,
            token: created.secret,
        })
        .into_response(),
        Err(error) => refused(&error.to_string()),
    }
}

/// The page for a path naming no configured issuer (start and callback both take one).
fn no_such_issuer(name: &str) -> Response {
    refusal(
        StatusCode::NOT_FOUND,
        "No such sign-in",
        &format!("This server has no single sign-on issuer named \"{name}\"."),
    )
}

fn internal() -> Response {
    refusal(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Sign-in failed",
        "Something went wrong on this server; the log says what. Try again later.",
    )
}

/// A plain page saying why, with a way back to the sign-in page.
fn refusal(status: StatusCode, title: &str, message: &str) -> Response {
    let page = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · Corral</title></head><body><main class=\"card narrow\">\
         <h1>{title}</h1><p id=\"sso-message\">{message}</p>\
         <p><a href=\"/login\">Back to the sign-in page</a></p></main></body></html>",
        title = escape(title),
        message = escape(message),
    );
    (status, Html(page)).into_response()
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}

/// For the login page: the buttons, as the app reads them from its context.
pub fn app_buttons(sso: &Sso) -> app::server_fns::session::sso::SsoButtons {
    app::server_fns::session::sso::SsoButtons(
        sso.buttons()
            .into_iter()
            .map(|(name, label)| app::server_fns::session::sso::SsoButton { name, label })
            .collect(),
    )
}
