//! The `exec` provider against real plugins: `corral-test-provider` (engine/tests/plugins,
//! nodes as loopback sshds) for the whole node life, and tiny shell plugins written into a
//! temporary plugin directory for every way a plugin can misbehave. The security rules
//! are tested here too: plugins are bare names in the plugin directory, credentials reach
//! a plugin on stdin only and never show in an error, each tenant's nodes take its own
//! client key only, and Ansible refuses nodes that still take the key tenants once shared.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use engine::provider::{
    Credentials, ExecNodeState, ExecProvider, NodePresence, NodeProvider, NodeRecord, NodeSpec,
    ProviderError, ProviderSettings, EXEC_PROVIDER,
};
use engine::ssh::{OutputChunk, PoolConfig, RunOptions, SessionPool};
use engine::store::tenants::{TenantSwitch, DEFAULT_TENANT_ID};
use engine::store::users::{NewUser, Role};
use engine::store::{now_ms, Backend, Store};
use engine::testing::TestDatabase;
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

const PLUGINS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/plugins");
const TEST_PLUGIN: &str = "corral-test-provider";
const CONFIRM: Duration = Duration::from_secs(20);
const TOKEN: &str = "s3cr3t-token-of-tenant";

/// A store, a provider over a plugin directory, and where the test plugin keeps nodes.
struct Fixture {
    store: Store,
    provider: ExecProvider,
    keys: PathBuf,
    plugin_dir: PathBuf,
    nodes: tempfile::TempDir,
    _keys: tempfile::TempDir,
    _db: TestDatabase,
}

impl Fixture {
    async fn new(plugin_dir: &Path) -> Self {
        let db = TestDatabase::new(Backend::Sqlite).await;
        let store = Store::open(&db.url)
            .await
            .unwrap()
            .with_secret_key(engine::testing::test_secret_key());
        let keys = tempfile::tempdir().unwrap();
        let provider = ExecProvider::new(store.clone(), plugin_dir, keys.path()).unwrap();
        Self {
            store,
            provider,
            keys: keys.path().to_owned(),
            plugin_dir: plugin_dir.to_owned(),
            nodes: tempfile::Builder::new()
                .prefix("corral-exec-")
                .tempdir()
                .unwrap(),
            _keys: keys,
            _db: db,
        }
    }

    /// The catalog provider `lab` using `plugin`, with `extra` settings.
    fn settings(&self, plugin: &str, extra: serde_json::Value) -> ProviderSettings {
        let mut settings = serde_json::Map::new();
        settings.insert("plugin".to_owned(), plugin.into());
        settings.insert(
            "nodes_dir".to_owned(),
            self.nodes.path().display().to_string().into(),
        );
        if let serde_json::Value::Object(extra) = extra {
            settings.extend(extra);
        }
        ProviderSettings {
            name: "lab".to_owned(),
            settings,
        }
    }

    fn spec(&self, id: &str, settings: &ProviderSettings) -> NodeSpec {
        NodeSpec {
            cluster_id: Some("c1".to_owned()),
            provider: settings.clone(),
            ..NodeSpec::for_tenant(id, DEFAULT_TENANT_ID)
        }
    }

    async fn set_token(&self, token: &str) {
        let credentials = Credentials::from_json(serde_json::json!({ "token": token })).unwrap();
        self.store
            .set_provider_credentials(DEFAULT_TENANT_ID, "lab", &credentials, None, now_ms())
            .await
            .unwrap();
    }

    /// sshd processes serving nodes of this fixture.
    fn sshds(&self) -> Vec<i32> {
        sshds_under(self.nodes.path())
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        kill_sshds_under(self.nodes.path());
    }
}

/// Kills the sshds of the plugin's nodes under a directory when dropped: a failed test
/// must not leave them behind.
pub(crate) struct KillSshds(pub PathBuf);

impl Drop for KillSshds {
    fn drop(&mut self) {
        kill_sshds_under(&self.0);
    }
}

fn kill_sshds_under(dir: &Path) {
    for pid in sshds_under(dir) {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
}

/// Live sshd processes whose command line names a directory under `dir`.
pub(crate) fn sshds_under(dir: &Path) -> Vec<i32> {
    let needle = dir.display().to_string();
    engine::provider::process_ids()
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = state
                .rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'));
            cmdline.contains("sshd") && cmdline.contains(&needle) && !zombie
        })
        .collect()
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

