//! Corral's API client: one client of a server's `/api/v1`, on the wire contract of
//! `api-types`, used by the `corral` CLI and the benchmarks.
//!
//! - [`Client::new`] reaches one server (`http://` or `https://`, trusting the system's
//!   roots and, when given, a private certificate authority), authenticated by an API
//!   token (the CLI) or, after [`Client::sign_in`], by a session cookie and its CSRF
//!   token (the benchmarks, and `corral login` before it has a token).
//! - Typed methods name what they do (`cluster`, `create_cluster`, `job`, `job_tasks`,
//!   `import_catalog`, ...) and return the contract's views; [`Client::get`],
//!   [`Client::post`], [`Client::put`] and [`Client::delete`] reach the rest of the API
//!   with the same typing, and the few answers without a view (a catalog bundle, which
//!   is free-form JSON) come back as [`serde_json::Value`].
//! - A refusal (`{error, message, details}`) becomes one readable error: the message,
//!   the status and each problem on its own line.
//!
//! What only the CLI needs (the credentials file, printing) stays in the CLI; what only
//! a benchmark needs (polling limits, load generators) stays in the benchmark, which can
//! reach the underlying [`reqwest::Client`] through [`Client::http`].

use anyhow::{bail, Context};
use api_types::{
    ApprovalDenial, ApprovalRuleRequest, ApprovalRuleView, ApprovalView, AuditView, BudgetRequest,
    BudgetView, ClusterChangeRequest, ClusterCreateRequest, ClusterDetail, ClusterList,
    ClusterView, CreatedHook, CreatedToken, DedicatedWorkersUpdate, DeliveryView, ErrorBody,
    EventView, GroupMemberRequest, GroupRequest, GroupView, HealingChoice, HealingView,
    HookRequest, HookView, ImportReport, JobView, LeaseExtension, LoginRequest, NodeCertificate,
    NodeCertificateRequest, Page, PinChoice, PlanView, ResourceView, RolloutRequest,
    RolloutStarted, RolloutView, SessionView, SsoCliToken, SsoCliTokenRequest, SubmittedJob,
    TaskView, TenantRequest, TenantView, TokenRequest, TokenView, UserKeyChange, UserKeyRequest,
    UserKeyView, UserRequest, UserView,
};
use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};
use reqwest::Method;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

pub use reqwest;

/// The header a session-cookie client sends its CSRF token in.
const CSRF_HEADER: &str = "x-csrf-token";

