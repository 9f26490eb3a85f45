//! Provider failures, each saying which node and what to do about it where that is known.

use std::path::PathBuf;

use crate::ssh::SshError;

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error(
        "the OpenSSH server (sshd) was not found (looked for {looked_for}); the local provider \
         runs every node as its own sshd: install it with `apt-get install openssh-server`"
    )]
    SshdMissing { looked_for: String },
    #[error("{tool} was not found; install it with `apt-get install openssh-client`")]
    ToolMissing { tool: String },
    #[error("{tool} failed for node {node}: {detail}")]
    ToolFailed {
        tool: String,
        node: String,
        detail: String,
    },
    #[error("invalid node id {id:?}: {reason}")]
    InvalidNodeId { id: String, reason: &'static str },
    #[error(
        "the local provider's base directory {path} is not usable: {reason} \
         (its path may only hold letters, digits and `/._+-`)"
    )]
    InvalidBaseDir { path: PathBuf, reason: String },
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("node {node} belongs to provider {found:?}, not {expected:?}")]
    WrongProvider {
        node: String,
        expected: String,
        found: String,
    },
    #[error("node {node}: its record is unusable: {reason}")]
    BadRecord { node: String, reason: String },
    #[error("node {node} no longer exists (its directory {} is gone); create it again", dir.display())]
    NodeGone { node: String, dir: PathBuf },
    #[error("node {node}: sshd did not start: {detail}")]
    SshdStart { node: String, detail: String },
    #[error(
        "node {node}: its host key is now {current}, not the pinned {pinned}; refusing to adopt"
    )]
    HostKeyChanged {
        node: String,
        pinned: String,
        current: String,
    },
    #[error("node {node}: not reachable over SSH: {source}")]
    Confirm { node: String, source: Box<SshError> },
    #[error("node {node}: did not accept SSH within {seconds}s (last error: {last_error})")]
    ConfirmTimeout {
        node: String,
        seconds: u64,
        last_error: String,
    },
    #[error(
        "node {node}: the tenant has no ssh-pool hosts; an admin registers them at /admin/hosts"
    )]
    PoolEmpty { node: String },
    #[error("node {node}: ssh-pool hosts belong to a tenant and this node has none")]
    NoTenant { node: String },
    #[error("node {node}: the ssh-pool hosts cannot be read: {source}")]
    PoolStore {
        node: String,
        source: store::StoreError,
    },
    #[error("node {node}: all {hosts} hosts of the SSH pool are in use")]
    PoolExhausted { node: String, hosts: usize },
    #[error("node {node}: pool host {address} is checked out to node {owner}")]
    HostInUse {
        node: String,
        address: String,
        owner: String,
    },
    #[error("node {node}: processes {pids:?} survived SIGKILL")]
    Survivors { node: String, pids: Vec<i32> },
    #[error("node {node}: cannot set up its OS user {user}: {detail}")]
    NodeUser {
        node: String,
        user: String,
        detail: String,
    },
    #[error("local node homes cannot be kept under {}: {reason}", path.display())]
    NodeHomes { path: PathBuf, reason: String },
    /// The Docker engine refused or failed a request (or cannot be reached).
    #[error("node {node}: Docker could not {action}: {detail}")]
    Docker {
        node: String,
        action: &'static str,
        detail: String,
    },
    /// The Docker engine gave no answer for as long as a call waits for it.
    #[error(
        "node {node}: the Docker engine at {endpoint} did not answer for {waited_secs} s \
         ({detail}); is dockerd running? Retry the job once it answers"
    )]
    DockerEngineDown {
        node: String,
        endpoint: String,
        waited_secs: u64,
        detail: String,
    },
    #[error("node {node}: its container {container} is gone; create the node again")]
    ContainerGone { node: String, container: String },
    #[error(
        "the node image {image} could not be built: {detail} (it is made with `mmdebstrap` \
         from Debian's packages: `apt-get install mmdebstrap`, and Debian's mirror must be \
         reachable)"
    )]
    NodeImage { image: String, detail: String },
    /// An `ec2` catalog provider's settings (or a node's image or hardware type) leave
    /// something the provider needs unsaid.
    #[error("provider {provider}: {detail}")]
    Ec2Settings { provider: String, detail: String },
    #[error(
        "provider {provider} has no credentials in this tenant: an admin sets them at \
         /admin/providers/{provider} or with `corral provider credentials set {provider} --stdin`"
    )]
    NoCredentials { provider: String },
    #[error(
        "provider {provider}: its credentials in this tenant cannot be used: {reason} \
         (set them again with `corral provider credentials set {provider} --stdin`)"
    )]
    CredentialsUnusable { provider: String, reason: String },
    /// The requester's own credentials were set for another definition of the provider
    /// (see [`super::CredentialBinding`]); nothing is sent with them.
    #[error(
        "provider {provider} has changed (its type, endpoint, plugin or region) since the \
         user who asked set their own credentials for it, so they are not used: the user \
         must enter them again for the provider as it is now (`corral provider \
         credentials set {provider} --mine --stdin`)"
    )]
    CredentialsRebound { provider: String },
    #[error(
        "the EC2 credentials of provider {provider} were rejected ({code}): set them again \
         with `corral provider credentials set {provider} --stdin`"
    )]
    CredentialsRejected { provider: String, code: String },
    #[error(
        "node {node}: EC2 (provider {provider}) has no room for it ({code}: {message}); raise \
         the account's quota for this instance type and region, try again later, or choose \
         another hardware type"
    )]
    Ec2Capacity {
        node: String,
        provider: String,
        code: String,
        message: String,
    },
    /// `RunInstances` refused the image (`InvalidAMIID.*`: malformed, unknown or not
    /// available to the account).
    #[error(
        "node {node}: EC2 (provider {provider}, region {region}) does not know image {image} \
         of image type {imagetype}; its image for {provider} must be an AMI id of that \
         region the account may use"
    )]
    Ec2Image {
        node: String,
        provider: String,
        region: String,
        image: String,
        imagetype: String,
    },
    /// Any other refusal or failure of an EC2 request for a node.
    #[error("node {node}: EC2 (provider {provider}) could not {action}: {detail}")]
    Ec2 {
        node: String,
        provider: String,
        action: &'static str,
        detail: String,
    },
    #[error("provider {provider}: EC2 at {endpoint} (region {region}) did not answer: {detail}")]
    Ec2Check {
        provider: String,
        endpoint: String,
        region: String,
        detail: String,
    },
    #[error("node {node}: its EC2 instance {instance} is gone; create the node again")]
    InstanceGone { node: String, instance: String },
    #[error(
        "node {node}: provider {provider} is set not to connect to its instances (`connect`: \
         `none`), so the node cannot be reached over SSH; set `connect` to `public-ip` or \
         `private-ip` for nodes Corral works on"
    )]
    NotConnected { node: String, provider: String },
    /// A client key pair could not be made (the operating system's random source failed)
    /// or read (a key file left by an earlier version is not an OpenSSH private key).
    #[error("client key {key}: {detail}")]
    ClientKey { key: String, detail: String },
    /// The database holding providers' client keys did not answer, or the server's
    /// secret key does not open what it holds.
    #[error("client key {key}: the database of client keys cannot be used: {source}")]
    KeyStore {
        key: String,
        source: store::StoreError,
    },
    /// A catalog's `plugin` that is not a bare name in the plugin directory.
    #[error(
        "provider plugin name {name:?} is not allowed: {reason} (a plugin is named by a file \
         in the operator's plugin directory: letters, digits, '-', '_' and '.', not starting \
         with '.')"
    )]
    InvalidPluginName { name: String, reason: &'static str },
    #[error(
        "provider {provider:?} names no plugin: its provisioner needs \
         {{\"plugin\": \"<name of an executable in the plugin directory>\"}}"
    )]
    NoPlugin { provider: String },
    #[error("provider plugin {plugin:?} cannot be used from the plugin directory {}: {detail}", dir.display())]
    PluginMissing {
        plugin: String,
        dir: PathBuf,
        detail: String,
    },
    /// The plugin ran but broke the protocol: no JSON, another version, missing fields, a
    /// non-zero exit without an error response, too much output.
    #[error("provider plugin {plugin:?} failed `{op}`{}: {detail}", for_node(node))]
    PluginFailed {
        plugin: String,
        op: &'static str,
        node: Option<String>,
        detail: String,
    },
    /// The plugin answered `{"ok": false, ...}`: its own words for a user.
    #[error(
        "provider plugin {plugin:?} refused `{op}`{}: {message}{}",
        for_node(node),
        code.as_ref().map(|code| format!(" (code {code})")).unwrap_or_default()
    )]
    PluginRefused {
        plugin: String,
        op: &'static str,
        node: Option<String>,
        code: Option<String>,
        message: String,
    },
    #[error(
        "provider plugin {plugin:?} did not finish `{op}`{} within {seconds}s and was killed \
         (the provider's `timeout_s` setting allows more){stderr}",
        for_node(node)
    )]
    PluginTimeout {
        plugin: String,
        op: &'static str,
        node: Option<String>,
        seconds: u64,
        /// The tail of its stderr, as `; stderr: ...`, or empty.
        stderr: String,
    },
    #[error("the credentials of provider {provider:?} cannot be read: {source}")]
    CredentialsStore {
        provider: String,
        source: store::StoreError,
    },
}

/// ` for node X` where a failure concerns one node.
fn for_node(node: &Option<String>) -> String {
    node.as_ref()
        .map(|node| format!(" for node {node}"))
        .unwrap_or_default()
}