async fn run(pool: &SessionPool, record: &NodeRecord, command: &str) -> (u32, String) {
    let (sender, mut receiver) = mpsc::channel(64);
    let options = RunOptions {
        timeout: CONFIRM,
        output: Some(sender),
    };
    let outcome = pool
        .run(&record.ssh_target(), command, options)
        .await
        .unwrap();
    let mut stdout = Vec::new();
    while let Some(OutputChunk { bytes, .. }) = receiver.recv().await {
        stdout.extend(bytes);
    }
    (outcome.exit.0, String::from_utf8(stdout).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_nodes_are_made_confirmed_adopted_and_deleted_through_the_plugin() {
    let fixture = Fixture::new(Path::new(PLUGINS)).await;
    let settings = fixture.settings(TEST_PLUGIN, serde_json::json!({}));
    let spec = fixture.spec("c1-1", &settings);
    let pool = SessionPool::new(PoolConfig::default());

    let started = Instant::now();
    let record = fixture.provider.create(&spec).await.unwrap();
    let create = started.elapsed();
    assert_eq!(record.provider, "exec");
    assert!(record.host.starts_with("127.77."), "{}", record.host);
    let state: ExecNodeState = serde_json::from_value(record.provider_state.clone()).unwrap();
    assert_eq!(state.plugin, TEST_PLUGIN);
    assert_eq!(state.provider, "lab");
    assert_eq!(state.tenant_id.as_deref(), Some(DEFAULT_TENANT_ID));
    assert!(state.state["pid"].is_number(), "{}", state.state);
    assert!(record.client_key_path.starts_with(&fixture.keys));

    let started = Instant::now();
    fixture
        .provider
        .confirm(&record, &pool, CONFIRM)
        .await
        .unwrap();
    let confirm = started.elapsed();
    let (code, out) = run(
        &pool,
        &record,
        "echo \"hello from $(hostname) as $(id -un)\"",
    )
    .await;
    assert_eq!(code, 0);
    assert!(out.starts_with("hello from "), "{out}");
    assert_eq!(
        fixture.provider.presence(&record).await.unwrap(),
        NodePresence::Present
    );

    // A retried create is the same node: one sshd, the same address and host key.
    let again = fixture.provider.create(&spec).await.unwrap();
    assert_eq!(again, record);
    assert_eq!(fixture.sshds().len(), 1, "one node");

    // Another process (a new provider with the same key dir) adopts it from the record;
    // a node whose sshd died is restarted on the same address and key.
    let restarted =
        ExecProvider::new(fixture.store.clone(), &fixture.plugin_dir, &fixture.keys).unwrap();
    assert_eq!(restarted.adopt(&record).await.unwrap(), record);
    for pid in fixture.sshds() {
        std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
    }
    pool.close(&record.id).await;
    // The plugin says the dead machine is gone (healing would replace it).
    assert_eq!(
        restarted.presence(&record).await.unwrap(),
        NodePresence::Gone
    );
    let adopted = restarted.adopt(&record).await.unwrap();
    assert_eq!(
        restarted.presence(&adopted).await.unwrap(),
        NodePresence::Present
    );
    assert_eq!(
        (&adopted.host, adopted.port, &adopted.host_key),
        (&record.host, record.port, &record.host_key)
    );
    restarted.confirm(&adopted, &pool, CONFIRM).await.unwrap();
    assert_eq!(run(&pool, &adopted, "true").await.0, 0);

    pool.close(&record.id).await;
    let started = Instant::now();
    restarted.delete(&adopted).await.unwrap();
    let delete = started.elapsed();
    restarted.delete(&adopted).await.unwrap();
    assert_eq!(fixture.sshds(), Vec::<i32>::new(), "no sshd is left");
    assert!(!fixture.nodes.path().join("c1-1").exists());
    // Deleted: the plugin refuses with code `gone`, which is an answer.
    assert_eq!(
        restarted.presence(&adopted).await.unwrap(),
        NodePresence::Gone
    );
    let gone = restarted.adopt(&adopted).await.unwrap_err().to_string();
    assert!(
        gone.contains("does not exist") && gone.contains("gone"),
        "{gone}"
    );
    eprintln!("exec plugin node: create {create:?}, confirm {confirm:?}, delete {delete:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_plugins_are_bare_names_in_the_plugin_directory() {
    let plugins = tempfile::tempdir().unwrap();
    let fixture = Fixture::new(plugins.path()).await;
    let outside = plugins.path().join("..").join("outside-plugin");
    for name in [
        "../outside-plugin",
        "/bin/sh",
        "a/b",
        "..",
        ".hidden",
        "a b",
    ] {
        let settings = fixture.settings(name, serde_json::json!({}));
        let error = fixture
            .provider
            .create(&fixture.spec("n-1", &settings))
            .await
            .unwrap_err();
        assert!(
            matches!(error, ProviderError::InvalidPluginName { .. }),
            "{name}: {error}"
        );
        assert!(error.to_string().contains("not allowed"), "{error}");
    }
    assert!(!outside.exists());

    let settings = fixture.settings("no-such-plugin", serde_json::json!({}));
    let error = fixture
        .provider
        .create(&fixture.spec("n-1", &settings))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("no-such-plugin")
            && error.contains(&plugins.path().display().to_string())
            && error.contains("no such file"),
        "{error}"
    );

    std::fs::write(plugins.path().join("not-executable"), "#!/bin/sh\n").unwrap();
    let settings = fixture.settings("not-executable", serde_json::json!({}));
    let error = fixture
        .provider
        .check(DEFAULT_TENANT_ID, &settings)
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("not executable"), "{error}");

    let mut no_plugin = fixture.settings("x", serde_json::json!({}));
    no_plugin.settings.remove("plugin");
    let error = fixture
        .provider
        .check(DEFAULT_TENANT_ID, &no_plugin)
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("names no plugin"), "{error}");
}