/// An API client for one server, authenticated by a token, a session, or not yet.
/// Clones share one connection pool (and cookie store).
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    server: String,
    token: Option<String>,
    /// The session's CSRF token, once [`Client::sign_in`] made one.
    csrf: Option<String>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
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
            csrf: None,
        })
    }

    /// A client of `server` signed in as `username` (a session cookie and its CSRF
    /// token), as the web pages are.
    pub async fn signed_in_as(
        server: &str,
        username: &str,
        password: &str,
    ) -> anyhow::Result<Self> {
        let mut client = Self::new(server, None, None)?;
        client
            .sign_in(&LoginRequest {
                username: username.to_owned(),
                password: password.to_owned(),
            })
            .await?;
        Ok(client)
    }

    /// The server's base URL, without a trailing slash.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The underlying HTTP client, with this client's cookies (a benchmark's load
    /// generator, an event stream read as it comes).
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// `path` on this client's server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server)
    }

    // Sessions and tokens.

    /// Signs in with a password: the session cookie is kept, and its CSRF token is sent
    /// with every later request.
    pub async fn sign_in(&mut self, request: &LoginRequest) -> anyhow::Result<SessionView> {
        let session: SessionView = self.post("/api/v1/session", request).await?;
        self.csrf = Some(session.csrf_token.clone());
        Ok(session)
    }

    /// Ends the session [`Client::sign_in`] started.
    pub async fn sign_out(&self) -> anyhow::Result<()> {
        self.send(Method::DELETE, "/api/v1/session", None::<&()>)
            .await
            .map(drop)
    }

    pub async fn create_token(&self, request: &TokenRequest) -> anyhow::Result<CreatedToken> {
        self.post("/api/v1/tokens", request).await
    }

    pub async fn revoke_token(&self, id: &str) -> anyhow::Result<TokenView> {
        self.delete(&format!("/api/v1/tokens/{}", segment(id)))
            .await
    }

    /// Trades a single sign-on one-time code (and the verifier of its challenge) for an
    /// API token.
    pub async fn sso_cli_token(&self, request: &SsoCliTokenRequest) -> anyhow::Result<SsoCliToken> {
        self.post("/auth/sso/cli-token", request).await
    }

    // Accounts.

    /// Who this client is.
    pub async fn me(&self) -> anyhow::Result<UserView> {
        self.get("/api/v1/me").await
    }

    pub async fn create_tenant(&self, request: &TenantRequest) -> anyhow::Result<TenantView> {
        self.post("/api/v1/tenants", request).await
    }

    pub async fn set_dedicated_workers(
        &self,
        tenant_id: &str,
        update: &DedicatedWorkersUpdate,
    ) -> anyhow::Result<TenantView> {
        self.put(
            &format!("/api/v1/tenants/{}/dedicated-workers", segment(tenant_id)),
            update,
        )
        .await
    }

    pub async fn create_user(&self, request: &UserRequest) -> anyhow::Result<UserView> {
        self.post("/api/v1/users", request).await
    }

    /// The audit log's entries; `query` is the query string without its `?`
    /// (`action=node.terminal`).
    pub async fn audit(&self, query: &str) -> anyhow::Result<Vec<AuditView>> {
        self.get(&format!("/api/v1/audit?{query}")).await
    }

    // The catalog and its plugin resources.

    /// The tenant's catalog as a bundle (free-form JSON: the catalog's own format).
    pub async fn catalog(&self) -> anyhow::Result<Value> {
        self.get("/api/v1/catalog").await
    }

    /// Imports a catalog bundle, or only checks it with `dry_run`.
    pub async fn import_catalog(
        &self,
        bundle: &Value,
        dry_run: bool,
    ) -> anyhow::Result<ImportReport> {
        let path = if dry_run {
            "/api/v1/catalog/import?dry_run=true"
        } else {
            "/api/v1/catalog/import"
        };
        self.post(path, bundle).await
    }

    /// The first `limit` plugin resource versions.
    pub async fn resources(&self, limit: u32) -> anyhow::Result<Page<ResourceView>> {
        self.get(&format!("/api/v1/resources?limit={limit}")).await
    }

    /// Uploads a new version of a plugin resource (not staged yet).
    pub async fn upload_resource(
        &self,
        kind: &str,
        name: &str,
        bytes: Vec<u8>,
    ) -> anyhow::Result<ResourceView> {
        let path = format!("/api/v1/resources/{}/{}", segment(kind), segment(name));
        let request = self
            .request(Method::POST, &path)
            .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
            .body(bytes);
        typed(&path, self.answer(request).await?)
    }

    /// Makes one version of a plugin resource the one nodes get.
    pub async fn stage_resource(
        &self,
        kind: &str,
        name: &str,
        version: i64,
    ) -> anyhow::Result<ResourceView> {
        let path = format!(
            "/api/v1/resources/{}/{}/versions/{version}/stage",
            segment(kind),
            segment(name)
        );
        typed(&path, self.send(Method::POST, &path, None::<&()>).await?)
    }

    // Clusters.

    /// One page of clusters; `query` is the list's query string without its `?`
    /// (`limit=500`, `cursor=...`).
    pub async fn clusters(&self, query: &str) -> anyhow::Result<ClusterList> {
        self.get(&format!("/api/v1/clusters?{query}")).await
    }

    /// A cluster by id or name, with its nodes, jobs and links.
    pub async fn cluster(&self, id: &str) -> anyhow::Result<ClusterDetail> {
        self.get(&format!("/api/v1/clusters/{}", segment(id))).await
    }

    pub async fn create_cluster(
        &self,
        request: &ClusterCreateRequest,
    ) -> anyhow::Result<SubmittedJob> {
        self.post("/api/v1/clusters", request).await
    }

    /// What creating the cluster would do, without doing it.
    pub async fn plan_create_cluster(
        &self,
        request: &ClusterCreateRequest,
    ) -> anyhow::Result<PlanView> {
        self.post("/api/v1/clusters?dry_run=true", request).await
    }

    pub async fn change_cluster(
        &self,
        id: &str,
        change: &ClusterChangeRequest,
    ) -> anyhow::Result<SubmittedJob> {
        self.post(&format!("/api/v1/clusters/{}/changes", segment(id)), change)
            .await
    }

    /// What the change would do, without doing it.
    pub async fn plan_cluster_change(
        &self,
        id: &str,
        change: &ClusterChangeRequest,
    ) -> anyhow::Result<PlanView> {
        self.post(&format!("/api/v1/clusters/{}/plan", segment(id)), change)
            .await
    }

    /// Deletes a cluster; `force` deletes it even if its nodes cannot be reached.
    pub async fn delete_cluster(&self, id: &str, force: bool) -> anyhow::Result<SubmittedJob> {
        let force = if force { "?force=true" } else { "" };
        self.delete(&format!("/api/v1/clusters/{}{force}", segment(id)))
            .await
    }

    /// Pins a cluster (rollouts pass it over) or unpins it.
    pub async fn set_cluster_pinned(
        &self,
        id: &str,
        choice: &PinChoice,
    ) -> anyhow::Result<PinChoice> {
        self.put(&format!("/api/v1/clusters/{}/pin", segment(id)), choice)
            .await
    }

    /// Turns a cluster's healing on or off, or back to what its template says.
    pub async fn set_cluster_healing(
        &self,
        id: &str,
        choice: &HealingChoice,
    ) -> anyhow::Result<HealingView> {
        self.put(&format!("/api/v1/clusters/{}/healing", segment(id)), choice)
            .await
    }

    pub async fn extend_cluster_lease(
        &self,
        id: &str,
        extension: &LeaseExtension,
    ) -> anyhow::Result<ClusterView> {
        self.put(
            &format!("/api/v1/clusters/{}/lease", segment(id)),
            extension,
        )
        .await
    }

    /// A short-lived SSH certificate for a public key on node `node` of a cluster (by
    /// name or id).
    pub async fn node_certificate(
        &self,
        cluster: &str,
        node: i64,
        request: &NodeCertificateRequest,
    ) -> anyhow::Result<NodeCertificate> {
        self.post(
            &format!(
                "/api/v1/clusters/{}/nodes/{}/ssh/certificate",
                segment(cluster),
                segment(node)
            ),
            request,
        )
        .await
    }

    // Jobs.

    pub async fn job(&self, id: &str) -> anyhow::Result<JobView> {
        self.get(&format!("/api/v1/jobs/{}", segment(id))).await
    }

    /// The first `limit` tasks of a job.
    pub async fn job_tasks(&self, id: &str, limit: u32) -> anyhow::Result<Page<TaskView>> {
        self.get(&format!("/api/v1/jobs/{}/tasks?limit={limit}", segment(id)))
            .await
    }

    /// Up to `limit` events of a job after the event `after` (0: from the start).
    pub async fn job_events(
        &self,
        id: &str,
        after: i64,
        limit: u32,
    ) -> anyhow::Result<Vec<EventView>> {
        self.get(&format!(
            "/api/v1/jobs/{id}/events?after={after}&limit={limit}"
        ))
        .await
    }

    pub async fn cancel_job(&self, id: &str) -> anyhow::Result<JobView> {
        let path = format!("/api/v1/jobs/{}/cancel", segment(id));
        typed(&path, self.send(Method::POST, &path, None::<&()>).await?)
    }

    pub async fn retry_job(&self, id: &str) -> anyhow::Result<JobView> {
        let path = format!("/api/v1/jobs/{}/retry", segment(id));
        typed(&path, self.send(Method::POST, &path, None::<&()>).await?)
    }

    // Lifecycle hooks.

    pub async fn add_hook(&self, request: &HookRequest) -> anyhow::Result<CreatedHook> {
        self.post("/api/v1/hooks", request).await
    }

    /// The first `limit` hooks of the tenant.
    pub async fn hooks(&self, limit: u32) -> anyhow::Result<Page<HookView>> {
        self.get(&format!("/api/v1/hooks?limit={limit}")).await
    }

    pub async fn remove_hook(&self, id: &str) -> anyhow::Result<()> {
        self.delete(&format!("/api/v1/hooks/{}", segment(id))).await
    }

    /// Queues a `test` event to the hook: its delivery.
    pub async fn test_hook(&self, id: &str) -> anyhow::Result<DeliveryView> {
        self.post_empty(&format!("/api/v1/hooks/{}/test", segment(id)))
            .await
    }

    /// The hook's newest `limit` deliveries.
    pub async fn hook_deliveries(
        &self,
        id: &str,
        limit: u32,
    ) -> anyhow::Result<Page<DeliveryView>> {
        self.get(&format!(
            "/api/v1/hooks/{}/deliveries?limit={limit}",
            segment(id)
        ))
        .await
    }

    pub async fn redeliver(&self, hook: &str, delivery: &str) -> anyhow::Result<DeliveryView> {
        self.post_empty(&format!(
            "/api/v1/hooks/{hook}/deliveries/{delivery}/redeliver"
        ))
        .await
    }

    // Approvals: groups, rules and the requests that wait on them.

    pub async fn add_group(&self, request: &GroupRequest) -> anyhow::Result<GroupView> {
        self.post("/api/v1/groups", request).await
    }

    pub async fn groups(&self) -> anyhow::Result<Vec<GroupView>> {
        self.get("/api/v1/groups").await
    }

    pub async fn group(&self, name: &str) -> anyhow::Result<GroupView> {
        self.get(&format!("/api/v1/groups/{}", segment(name))).await
    }

    pub async fn remove_group(&self, name: &str) -> anyhow::Result<()> {
        self.delete(&format!("/api/v1/groups/{}", segment(name)))
            .await
    }

    pub async fn add_group_member(
        &self,
        group: &str,
        request: &GroupMemberRequest,
    ) -> anyhow::Result<GroupView> {
        self.post(
            &format!("/api/v1/groups/{}/members", segment(group)),
            request,
        )
        .await
    }

    pub async fn remove_group_member(
        &self,
        group: &str,
        username: &str,
    ) -> anyhow::Result<GroupView> {
        self.delete(&format!(
            "/api/v1/groups/{}/members/{}",
            segment(group),
            segment(username)
        ))
        .await
    }

    pub async fn add_approval_rule(
        &self,
        request: &ApprovalRuleRequest,
    ) -> anyhow::Result<ApprovalRuleView> {
        self.post("/api/v1/approval-rules", request).await
    }

    pub async fn approval_rules(&self) -> anyhow::Result<Vec<ApprovalRuleView>> {
        self.get("/api/v1/approval-rules").await
    }

    pub async fn remove_approval_rule(&self, id: &str) -> anyhow::Result<()> {
        self.delete(&format!("/api/v1/approval-rules/{}", segment(id)))
            .await
    }

    /// The approval requests, or only those still waiting with `pending`.
    pub async fn approvals(&self, pending: bool) -> anyhow::Result<Vec<ApprovalView>> {
        let query = if pending { "?pending=true" } else { "" };
        self.get(&format!("/api/v1/approvals{query}")).await
    }

    /// Approves a request: the operation it held, now submitted.
    pub async fn approve(&self, id: &str) -> anyhow::Result<SubmittedJob> {
        self.post_empty(&format!("/api/v1/approvals/{}/approve", segment(id)))
            .await
    }

    pub async fn deny(&self, id: &str, denial: &ApprovalDenial) -> anyhow::Result<ApprovalView> {
        self.post(&format!("/api/v1/approvals/{}/deny", segment(id)), denial)
            .await
    }

    // Catalog rollouts.

    pub async fn start_rollout(&self, request: &RolloutRequest) -> anyhow::Result<RolloutStarted> {
        self.post("/api/v1/catalog/rollouts", request).await
    }

    pub async fn rollouts(&self) -> anyhow::Result<Vec<RolloutView>> {
        self.get("/api/v1/catalog/rollouts").await
    }

    pub async fn rollout(&self, id: &str) -> anyhow::Result<RolloutView> {
        self.get(&format!("/api/v1/catalog/rollouts/{}", segment(id)))
            .await
    }

    // Costs.

    pub async fn budget(&self) -> anyhow::Result<BudgetView> {
        self.get("/api/v1/budget").await
    }

    pub async fn set_budget(&self, request: &BudgetRequest) -> anyhow::Result<BudgetView> {
        self.put("/api/v1/budget", request).await
    }

    // The caller's SSH keys.

    pub async fn add_key(&self, request: &UserKeyRequest) -> anyhow::Result<UserKeyChange> {
        self.post("/api/v1/me/keys", request).await
    }

    pub async fn keys(&self) -> anyhow::Result<Vec<UserKeyView>> {
        self.get("/api/v1/me/keys").await
    }

    pub async fn remove_key(&self, id: &str) -> anyhow::Result<UserKeyChange> {
        self.delete(&format!("/api/v1/me/keys/{}", segment(id)))
            .await
    }

    // Any endpoint, typed by the caller.

    /// GETs `path` and reads the answer as `T`, a type of the wire contract.
    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> anyhow::Result<T> {
        typed(path, self.send(Method::GET, path, None::<&()>).await?)
    }

    /// POSTs `body` to `path` and reads the answer as `T`.
    pub async fn post<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> anyhow::Result<T> {
        typed(path, self.send(Method::POST, path, Some(body)).await?)
    }

    /// POSTs to `path` without a body (an action: test, redeliver, approve) and reads
    /// the answer as `T`.
    pub async fn post_empty<T: DeserializeOwned>(&self, path: &str) -> anyhow::Result<T> {
        typed(path, self.send(Method::POST, path, None::<&()>).await?)
    }

    /// PUTs `body` to `path` and reads the answer as `T`.
    pub async fn put<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> anyhow::Result<T> {
        typed(path, self.send(Method::PUT, path, Some(body)).await?)
    }

    /// DELETEs `path` and reads the answer as `T` (`()` reads an empty one).
    pub async fn delete<T: DeserializeOwned>(&self, path: &str) -> anyhow::Result<T> {
        typed(path, self.send(Method::DELETE, path, None::<&()>).await?)
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

    /// Sends a request and returns the JSON answer (`Null` for an empty one).
    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&(impl Serialize + ?Sized)>,
    ) -> anyhow::Result<Value> {
        let mut request = self.request(method, path);
        if let Some(body) = body {
            request = request.json(body);
        }
        self.answer(request).await
    }

    /// A request to `path` on the server, with this client's token or CSRF token.
    fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        let mut request = self.http.request(method, self.url(path));
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(csrf) = &self.csrf {
            request = request.header(CSRF_HEADER, csrf);
        }
        request
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
}

