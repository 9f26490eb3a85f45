//! `exec`: nodes made by an external provider plugin, so a cloud Corral has no code for
//! (OpenStack, DigitalOcean, an in-house one) is added as a program in any language,
//! without rebuilding Corral. The protocol (version 1) is in docs/providers.md and
//! [`protocol`]; running a plugin in [`run`].
//!
//! What holds, and why:
//! - The catalog names a plugin by a bare name (`"provisioner": {"plugin": "openstack"}`)
//!   that is looked up only in the operator's plugin directory: the catalog is edited by
//!   tenant admins, who must not be able to run an arbitrary program on the server.
//! - Credentials (the tenant's, for the catalog provider) go to the plugin on stdin
//!   only: never in its arguments or environment, which other users of the machine can
//!   read, and never into an error message (values are blotted out of what it says, also
//!   JSON-, URL- or shell-escaped). A user's own go only to the plugin and settings they
//!   were set for (see [`super::CredentialBinding`]).
//! - Corral's client key for the node's tenant (one pair per tenant, sealed in the
//!   database, copied to the key directory) is what the plugin authorizes on the
//!   machine, so the copy a tenant's Ansible run gets opens that tenant's nodes only;
//!   the record names the key, and nodes made before keys were per tenant keep the one
//!   shared key they were made with until they are deleted. The host key the plugin
//!   reports is pinned at create and checked on every connection, and again on confirm
//!   and adopt.
//! - Every node record keeps which plugin and catalog provider made it, with the
//!   provider's settings and the plugin's own state, because delete and adopt get only
//!   the record: credentials are looked up again by tenant and provider name, and by the
//!   user whose own credentials made the node (the requester of the job that made it,
//!   where the provider allows `user_credentials`), falling back to the tenant's once
//!   that user's are gone.

mod protocol;
mod run;

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

pub use protocol::{ErrorCode, ExecOp, NodeInfo, PROTOCOL_VERSION};
pub use run::{MAX_STDOUT, STDERR_TAIL};

use super::client_keys::ClientKeys;
use super::{
    NodePresence, NodeProvider, NodeRecord, NodeSpec, ProviderError, ProviderSettings, Scrubber,
};
use crate::ssh::{HostKey, SessionPool, SshTarget};
use protocol::Response;
use run::{stderr_suffix, Call};
use store::provider_credentials::{CredentialsChoice, OpenedCredentials};
use store::Store;

// The provider type's name in catalogs (`"providertype": "exec"`).
pub use domain::catalog::EXEC_PROVIDER;

/// The setting naming the plugin.
const PLUGIN_SETTING: &str = "plugin";
/// The name the one client key of earlier versions, shared by every tenant's exec
/// nodes, is stored (and copied) under; nodes whose record names no key use it.
const SHARED_CLIENT_KEY: &str = "client_ed25519";
/// The setting giving the seconds one plugin call may take.
const TIMEOUT_SETTING: &str = "timeout_s";
/// A create may wait for a machine to boot.
const CREATE_TIMEOUT: Duration = Duration::from_secs(600);
/// Every other call.
const OTHER_TIMEOUT: Duration = Duration::from_secs(120);
/// Longest plugin name.
const MAX_PLUGIN_NAME: usize = 64;

/// What an exec node's record keeps beyond how to reach it: enough for delete and
/// adopt, which get nothing but the record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecNodeState {
    /// The plugin's name in the plugin directory.
    pub plugin: String,
    /// The catalog provider the node was made through (credentials are kept under it).
    pub provider: String,
    /// The catalog provider's settings when the node was made.
    #[serde(default)]
    pub settings: Map<String, Value>,
    #[serde(default)]
    pub tenant_id: Option<String>,
    #[serde(default)]
    pub cluster_id: Option<String>,
    /// The plugin's own state for the node, opaque to Corral.
    #[serde(default)]
    pub state: Value,
    /// The user whose own credentials made the node (the requester of the job that made
    /// it, where the provider allows `user_credentials`), so every later call uses them
    /// too; `None`:
    /// the tenant's.
    #[serde(default)]
    pub credentials_user: Option<String>,
    /// The name of the client key the machine authorizes (its tenant's, see
    /// [`tenant_key_name`]); `None` for nodes made before keys were per tenant, which
    /// keep the shared key [`SHARED_CLIENT_KEY`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_key: Option<String>,
}