/// Writes an executable shell plugin `name` into `dir`.
fn write_plugin(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misbehaving_exec_plugins_fail_with_clear_errors() {
    let plugins = tempfile::tempdir().unwrap();
    let dir = plugins.path();
    write_plugin(
        dir,
        "garbage",
        "cat > /dev/null; echo 'hello, I am not JSON'",
    );
    write_plugin(
        dir,
        "crashes",
        "cat > /dev/null; echo 'Traceback: the cloud API broke' >&2; exit 3",
    );
    write_plugin(
        dir,
        "wrong-version",
        "cat > /dev/null; echo '{\"protocol\": 2, \"ok\": true}'",
    );
    write_plugin(
        dir,
        "no-node",
        "cat > /dev/null; echo '{\"protocol\": 1, \"ok\": true}'",
    );
    write_plugin(
        dir,
        "bad-key",
        "cat > /dev/null; echo '{\"protocol\": 1, \"ok\": true, \"node\": {\"host\": \"127.0.0.1\", \
         \"port\": 22, \"user\": \"root\", \"host_key\": \"not a key\"}}'",
    );
    write_plugin(
        dir,
        "refuses",
        "cat > /dev/null; echo '{\"protocol\": 1, \"ok\": false, \"error\": \"quota of 10 machines reached\", \
         \"code\": \"quota\"}'",
    );
    write_plugin(dir, "chatty", "cat > /dev/null; yes '{}' | head -c 2000000");
    // Sleeps in a child, as a plugin waiting on a slow API does: the timeout must kill
    // the whole process group, not just the shell.
    write_plugin(
        dir,
        "sleeper",
        "cat > /dev/null; sleep 31.5 & wait; echo '{\"protocol\": 1, \"ok\": true}'",
    );
    let fixture = Fixture::new(dir).await;
    let error_of = |plugin: &'static str, extra: serde_json::Value| {
        let settings = fixture.settings(plugin, extra);
        let spec = fixture.spec("n-1", &settings);
        let provider = &fixture.provider;
        async move { provider.create(&spec).await.unwrap_err().to_string() }
    };

    let error = error_of("garbage", serde_json::json!({})).await;
    assert!(
        error.contains("\"garbage\"")
            && error.contains("`create`")
            && error.contains("not a JSON response")
            && error.contains("hello, I am not JSON"),
        "{error}"
    );
    let error = error_of("crashes", serde_json::json!({})).await;
    assert!(
        error.contains("\"crashes\"")
            && error.contains("exit status: 3")
            && error.contains("without a JSON error")
            && error.contains("Traceback: the cloud API broke"),
        "{error}"
    );
    let error = error_of("wrong-version", serde_json::json!({})).await;
    assert!(
        error.contains("protocol version 2") && error.contains("Corral speaks version 1"),
        "{error}"
    );
    let error = error_of("no-node", serde_json::json!({})).await;
    assert!(error.contains("no \"node\""), "{error}");
    let error = error_of("bad-key", serde_json::json!({})).await;
    assert!(
        error.contains("\"host_key\" is not an OpenSSH public key"),
        "{error}"
    );
    let error = error_of("refuses", serde_json::json!({})).await;
    assert!(
        error.contains("refused `create` for node n-1: quota of 10 machines reached (code quota)"),
        "{error}"
    );
    let error = error_of("chatty", serde_json::json!({})).await;
    assert!(error.contains("more than 1024 KiB"), "{error}");

    let started = Instant::now();
    let error = error_of("sleeper", serde_json::json!({"timeout_s": 1})).await;
    assert!(
        error.contains("did not finish `create` for node n-1 within 1s"),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    let sleeping = engine::provider::process_ids().any(|pid| {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        String::from_utf8_lossy(&cmdline).contains("31.5")
    });
    assert!(!sleeping, "the plugin's child was killed with it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_credentials_reach_the_plugin_on_stdin_only_and_never_an_error() {
    let plugins = tempfile::tempdir().unwrap();
    // The test plugin, and one that repeats its whole request on stderr and as its error.
    std::os::unix::fs::symlink(
        Path::new(PLUGINS).join(TEST_PLUGIN),
        plugins.path().join(TEST_PLUGIN),
    )
    .unwrap();
    write_plugin(
        plugins.path(),
        "leaky",
        "request=$(cat); echo \"got $request\" >&2; \
         printf '{\"protocol\": 1, \"ok\": false, \"error\": \"bad request %s\"}' \
         \"$(echo \"$request\" | tr -d '\\\"')\"",
    );
    write_plugin(plugins.path(), "leaky-crash", "cat >&2; exit 1");
    let fixture = Fixture::new(plugins.path()).await;
    fixture.set_token(TOKEN).await;
    let settings = fixture.settings(
        TEST_PLUGIN,
        serde_json::json!({"expect_token_sha256": sha256_hex(TOKEN.as_bytes())}),
    );

    let message = fixture
        .provider
        .check(DEFAULT_TENANT_ID, &settings)
        .await
        .unwrap();
    let sent = serde_json::json!({ "token": TOKEN }).to_string();
    assert!(message.starts_with("token accepted"), "{message}");
    assert!(
        message.contains(&sha256_hex(sent.as_bytes())),
        "the plugin read exactly the credentials on stdin: {message}"
    );
    let last_call = std::fs::read_to_string(fixture.nodes.path().join("last-call.json")).unwrap();
    assert!(
        !last_call.contains(TOKEN),
        "not in argv or env: {last_call}"
    );
    let last_call: serde_json::Value = serde_json::from_str(&last_call).unwrap();
    let environ: Vec<&String> = last_call["environ"].as_object().unwrap().keys().collect();
    // What a python3 launcher adds on its way (pyenv's shim is a shell script; Python
    // itself may set LC_CTYPE) is not Corral's; the test process's own variables
    // (CARGO_*, RUST_*...) must not be there.
    let launcher = |name: &str| {
        ["PWD", "SHLVL", "LC_CTYPE", "_"].contains(&name)
            || name.starts_with("PYENV")
            || name.starts_with("_PYENV")
    };
    for name in &environ {
        assert!(
            ["PATH", "HOME", "LANG", "CORRAL_PROVIDER_PROTOCOL"].contains(&name.as_str())
                || launcher(name),
            "the plugin's environment is cleared: {environ:?}"
        );
    }
    assert_eq!(last_call["environ"]["CORRAL_PROVIDER_PROTOCOL"], "1");

    fixture.set_token("a-wrong-token").await;
    let error = fixture
        .provider
        .check(DEFAULT_TENANT_ID, &settings)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ProviderError::PluginRefused { code: Some(code), .. } if code == "auth"),
        "{error}"
    );
    assert!(
        error.to_string().contains("the token was rejected"),
        "{error}"
    );
    assert!(!error.to_string().contains("a-wrong-token"));

    fixture.set_token(TOKEN).await;
    for plugin in ["leaky", "leaky-crash"] {
        let error = fixture
            .provider
            .create(&fixture.spec("n-1", &fixture.settings(plugin, serde_json::json!({}))))
            .await
            .unwrap_err()
            .to_string();
        assert!(!error.contains(TOKEN), "{plugin}: {error}");
        assert!(error.contains("[credential]"), "{plugin}: {error}");
    }
}