/// An answer read as the contract's type; a mismatch means the server runs another
/// version of Corral than this client.
fn typed<T: DeserializeOwned>(path: &str, answer: Value) -> anyhow::Result<T> {
    serde_json::from_value(answer).with_context(|| {
        format!("the answer to {path} is not what this version of corral reads: is the server the same version?")
    })
}

/// What a path segment may not hold as it is: besides controls and what is never
/// literal in a URL, the characters that would end the segment or the path (`/`, `?`,
/// `#`) and `%` itself, so a name or id always names one segment, whatever it holds.
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}');

/// `value` as one percent-encoded path segment.
fn segment(value: impl std::fmt::Display) -> String {
    utf8_percent_encode(&value.to_string(), SEGMENT).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_must_be_an_http_url() {
        let error = Client::new("ftp://example.com", None, None).unwrap_err();
        assert!(error.to_string().contains("http:// or https://"), "{error}");
        let client = Client::new("http://127.0.0.1:8080/", None, None).unwrap();
        assert_eq!(client.url("/api/v1/me"), "http://127.0.0.1:8080/api/v1/me");
    }

    #[test]
    fn a_refusal_names_each_problem_and_the_status() {
        let client = Client::new("http://127.0.0.1:8080", Some("t".to_owned()), None).unwrap();
        let body = r#"{"error":"invalid","message":"The request is invalid",
            "details":[{"path":"size","message":"must be at least 1"}]}"#;
        let message = client.refusal(reqwest::StatusCode::UNPROCESSABLE_ENTITY, body);
        assert_eq!(
            message,
            "The request is invalid (422 Unprocessable Entity)\n  size: must be at least 1"
        );
        let message = client.refusal(reqwest::StatusCode::UNAUTHORIZED, "<html>no</html>");
        assert!(
            message.starts_with("401 Unauthorized: <html>no</html>"),
            "{message}"
        );
        assert!(
            message.ends_with("sign in again with `corral login`"),
            "{message}"
        );
    }

    #[test]
    fn a_name_is_always_one_path_segment() {
        for (name, encoded) in [
            ("shop", "shop"),
            ("web-1.example_a~", "web-1.example_a~"),
            ("a/b", "a%2Fb"),
            ("x?admin=1#top", "x%3Fadmin=1%23top"),
            ("50%", "50%25"),
            ("two words", "two%20words"),
            ("café", "caf%C3%A9"),
        ] {
            assert_eq!(segment(name), encoded, "{name}");
        }
        assert_eq!(segment(1001), "1001");
        let client = Client::new("http://127.0.0.1:8080", None, None).unwrap();
        let path = format!(
            "/api/v1/groups/{}/members/{}",
            segment("ops/x"),
            segment("a?b")
        );
        assert_eq!(
            client.url(&path),
            "http://127.0.0.1:8080/api/v1/groups/ops%2Fx/members/a%3Fb"
        );
    }

    #[test]
    fn an_empty_answer_reads_as_unit_and_a_mismatch_names_the_path() {
        typed::<()>("/x", Value::Null).unwrap();
        let error = typed::<JobView>("/api/v1/jobs/1", Value::Null).unwrap_err();
        assert!(error.to_string().contains("/api/v1/jobs/1"), "{error}");
    }
}