impl ExecNodeState {
    fn provider_settings(&self) -> ProviderSettings {
        ProviderSettings {
            name: self.provider.clone(),
            settings: self.settings.clone(),
        }
    }

    /// The name of the client key the node's machine authorizes.
    fn key_name(&self) -> &str {
        self.client_key.as_deref().unwrap_or(SHARED_CLIENT_KEY)
    }
}

/// Whether `record` is an exec node made before keys were per tenant, whose machine
/// authorizes the key every tenant's exec nodes then shared: a copy of that key (an
/// Ansible run's) would open other tenants' such nodes too, so callers that hand a key
/// to tenant code refuse these.
pub fn shares_client_key(record: &NodeRecord) -> bool {
    record.provider == EXEC_PROVIDER
        && state_of(record).is_ok_and(|state| state.client_key.is_none())
}

/// The name the client key of `tenant`'s exec nodes is stored (and copied) under: one
/// key per tenant, so a tenant holding its key (an Ansible run gets a copy) reaches no
/// other tenant's machines. Ids that are not plain names (Corral's are UUIDs) are
/// hashed, so a name never holds a path separator.
pub fn tenant_key_name(tenant: Option<&str>) -> String {
    use sha2::Digest as _;
    match tenant {
        Some(id)
            if !id.is_empty()
                && id.len() <= 64
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
        {
            format!("{SHARED_CLIENT_KEY}.tenant-{id}")
        }
        Some(id) => {
            let digest = sha2::Sha256::digest(id.as_bytes());
            let hex = hex::encode(digest);
            format!("{SHARED_CLIENT_KEY}.tenant-h{hex}")
        }
        // Nodes made outside any tenant (tools, tests) share a key of their own.
        None => format!("{SHARED_CLIENT_KEY}.no-tenant"),
    }
}

/// Makes nodes through plugins of one plugin directory.
pub struct ExecProvider {
    store: Store,
    plugin_dir: PathBuf,
    /// Corral's client keys for exec nodes, one per tenant ([`tenant_key_name`]).
    keys: ClientKeys,
}

impl std::fmt::Debug for ExecProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecProvider")
            .field("plugin_dir", &self.plugin_dir)
            .field("keys", &self.keys)
            .finish_non_exhaustive()
    }
}

impl ExecProvider {
    /// A provider running plugins from `plugin_dir` (which need not exist yet: a catalog
    /// naming a plugin then gets an error saying where to put it) with tenants'
    /// credentials from `store`, and Corral's client keys for exec nodes (one per
    /// tenant, made on first use, sealed in `store`) copied into `key_dir`, kept private.
    pub fn new(store: Store, plugin_dir: &Path, key_dir: &Path) -> Result<Self, ProviderError> {
        let plugin_dir = std::path::absolute(plugin_dir).map_err(|source| ProviderError::Io {
            action: "cannot resolve the plugin directory",
            path: plugin_dir.to_owned(),
            source,
        })?;
        Ok(Self {
            keys: ClientKeys::new(store.clone(), key_dir, EXEC_PROVIDER)?,
            store,
            plugin_dir,
        })
    }

    /// The directory plugins are looked up in.
    pub fn plugin_dir(&self) -> &Path {
        &self.plugin_dir
    }

    /// Client key `name` of exec nodes (made on first use): this process's copy of the
    /// private key, and the public line plugins are asked to authorize.
    async fn client_key(&self, name: &str) -> Result<(PathBuf, String), ProviderError> {
        self.keys
            .ensure(name, &format!("corral exec nodes {name}"))
            .await
    }