/// A node made for a user who set their own credentials, on a provider that takes
/// users' own (`user_credentials`), is made, reached and deleted with theirs: the test
/// plugin refuses every call carrying another token. Where the provider does not take
/// them, the same user's node gets the tenant's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_nodes_of_a_users_cluster_use_the_owners_own_credentials() {
    const USER_TOKEN: &str = "s3cr3t-token-of-alice";
    let fixture = Fixture::new(Path::new(PLUGINS)).await;
    fixture.set_token(TOKEN).await;
    let alice = fixture
        .store
        .create_user(&NewUser {
            tenant_id: DEFAULT_TENANT_ID.into(),
            username: "alice".into(),
            role: Role::User,
            password_hash: "x".into(),
        })
        .await
        .unwrap()
        .id;
    let own = Credentials::from_json(serde_json::json!({ "token": USER_TOKEN })).unwrap();
    let expect_alice = sha256_hex(USER_TOKEN.as_bytes());
    let allowed = fixture.settings(
        TEST_PLUGIN,
        serde_json::json!({"expect_token_sha256": expect_alice, "user_credentials": true}),
    );
    fixture
        .store
        .set_user_provider_credentials(
            DEFAULT_TENANT_ID,
            &alice,
            "lab",
            &engine::provider::binding::of(EXEC_PROVIDER, &allowed),
            &own,
            None,
            now_ms(),
        )
        .await
        .unwrap();
    let spec = NodeSpec {
        requested_by: Some(alice.clone()),
        ..fixture.spec("c1-1", &allowed)
    };
    let record = fixture.provider.create(&spec).await.unwrap();
    let state: ExecNodeState = serde_json::from_value(record.provider_state.clone()).unwrap();
    assert_eq!(state.credentials_user.as_deref(), Some(alice.as_str()));
    let pool = SessionPool::new(PoolConfig::default());
    fixture
        .provider
        .confirm(&record, &pool, CONFIRM)
        .await
        .unwrap();
    pool.close(&record.id).await;
    // The provider check is an admin's: the tenant's token, which this plugin refuses.
    let checked = fixture.provider.check(DEFAULT_TENANT_ID, &allowed).await;
    assert!(
        matches!(&checked, Err(ProviderError::PluginRefused { code: Some(code), .. }) if code == "auth"),
        "{checked:?}"
    );
    fixture.provider.delete(&record).await.unwrap();
    assert_eq!(fixture.sshds(), Vec::<i32>::new(), "no sshd is left");

    // Without `user_credentials`, alice's cluster is made with the tenant's token.
    let not_allowed = fixture.settings(
        TEST_PLUGIN,
        serde_json::json!({"expect_token_sha256": sha256_hex(TOKEN.as_bytes())}),
    );
    let spec = NodeSpec {
        requested_by: Some(alice.clone()),
        ..fixture.spec("c1-2", &not_allowed)
    };
    let record = fixture.provider.create(&spec).await.unwrap();
    let state: ExecNodeState = serde_json::from_value(record.provider_state.clone()).unwrap();
    assert_eq!(state.credentials_user, None);
    fixture.provider.delete(&record).await.unwrap();
}

/// The attack of issue 38: a tenant holding its exec client key (every Ansible run gets
/// a copy of it) used it to log in to another tenant's exec node. Each tenant's nodes
/// now authorize that tenant's key only: tenant B's node refuses tenant A's key, and
/// takes B's. A node recorded before keys were per tenant keeps the shared key it was
/// made with, through adopt too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exec_node_refuses_another_tenants_client_key() {
    let fixture = Fixture::new(Path::new(PLUGINS)).await;
    let other = fixture
        .store
        .create_tenant(&engine::store::tenants::NewTenant {
            name: "other".to_owned(),
            max_clusters: None,
            max_nodes: None,
            provider_types: engine::store::tenants::NewTenant::all_provider_types(),
        })
        .await
        .unwrap();
    let settings = fixture.settings(TEST_PLUGIN, serde_json::json!({}));
    let pool = SessionPool::new(PoolConfig::default());
    let mine = fixture
        .provider
        .create(&fixture.spec("a-1", &settings))
        .await
        .unwrap();
    let theirs_spec = NodeSpec {
        cluster_id: Some("b".to_owned()),
        provider: settings.clone(),
        ..NodeSpec::for_tenant("b-1", other.id.clone())
    };
    let theirs = fixture.provider.create(&theirs_spec).await.unwrap();
    assert_ne!(mine.client_key_path, theirs.client_key_path);
    let their_state: ExecNodeState = serde_json::from_value(theirs.provider_state.clone()).unwrap();
    assert_eq!(
        their_state.client_key.as_deref(),
        Some(format!("client_ed25519.tenant-{}", other.id).as_str())
    );

    // What tenant A's playbook holds: its own node's key, aimed at tenant B's node.
    let mut attack = fixture.provider.ssh_target(&theirs).await.unwrap();
    attack.client_key = fixture.provider.ssh_target(&mine).await.unwrap().client_key;
    let options = RunOptions {
        timeout: CONFIRM,
        output: None,
    };
    let refused = pool.run(&attack, "id -u", options.clone()).await;
    assert!(refused.is_err(), "tenant A's key opened tenant B's node");
    let error = refused.unwrap_err().to_string();
    assert!(error.contains("b-1"), "{error}");
    pool.close("b-1").await;
    let their_target = fixture.provider.ssh_target(&theirs).await.unwrap();
    let outcome = pool
        .run(&their_target, "true", options.clone())
        .await
        .unwrap();
    assert_eq!(outcome.exit.0, 0);
    pool.close("b-1").await;

    // Both keys are sealed in the database, one row per tenant.
    for tenant in [DEFAULT_TENANT_ID, other.id.as_str()] {
        let name = format!("exec:client_ed25519.tenant-{tenant}");
        assert!(
            fixture.store.client_key(&name).await.unwrap().is_some(),
            "{name}"
        );
    }

    // A node made by an earlier version: its record names no key, and its machine
    // authorizes the key all exec nodes then shared (here: A's, stored under the shared
    // name). It is reached, adopted and deleted with that key.
    let shared = fixture
        .store
        .client_key(&format!("exec:client_ed25519.tenant-{DEFAULT_TENANT_ID}"))
        .await
        .unwrap()
        .unwrap();
    use secrecy::ExposeSecret as _;
    fixture
        .store
        .ensure_client_key(
            "exec:client_ed25519",
            (
                &shared.public_openssh,
                shared.private_openssh.expose_secret(),
            ),
        )
        .await
        .unwrap();
    let mut earlier = mine.clone();
    let mut state: ExecNodeState = serde_json::from_value(earlier.provider_state.clone()).unwrap();
    state.client_key = None;
    earlier.provider_state = serde_json::to_value(&state).unwrap();
    earlier.client_key_path = fixture.keys.join("client_ed25519");
    assert!(engine::provider::shares_client_key(&earlier));
    assert!(!engine::provider::shares_client_key(&mine));
    let target = fixture.provider.ssh_target(&earlier).await.unwrap();
    assert_eq!(
        target.client_key.path(),
        fixture.keys.join("client_ed25519")
    );
    let adopted = fixture.provider.adopt(&earlier).await.unwrap();
    assert_eq!(adopted.client_key_path, fixture.keys.join("client_ed25519"));
    let adopted_state: ExecNodeState =
        serde_json::from_value(adopted.provider_state.clone()).unwrap();
    assert_eq!(adopted_state.client_key, None, "it keeps the shared key");
    fixture
        .provider
        .confirm(&adopted, &pool, CONFIRM)
        .await
        .unwrap();
    pool.close("a-1").await;
    fixture.provider.delete(&adopted).await.unwrap();
    fixture.provider.delete(&theirs).await.unwrap();
    assert_eq!(fixture.sshds(), Vec::<i32>::new(), "no sshd is left");
}