    async fn create_node(&self, spec: &NodeSpec) -> Result<NodeRecord, ProviderError> {
        let plugin = plugin_of(&spec.provider)?;
        let mut exec_state = ExecNodeState {
            plugin: plugin.to_owned(),
            provider: spec.provider.name.clone(),
            settings: spec.provider.settings.clone(),
            tenant_id: spec.tenant_id.clone(),
            cluster_id: spec.cluster_id.clone(),
            state: Value::Null,
            credentials_user: None,
            client_key: Some(tenant_key_name(spec.tenant_id.as_deref())),
        };
        // Whose credentials the node is made with is settled once, here: every call
        // for it (create, confirm, delete, adopt) then uses the same ones. They are the
        // job's requester's own (never the cluster owner's for another's request).
        if let (Some(tenant_id), Some(requester)) = (&spec.tenant_id, &spec.requested_by) {
            let binding = crate::provider::binding::of(EXEC_PROVIDER, &spec.provider);
            let choice = self
                .store
                .credentials_choice(
                    tenant_id,
                    &spec.provider.name,
                    &binding,
                    Some(requester),
                    spec.provider.allows_user_credentials(),
                )
                .await
                .map_err(|source| ProviderError::CredentialsStore {
                    provider: spec.provider.name.clone(),
                    source,
                })?;
            exec_state.credentials_user = match choice {
                CredentialsChoice::User(user) => Some(user),
                CredentialsChoice::Tenant | CredentialsChoice::Nothing => None,
                // The plugin is not run: it is not the one the credentials were set for.
                CredentialsChoice::Rebound(_) => {
                    return Err(ProviderError::CredentialsRebound {
                        provider: spec.provider.name.clone(),
                    })
                }
            };
        }
        let (client_key_path, client_public_key) = self.client_key(exec_state.key_name()).await?;
        let mut fields = Map::new();
        fields.insert("node".to_owned(), protocol::create_node(spec));
        fields.insert("authorized_key".to_owned(), json!(client_public_key));
        let info = self
            .node_call(&exec_state, ExecOp::Create, &spec.id, fields)
            .await?;
        exec_state.state = info.state.clone();
        // The record pins a host key before anything connects: a plugin that did not
        // know it yet is asked once more, now to wait until the machine is up.
        let info = match info.host_key {
            Some(_) => info,
            None => {
                let fields = node_fields(&spec.id, &exec_state);
                let ready = self
                    .node_call(&exec_state, ExecOp::ConfirmInfo, &spec.id, fields)
                    .await?;
                exec_state.state = ready.state.clone();
                ready
            }
        };
        let host_key = pinned_key(&exec_state.plugin, ExecOp::Create, &spec.id, &info)?;
        self.record(&spec.id, info, host_key, exec_state, client_key_path)
    }

    async fn confirm_node(
        &self,
        record: &NodeRecord,
        pool: &SessionPool,
        timeout: Duration,
    ) -> Result<(), ProviderError> {
        let exec_state = state_of(record)?;
        let fields = node_fields(&record.id, &exec_state);
        let info = self
            .node_call(&exec_state, ExecOp::ConfirmInfo, &record.id, fields)
            .await?;
        let current = pinned_key(&exec_state.plugin, ExecOp::ConfirmInfo, &record.id, &info)?;
        check_same_key(record, &current)?;
        if info.host != record.host || info.port != record.port {
            return Err(failed(
                &exec_state.plugin,
                ExecOp::ConfirmInfo,
                Some(&record.id),
                format!(
                    "it reports the node at {}:{}, but it was made at {}:{} (a node's SSH \
                     address must not change between create and confirm)",
                    info.host, info.port, record.host, record.port
                ),
            ));
        }
        let target = self.keys.target(record, exec_state.key_name()).await?;
        super::wait_for_ssh(&target, pool, timeout).await
    }

    async fn delete_node(&self, record: &NodeRecord) -> Result<(), ProviderError> {
        let exec_state = state_of(record)?;
        let fields = node_fields(&record.id, &exec_state);
        match self
            .call(&exec_state, ExecOp::Delete, Some(&record.id), fields)
            .await
        {
            Ok(_) => Ok(()),
            // Deleting a deleted node succeeds, also when the plugin calls it gone.
            Err(ProviderError::PluginRefused {
                code: Some(code), ..
            }) if code == ErrorCode::Gone.as_str() => Ok(()),
            Err(error) => Err(error),
        }
    }

    async fn adopt_node(&self, record: &NodeRecord) -> Result<NodeRecord, ProviderError> {
        let mut exec_state = state_of(record)?;
        let fields = node_fields(&record.id, &exec_state);
        let info = self
            .node_call(&exec_state, ExecOp::Adopt, &record.id, fields)
            .await?;
        // A plugin that does not report the key again keeps the pinned one; one that
        // reports another is refused: the machine is not the one Corral made.
        let host_key = match &info.host_key {
            Some(_) => {
                let current = pinned_key(&exec_state.plugin, ExecOp::Adopt, &record.id, &info)?;
                check_same_key(record, &current)?;
                current
            }
            None => record.host_key.clone(),
        };
        exec_state.state = info.state.clone();
        // The key the machine was made with, shared or the tenant's: its authorized_keys
        // holds that one.
        let (client_key_path, _) = self.client_key(exec_state.key_name()).await?;
        self.record(&record.id, info, host_key, exec_state, client_key_path)
    }

    /// Asks the plugin whether the node's machine is there. `gone` (an answer, or a
    /// refusal with code `gone`) and `present` are believed; a plugin that fails or
    /// refuses otherwise (one written before this op answers "unknown op") cannot tell.
    async fn node_presence(&self, record: &NodeRecord) -> Result<NodePresence, ProviderError> {
        let exec_state = state_of(record)?;
        let fields = node_fields(&record.id, &exec_state);
        match self
            .call(&exec_state, ExecOp::Presence, Some(&record.id), fields)
            .await
        {
            Ok(answer) => protocol::presence(&answer).map_err(|problem| {
                failed(
                    &exec_state.plugin,
                    ExecOp::Presence,
                    Some(&record.id),
                    problem,
                )
            }),
            Err(ProviderError::PluginRefused {
                code: Some(code), ..
            }) if code == ErrorCode::Gone.as_str() => Ok(NodePresence::Gone),
            Err(ProviderError::PluginRefused { .. }) => Ok(NodePresence::Unknown),
            Err(error) => Err(error),
        }
    }

    async fn check_provider(
        &self,
        tenant_id: &str,
        provider: &ProviderSettings,
    ) -> Result<String, ProviderError> {
        let plugin = plugin_of(provider)?;
        let exec_state = ExecNodeState {
            plugin: plugin.to_owned(),
            provider: provider.name.clone(),
            settings: provider.settings.clone(),
            tenant_id: Some(tenant_id.to_owned()),
            cluster_id: None,
            state: Value::Null,
            // The check is an admin's: it uses the tenant's credentials.
            credentials_user: None,
            client_key: None,
        };
        let fields = self
            .call(&exec_state, ExecOp::Test, None, Map::new())
            .await?;
        protocol::test_message(&fields)
            .map_err(|problem| failed(plugin, ExecOp::Test, None, problem))
    }

    fn record(
        &self,
        node: &str,
        info: NodeInfo,
        host_key: HostKey,
        exec_state: ExecNodeState,
        client_key_path: PathBuf,
    ) -> Result<NodeRecord, ProviderError> {
        let provider_state =
            serde_json::to_value(&exec_state).map_err(|error| ProviderError::BadRecord {
                node: node.to_owned(),
                reason: error.to_string(),
            })?;
        Ok(NodeRecord {
            id: node.to_owned(),
            provider: EXEC_PROVIDER.to_owned(),
            host: info.host,
            port: info.port,
            user: info.user,
            host_key,
            client_key_path,
            provider_state,
            address: info.address.filter(|address| !address.trim().is_empty()),
        })
    }

    /// A call whose successful response carries a node.
    async fn node_call(
        &self,
        exec_state: &ExecNodeState,
        op: ExecOp,
        node: &str,
        fields: Map<String, Value>,
    ) -> Result<NodeInfo, ProviderError> {
        let response = self.call(exec_state, op, Some(node), fields).await?;
        protocol::node_info(response)
            .map_err(|problem| failed(&exec_state.plugin, op, Some(node), problem))
    }