/// The attack of issue 38: `corral worker --tenant acme` adopted every tenant's nodes at
/// start, running another tenant's plugin with that tenant's credentials. Two tenants
/// each have a live exec node whose plugin logs every request it gets (credentials
/// included); a pool dedicated to `acme` adopts acme's node only, and a shared pool,
/// once acme is served by dedicated workers only, adopts the other tenant's node only.
/// The monitor's presence sweep (issue 40) keeps to the same tenants.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dedicated_worker_adopts_only_its_tenants_nodes() {
    use engine::queue::WorkerScope;
    use engine::store::clusters::nodes::{NodeRow, NodeState};
    use engine::worker::{WorkerPool, WorkerSettings};

    let plugins = tempfile::tempdir().unwrap();
    let log = plugins.path().join("requests.log");
    write_plugin(
        plugins.path(),
        "adopt-log",
        &format!(
            "cat >> '{}'; echo >> '{}'; echo '{{\"protocol\": 1, \"ok\": true, \"node\": \
             {{\"host\": \"127.0.0.1\", \"port\": 22, \"user\": \"root\"}}}}'",
            log.display(),
            log.display()
        ),
    );
    let fixture = Fixture::new(plugins.path()).await;
    let acme = fixture
        .store
        .create_tenant(&engine::store::tenants::NewTenant {
            name: "acme".to_owned(),
            max_clusters: None,
            max_nodes: None,
            provider_types: engine::store::tenants::NewTenant::all_provider_types(),
        })
        .await
        .unwrap();
    let settings = fixture.settings("adopt-log", serde_json::json!({}));
    let host_key = engine::ssh::ClientKeyPair::generate("pinned").unwrap();
    for (tenant, name, token) in [
        (acme.id.as_str(), "acme-node", "token-of-acme"),
        (DEFAULT_TENANT_ID, "other-node", "token-of-default"),
    ] {
        let credentials = Credentials::from_json(serde_json::json!({ "token": token })).unwrap();
        fixture
            .store
            .set_provider_credentials(tenant, "lab", &credentials, None, now_ms())
            .await
            .unwrap();
        let mut cluster = engine::testing::bare_cluster(tenant, name);
        cluster.state = engine::operations::ClusterState::Active;
        let cluster = fixture.store.create_cluster(&cluster, 0).await.unwrap();
        let state = ExecNodeState {
            plugin: "adopt-log".to_owned(),
            provider: "lab".to_owned(),
            settings: settings.settings.clone(),
            tenant_id: Some(tenant.to_owned()),
            cluster_id: Some(cluster.id.clone()),
            state: serde_json::Value::Null,
            credentials_user: None,
            client_key: None,
        };
        let record = NodeRecord {
            id: name.to_owned(),
            provider: "exec".to_owned(),
            host: "127.0.0.1".to_owned(),
            port: 22,
            user: "root".to_owned(),
            host_key: engine::ssh::HostKey::from_openssh(&host_key.public_openssh).unwrap(),
            client_key_path: fixture.keys.join("client_ed25519"),
            provider_state: serde_json::to_value(&state).unwrap(),
            address: None,
        };
        fixture
            .store
            .save_node(
                &NodeRow {
                    cluster_id: cluster.id.clone(),
                    number: 1,
                    hostname: Some("127.0.0.1".to_owned()),
                    hardwaretype: "small".to_owned(),
                    imagetype: "debian".to_owned(),
                    services_json: "[]".to_owned(),
                    provider_json: Some(serde_json::to_string(&record).unwrap()),
                    state: NodeState::Ready,
                },
                now_ms(),
            )
            .await
            .unwrap();
    }
    let adopted_by = |scope: WorkerScope| {
        let store = fixture.store.clone();
        let plugin_dir = plugins.path().to_owned();
        let keys = fixture.keys.clone();
        let log = log.clone();
        async move {
            let _ = std::fs::remove_file(&log);
            let executor = exec_executor(store, &plugin_dir, &keys);
            let pool = WorkerPool::start(
                executor,
                WorkerSettings {
                    scope,
                    ..WorkerSettings::default()
                },
            );
            pool.ready().await;
            pool.shutdown().await;
            std::fs::read_to_string(&log).unwrap_or_default()
        }
    };

    let dedicated = adopted_by(WorkerScope::Tenants(vec![acme.id.clone()])).await;
    assert!(dedicated.contains("\"acme-node\""), "{dedicated}");
    assert!(dedicated.contains("token-of-acme"), "{dedicated}");
    assert!(!dedicated.contains("other-node"), "{dedicated}");
    assert!(!dedicated.contains("token-of-default"), "{dedicated}");

    fixture
        .store
        .set_tenant_switch(&acme.id, TenantSwitch::DedicatedWorkers, true)
        .await
        .unwrap();
    let shared = adopted_by(WorkerScope::Shared).await;
    assert!(shared.contains("\"other-node\""), "{shared}");
    assert!(!shared.contains("acme-node"), "{shared}");
    assert!(!shared.contains("token-of-acme"), "{shared}");

    // The monitor's questions about machines keep to the pool's tenants as well.
    let swept_by = |scope: WorkerScope| {
        let executor = exec_executor(fixture.store.clone(), plugins.path(), &fixture.keys);
        let log = log.clone();
        async move {
            let _ = std::fs::remove_file(&log);
            let mut memory = engine::heal::Memory::default();
            engine::heal::heal_clusters(&executor, &scope, &mut memory).await;
            std::fs::read_to_string(&log).unwrap_or_default()
        }
    };
    let shared = swept_by(WorkerScope::Shared).await;
    assert!(
        shared.contains("\"presence\"") && shared.contains("\"other-node\""),
        "{shared}"
    );
    assert!(!shared.contains("acme-node"), "{shared}");
    let dedicated = swept_by(WorkerScope::Tenants(vec![acme.id.clone()])).await;
    assert!(dedicated.contains("\"acme-node\""), "{dedicated}");
    assert!(!dedicated.contains("other-node"), "{dedicated}");
}

/// An executor whose only provider is the exec provider over `plugin_dir`: a worker
/// process's, with its own queue.
fn exec_executor(store: Store, plugin_dir: &Path, keys: &Path) -> engine::execute::Executor {
    use engine::execute::{Executor, ExecutorSettings, Providers};
    let exec = ExecProvider::new(store.clone(), plugin_dir, keys).unwrap();
    Executor::new(
        engine::queue::Queue::new(store),
        Providers::new().with(std::sync::Arc::new(exec)),
        std::sync::Arc::new(SessionPool::new(PoolConfig::default())),
        engine::resources::ResourceFiles::in_directory(keys.join("resources")),
        ExecutorSettings::default(),
    )
}

/// A playbook for [`ansible_refuses_exec_nodes_that_share_the_old_client_key`]: it
/// leaves a mark on the node.
const MARK_PLAYBOOK: &str = r#"- name: Mark
  hosts: all
  gather_facts: false
  tasks:
    - name: Leave a mark
      ansible.builtin.copy:
        dest: "~/corral-mark.txt"
        content: "marked"
"#;

/// The guard of issue 38 (c75be80): an Ansible run hands tenant code a copy of its
/// node's client key, so Ansible refuses an exec node whose record says it authorizes
/// the key every tenant's exec nodes once shared. A cluster of exec nodes made with
/// the tenant's own key runs its playbook (install, then start); once its node's record
/// is one made before keys were per tenant, the same playbook's next run is refused
/// with a setup error that says why and what to do, and Ansible never runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ansible_refuses_exec_nodes_that_share_the_old_client_key() {
    use engine::operations::ClusterChange;
    use engine::queue::JobState;
    use engine::resources::ResourceKind;
    use engine::store::clusters::nodes::NodeRow;

    const JOB_LIMIT: Duration = Duration::from_secs(180);
    let nodes = tempfile::Builder::new()
        .prefix("corral-exec-ansible-")
        .tempdir()
        .unwrap();
    let _cleanup = KillSshds(nodes.path().to_owned());
    let keys = tempfile::tempdir().unwrap();
    let play = serde_json::json!({"type": "ansible", "fields": {"playbook": "files/mark.yml"}});
    let bundle = serde_json::json!({
        "providers": [{"name": "plugin-nodes", "providertype": "exec",
                       "provisioner": {"plugin": TEST_PLUGIN,
                                       "nodes_dir": nodes.path().display().to_string()}}],
        "hardwaretypes": [{"name": "small",
                           "providermap": {"plugin-nodes": {"flavor": "local-small"}}}],
        "imagetypes": [{"name": "debian", "providermap": {"plugin-nodes": {"image": "host"}}}],
        "services": [{"name": "mark",
                      "provisioner": {"actions": {"install": play, "start": play}}}],
        "clustertemplates": [{"name": "marked",
                              "compatibility": {"services": ["mark"],
                                                "hardwaretypes": ["small"],
                                                "imagetypes": ["debian"]},
                              "defaults": {"services": ["mark"], "provider": "plugin-nodes",
                                           "hardwaretype": "small", "imagetype": "debian",
                                           "config": {}}}],
    });
    let staged = [(
        ResourceKind::Files,
        "mark.yml",
        MARK_PLAYBOOK.as_bytes().to_vec(),
    )];
    let mut lab =
        crate::lab::Lab::start_catalog(Backend::Sqlite, &bundle.to_string(), &staged).await;
    lab.exec = Some(std::sync::Arc::new(
        ExecProvider::new(lab.store.clone(), Path::new(PLUGINS), keys.path()).unwrap(),
    ));
    lab.restart_workers().await;

    let (cluster, created) = lab.create_from("marked", "keyed", 1).await;
    assert_eq!(lab.wait(&created, JOB_LIMIT).await, JobState::Succeeded);
    let node = lab.store.list_nodes(&cluster.id).await.unwrap().remove(0);
    let made: NodeRecord = serde_json::from_str(node.provider_json.as_deref().unwrap()).unwrap();
    assert!(
        !engine::provider::shares_client_key(&made),
        "a new exec node has its tenant's key"
    );
    let started = lab
        .change(&cluster.id, ClusterChange::Start { services: None })
        .await;
    assert_eq!(
        lab.wait(&started, JOB_LIMIT).await,
        JobState::Succeeded,
        "the playbook runs on a node with the tenant's own key"
    );

    // The node as an earlier version recorded it: no key of its own.
    let save = |record: &NodeRecord| NodeRow {
        cluster_id: node.cluster_id.clone(),
        number: node.number,
        hostname: node.hostname.clone(),
        hardwaretype: node.hardwaretype.clone(),
        imagetype: node.imagetype.clone(),
        services_json: node.services_json.clone(),
        provider_json: Some(serde_json::to_string(record).unwrap()),
        state: node.state,
    };
    let mut earlier = made.clone();
    let mut state: ExecNodeState = serde_json::from_value(earlier.provider_state.clone()).unwrap();
    state.client_key = None;
    earlier.provider_state = serde_json::to_value(&state).unwrap();
    assert!(engine::provider::shares_client_key(&earlier));
    lab.store
        .save_node(&save(&earlier), now_ms())
        .await
        .unwrap();
    let refused = lab
        .change(&cluster.id, ClusterChange::Start { services: None })
        .await;
    assert_eq!(lab.wait(&refused, JOB_LIMIT).await, JobState::Failed);
    let mut errors = String::new();
    let mut output = String::new();
    for task in lab.queue.job_tasks(&refused).await.unwrap() {
        for attempt in lab.queue.task_attempts(&task.id).await.unwrap() {
            errors.push_str(attempt.error.as_deref().unwrap_or_default());
            output.push_str(&attempt.stdout);
            output.push_str(&attempt.stderr);
        }
    }
    assert!(
        errors.contains("made before exec keys were per tenant")
            && errors.contains("replace the node"),
        "{errors}"
    );
    assert!(!output.contains("PLAY ["), "Ansible ran: {output}");

    // Its own record back, the cluster goes as usual.
    lab.store.save_node(&save(&made), now_ms()).await.unwrap();
    let deleted = lab
        .change(&cluster.id, ClusterChange::Delete { force: false })
        .await;
    assert_eq!(lab.wait(&deleted, JOB_LIMIT).await, JobState::Succeeded);
    assert_eq!(sshds_under(nodes.path()), Vec::<i32>::new());
}