    /// Runs `op` of the node's plugin with the request's `fields`; the fields of a
    /// successful response, or the plugin's refusal or failure as an error.
    async fn call(
        &self,
        exec_state: &ExecNodeState,
        op: ExecOp,
        node: Option<&str>,
        fields: Map<String, Value>,
    ) -> Result<Map<String, Value>, ProviderError> {
        let plugin = exec_state.plugin.as_str();
        let path = self.resolve(plugin)?;
        let settings = exec_state.provider_settings();
        let credentials = match &exec_state.tenant_id {
            // A user's own open only for the plugin and settings they were set for.
            Some(tenant_id) => match self
                .store
                .credentials_for(
                    tenant_id,
                    &exec_state.provider,
                    &crate::provider::binding::of(EXEC_PROVIDER, &settings),
                    exec_state.credentials_user.as_deref(),
                    true,
                )
                .await
                .map_err(|source| ProviderError::CredentialsStore {
                    provider: exec_state.provider.clone(),
                    source,
                })? {
                OpenedCredentials::Open(credentials, _) => Some(credentials),
                OpenedCredentials::Nothing => None,
                OpenedCredentials::Rebound(_) => {
                    return Err(ProviderError::CredentialsRebound {
                        provider: exec_state.provider.clone(),
                    })
                }
            },
            None => None,
        };
        let scrubber = credentials
            .as_ref()
            .map(Scrubber::of_credentials)
            .unwrap_or_default();
        let credentials_json = match &credentials {
            Some(credentials) => Some(
                serde_json::from_str::<Value>(&credentials.expose_json())
                    .map_err(|_| failed(plugin, op, node, "the credentials do not encode"))?,
            ),
            None => None,
        };
        let mut request = protocol::request(op, &settings, credentials_json);
        request.extend(fields);
        let request = serde_json::to_vec(&Value::Object(request))
            .map_err(|_| failed(plugin, op, node, "the request does not encode"))?;
        let call = Call {
            plugin,
            path: &path,
            op,
            node,
            timeout: timeout_of(&settings, op),
            scrubber: &scrubber,
        };
        let finished = call.run(&request).await?;
        let stderr = stderr_suffix(&finished.stderr_tail);
        match protocol::parse_response(&finished.stdout) {
            Ok(Response::Ok(fields)) if finished.status.success() => Ok(fields),
            Ok(Response::Ok(_)) => Err(call.failed(format!(
                "it answered ok but exited with {}{stderr}",
                finished.status
            ))),
            Ok(Response::Refused { message, code }) => Err(ProviderError::PluginRefused {
                plugin: plugin.to_owned(),
                op: op.as_str(),
                node: node.map(str::to_owned),
                code: code.map(|code| code.as_str().to_owned()),
                message: call.scrub(&message),
            }),
            Err(problem) if !finished.status.success() => Err(call.failed(format!(
                "it exited with {} without a JSON error response ({problem}){stderr}",
                finished.status
            ))),
            Err(problem) => Err(call.failed(format!("{problem}{stderr}"))),
        }
    }

    /// The plugin's executable in the plugin directory, checked to be there and
    /// executable.
    fn resolve(&self, plugin: &str) -> Result<PathBuf, ProviderError> {
        use std::os::unix::fs::PermissionsExt;
        check_plugin_name(plugin)?;
        let path = self.plugin_dir.join(plugin);
        let missing = |detail: String| ProviderError::PluginMissing {
            plugin: plugin.to_owned(),
            dir: self.plugin_dir.clone(),
            detail,
        };
        let metadata = std::fs::metadata(&path).map_err(|error| {
            missing(if error.kind() == std::io::ErrorKind::NotFound {
                "there is no such file (the operator installs plugins there)".to_owned()
            } else {
                error.to_string()
            })
        })?;
        if !metadata.is_file() {
            return Err(missing("it is not a file".to_owned()));
        }
        if metadata.permissions().mode() & 0o111 == 0 {
            return Err(missing("it is not executable (chmod +x)".to_owned()));
        }
        Ok(path)
    }
}

#[async_trait]
impl NodeProvider for ExecProvider {
    fn name(&self) -> &'static str {
        EXEC_PROVIDER
    }

    async fn create(&self, spec: &NodeSpec) -> Result<NodeRecord, ProviderError> {
        self.create_node(spec).await
    }

    async fn confirm(
        &self,
        record: &NodeRecord,
        pool: &SessionPool,
        timeout: Duration,
    ) -> Result<(), ProviderError> {
        self.confirm_node(record, pool, timeout).await
    }

    async fn delete(&self, record: &NodeRecord) -> Result<(), ProviderError> {
        self.delete_node(record).await
    }

    async fn adopt(&self, record: &NodeRecord) -> Result<NodeRecord, ProviderError> {
        self.adopt_node(record).await
    }

    async fn presence(&self, record: &NodeRecord) -> Result<NodePresence, ProviderError> {
        self.node_presence(record).await
    }

    async fn check(
        &self,
        tenant_id: &str,
        provider: &ProviderSettings,
    ) -> Result<String, ProviderError> {
        self.check_provider(tenant_id, provider).await
    }

    async fn ssh_target(&self, record: &NodeRecord) -> Result<SshTarget, ProviderError> {
        let exec_state = state_of(record)?;
        self.keys.target(record, exec_state.key_name()).await
    }
}

/// The catalog provider's plugin name, checked.
fn plugin_of(provider: &ProviderSettings) -> Result<&str, ProviderError> {
    let plugin = provider
        .setting(&[PLUGIN_SETTING])
        .ok_or_else(|| ProviderError::NoPlugin {
            provider: provider.name.clone(),
        })?;
    check_plugin_name(plugin)?;
    Ok(plugin)
}

/// A plugin is a file directly in the plugin directory: no path, no hidden file, nothing
/// a shell or a path join would read as more than a name.
pub fn check_plugin_name(name: &str) -> Result<(), ProviderError> {
    let refuse = |reason| ProviderError::InvalidPluginName {
        name: name.to_owned(),
        reason,
    };
    if name.is_empty() {
        return Err(refuse("it is empty"));
    }
    if name.len() > MAX_PLUGIN_NAME {
        return Err(refuse("it is longer than 64 characters"));
    }
    if name.contains('/') {
        return Err(refuse("it holds a '/' (plugins are names, not paths)"));
    }
    if name.starts_with('.') {
        return Err(refuse("it starts with '.'"));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if !name.chars().all(allowed) {
        return Err(refuse(
            "it holds a character other than letters, digits, '-', '_' and '.'",
        ));
    }
    Ok(())
}

/// The seconds a call may take: the provider's `timeout_s`, else the op's default.
fn timeout_of(settings: &ProviderSettings, op: ExecOp) -> Duration {
    let configured = settings.settings.get(TIMEOUT_SETTING).and_then(|value| {
        value
            .as_f64()
            .or_else(|| value.as_str().and_then(|text| text.trim().parse().ok()))
    });
    match configured {
        Some(seconds) if seconds.is_finite() && seconds > 0.0 => Duration::from_secs_f64(seconds),
        _ if op == ExecOp::Create => CREATE_TIMEOUT,
        _ => OTHER_TIMEOUT,
    }
}

/// `"node"` of confirm-info, delete and adopt: the node's id, tenant, cluster and the
/// plugin's state.
fn node_fields(node: &str, exec_state: &ExecNodeState) -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert(
        "node".to_owned(),
        json!({
            "id": node,
            "tenant_id": exec_state.tenant_id,
            "cluster_id": exec_state.cluster_id,
            "state": exec_state.state,
        }),
    );
    fields
}

/// The host key a response reports, required and parsed.
fn pinned_key(
    plugin: &str,
    op: ExecOp,
    node: &str,
    info: &NodeInfo,
) -> Result<HostKey, ProviderError> {
    let text = info.host_key.as_deref().ok_or_else(|| {
        failed(
            plugin,
            op,
            Some(node),
            "its \"node\" has no \"host_key\" (the machine's SSH host public key, one \
             OpenSSH line, is required once it is up)",
        )
    })?;
    HostKey::from_openssh(text).map_err(|error| {
        failed(
            plugin,
            op,
            Some(node),
            format!("its \"host_key\" is not an OpenSSH public key: {error}"),
        )
    })
}

fn check_same_key(record: &NodeRecord, current: &HostKey) -> Result<(), ProviderError> {
    if *current == record.host_key {
        Ok(())
    } else {
        Err(ProviderError::HostKeyChanged {
            node: record.id.clone(),
            pinned: record.host_key.fingerprint(),
            current: current.fingerprint(),
        })
    }
}

fn failed(
    plugin: &str,
    op: ExecOp,
    node: Option<&str>,
    detail: impl Into<String>,
) -> ProviderError {
    ProviderError::PluginFailed {
        plugin: plugin.to_owned(),
        op: op.as_str(),
        node: node.map(str::to_owned),
        detail: detail.into(),
    }
}

fn state_of(record: &NodeRecord) -> Result<ExecNodeState, ProviderError> {
    record.state_as(EXEC_PROVIDER)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn plugin_names_are_bare_names() {
        for good in ["corral-test-provider", "openstack", "do_v2", "gce.py"] {
            assert!(check_plugin_name(good).is_ok(), "{good}");
        }
        for bad in [
            "", "../x", "a/b", "/bin/sh", ".hidden", "..", "a b", "a;b", "ä", "$(x)",
        ] {
            assert!(check_plugin_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_plugin_name(&"a".repeat(65)).is_err());
    }

    #[test]
    fn every_tenant_has_a_key_of_its_own_named_without_paths() {
        let uuid = "00000000-0000-0000-0000-000000000001";
        for (tenant, expected) in [
            (Some(uuid), format!("client_ed25519.tenant-{uuid}")),
            (Some("acme_2"), "client_ed25519.tenant-acme_2".to_owned()),
            (None, "client_ed25519.no-tenant".to_owned()),
        ] {
            assert_eq!(tenant_key_name(tenant), expected);
        }
        for odd in ["../x", "a/b", "", "ä", &"a".repeat(65)] {
            let name = tenant_key_name(Some(odd));
            assert!(
                name.starts_with("client_ed25519.tenant-h"),
                "{odd:?}: {name}"
            );
            assert!(!name.contains('/') && !name.contains(".."), "{name}");
        }
        assert_ne!(tenant_key_name(Some("a/b")), tenant_key_name(Some("a/c")));
        assert_ne!(tenant_key_name(Some("a")), tenant_key_name(Some("b")));
    }

    #[test]
    fn nodes_recorded_without_a_key_keep_the_shared_one() {
        let earlier: ExecNodeState =
            serde_json::from_value(json!({"plugin": "p", "provider": "lab"})).unwrap();
        assert_eq!(earlier.key_name(), SHARED_CLIENT_KEY);
        let now = ExecNodeState {
            client_key: Some(tenant_key_name(Some("t1"))),
            ..earlier
        };
        assert_eq!(now.key_name(), "client_ed25519.tenant-t1");
    }

    #[test]
    fn timeouts_come_from_the_settings_or_the_op() {
        let mut settings = ProviderSettings::default();
        assert_eq!(timeout_of(&settings, ExecOp::Create), CREATE_TIMEOUT);
        assert_eq!(timeout_of(&settings, ExecOp::Delete), OTHER_TIMEOUT);
        settings
            .settings
            .insert("timeout_s".to_owned(), json!("2.5"));
        assert_eq!(
            timeout_of(&settings, ExecOp::Create),
            Duration::from_millis(2500)
        );
        settings.settings.insert("timeout_s".to_owned(), json!(-1));
        assert_eq!(timeout_of(&settings, ExecOp::Test), OTHER_TIMEOUT);
    }
}
