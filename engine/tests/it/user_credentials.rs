//! Users' own provider credentials, attacked through the service as users and admins
//! use it, with real workers and real plugins (the test plugin, and `echo-input`, which
//! writes what it gets to a file and repeats it JSON-, URL- and shell-escaped):
//! - a second user of the tenant grows the owner's cluster: the new nodes are not made
//!   with the owner's credentials (the plan says the tenant's are used);
//! - an admin turns the provider a user set their own for into a plugin that echoes its
//!   input: the user's secret never reaches it, and the plan and the job say why;
//! - a secret with quotes echoed back escaped is blotted out of job errors, output, the
//!   provider check's report and the audit log.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use api_types::{ClusterChangeRequest, ClusterCreateRequest, ProviderTestRequest};
use engine::principal::Principal;
use engine::provider::{ExecNodeState, ExecProvider, NodeRecord};
use engine::queue::{JobId, JobState};
use engine::service::{AuditQuery, Caller, CredentialsOwner, Service, ServiceError};
use engine::store::tenants::DEFAULT_TENANT_ID;
use engine::store::users::{NewUser, Role};
use engine::store::Backend;
use sha2::Digest as _;

use crate::exec_provider::KillSshds;
use crate::lab::Lab;

const JOB_LIMIT: Duration = Duration::from_secs(120);
const PLUGINS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/plugins");
const ALICE_TOKEN: &str = "alice-own-token-1234";
const TENANT_TOKEN: &str = "tenant-token-5678";

/// Repeats its request on stderr, and the token percent-encoded (path and form style)
/// and shell-quoted, as its error (`test`) or before failing (every other call), after
/// appending the request to the file its `capture` setting names.
const ECHO_INPUT: &str = r#"#!/usr/bin/env python3
import json, shlex, sys, urllib.parse
request = json.load(sys.stdin)
settings = request["provider"]["settings"]
token = (request.get("credentials") or {}).get("token", "")
with open(settings["capture"], "a") as capture:
    capture.write(json.dumps(request) + "\n")
forms = " ".join([json.dumps(request), urllib.parse.quote(token, safe=""),
                  urllib.parse.quote_plus(token), shlex.quote(token)])
if request["op"] == "test":
    print(json.dumps({"protocol": 1, "ok": False, "error": "rejected " + forms}))
else:
    print("cannot use " + forms, file=sys.stderr)
    sys.exit(1)
"#;

/// A demo lab whose exec plugins are the test plugin and `echo-input`, a service over
/// it, and callers: the tenant's admin, and two users.
struct World {
    lab: Lab,
    service: Service,
    admin: Caller,
    alice: Caller,
    bob: Caller,
    nodes: tempfile::TempDir,
    capture: std::path::PathBuf,
    _plugins: tempfile::TempDir,
    _keys: tempfile::TempDir,
    _cleanup: KillSshds,
}

async fn world() -> World {
    let keys = tempfile::tempdir().unwrap();
    let plugins = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        Path::new(PLUGINS).join("corral-test-provider"),
        plugins.path().join("corral-test-provider"),
    )
    .unwrap();
    let echo = plugins.path().join("echo-input");
    std::fs::write(&echo, ECHO_INPUT).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&echo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let nodes = tempfile::Builder::new()
        .prefix("corral-user-creds-")
        .tempdir()
        .unwrap();
    let cleanup = KillSshds(nodes.path().to_owned());
    let mut lab = Lab::start_demo_with_exec(Backend::Sqlite, keys.path()).await;
    lab.exec = Some(Arc::new(
        ExecProvider::new(lab.store.clone(), plugins.path(), keys.path()).unwrap(),
    ));
    lab.restart_workers().await;
    // Provider checks run on the lab's worker pool, which serves the default tenant.
    let service = Service::new(lab.queue.clone(), lab.resource_files());
    let caller = |name: &str, role: Role| {
        let store = lab.store.clone();
        let name = name.to_owned();
        async move {
            let user = store
                .create_user(&NewUser {
                    tenant_id: DEFAULT_TENANT_ID.into(),
                    username: name,
                    role,
                    password_hash: "x".into(),
                })
                .await
                .unwrap();
            Caller::new(Principal::from_user(&user), None)
        }
    };
    let admin = caller("tadmin", Role::TenantAdmin).await;
    let alice = caller("alice", Role::User).await;
    let bob = caller("bob", Role::User).await;
    let capture = nodes.path().join("captured.jsonl");
    World {
        lab,
        service,
        admin,
        alice,
        bob,
        capture,
        nodes,
        _plugins: plugins,
        _keys: keys,
        _cleanup: cleanup,
    }
}

fn sha256_hex(text: &str) -> String {
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

impl World {
    /// Defines the catalog provider `cloud` (replacing it) as `providertype` with
    /// `provisioner`, mapped like `local` in the hardware and image types.
    async fn define_cloud(&self, providertype: &str, provisioner: serde_json::Value) {
        let mut bundle = engine::catalog::export(&self.lab.store, DEFAULT_TENANT_ID)
            .await
            .unwrap();
        let providers = bundle["providers"].as_array_mut().unwrap();
        providers.retain(|provider| provider["name"] != "cloud");
        providers.push(serde_json::json!({
            "name": "cloud",
            "description": "where users' credentials go",
            "providertype": providertype,
            "provisioner": provisioner,
        }));
        for kind in ["hardwaretypes", "imagetypes"] {
            for entity in bundle[kind].as_array_mut().unwrap() {
                let local = entity["providermap"]["local"].clone();
                entity["providermap"]["cloud"] = local;
            }
        }
        let catalog = domain::catalog::coopr::import_bundle_value(bundle).unwrap();
        let report = engine::catalog::import(
            &self.lab.store,
            DEFAULT_TENANT_ID,
            &catalog,
            None,
            engine::store::now_ms(),
        )
        .await
        .unwrap();
        assert!(!report.has_errors(), "{report}");
    }

    fn create_request(&self, name: &str) -> ClusterCreateRequest {
        ClusterCreateRequest {
            name: name.to_owned(),
            template: "kv-cluster".to_owned(),
            size: 1,
            services: None,
            provider: Some("cloud".to_owned()),
            hardwaretype: None,
            imagetype: None,
            config: None,
            parameters: None,
        }
    }

    /// Every text a job left for people: its error, its tasks' errors, their attempts'
    /// output and errors, and its event stream.
    async fn job_texts(&self, job_id: &JobId) -> String {
        let pool = self.lab.store.pool();
        let mut texts: Vec<String> = Vec::new();
        for sql in [
            "SELECT COALESCE(error, '') FROM jobs WHERE id = $1",
            "SELECT COALESCE(error, '') FROM tasks WHERE job_id = $1",
            "SELECT a.stdout || a.stderr || COALESCE(a.error, '') FROM task_attempts a \
             JOIN tasks t ON t.id = a.task_id WHERE t.job_id = $1",
            "SELECT data FROM task_events WHERE job_id = $1",
        ] {
            let rows: Vec<String> = sqlx::query_scalar(sql)
                .bind(job_id)
                .fetch_all(pool)
                .await
                .unwrap();
            texts.extend(rows);
        }
        texts.join("\n")
    }

    /// The records of the cluster's made nodes.
    async fn records(&self, cluster_id: &str) -> Vec<NodeRecord> {
        self.lab
            .store
            .list_nodes(cluster_id)
            .await
            .unwrap()
            .into_iter()
            .filter_map(|node| node.provider_json)
            .map(|json| serde_json::from_str(&json).unwrap())
            .collect()
    }
}

fn credentials_user(record: &NodeRecord) -> Option<String> {
    serde_json::from_value::<ExecNodeState>(record.provider_state.clone())
        .unwrap()
        .credentials_user
}

/// Bob grows alice's cluster: alice set her own token, the only one the plugin takes;
/// bob has none, so his request is planned, and run, with the tenant's, which the
/// plugin refuses. Before, the new nodes were made with the owner's (alice's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_user_growing_the_owners_cluster_does_not_spend_the_owners_credentials() {
    let world = world().await;
    let (service, lab) = (&world.service, &world.lab);
    world
        .define_cloud(
            "exec",
            serde_json::json!({
                "plugin": "corral-test-provider",
                "nodes_dir": world.nodes.path().display().to_string(),
                "expect_token_sha256": sha256_hex(ALICE_TOKEN),
                "user_credentials": true,
            }),
        )
        .await;
    let tenant_token = serde_json::json!({ "token": TENANT_TOKEN }).to_string();
    service
        .set_provider_credentials(
            &world.admin,
            "cloud",
            CredentialsOwner::Tenant,
            &tenant_token,
        )
        .await
        .unwrap();
    let alice_token = serde_json::json!({ "token": ALICE_TOKEN }).to_string();
    service
        .set_provider_credentials(
            &world.alice,
            "cloud",
            CredentialsOwner::Caller,
            &alice_token,
        )
        .await
        .unwrap();

    let plan = service
        .preview_cluster(&world.alice, &world.create_request("alices"))
        .await
        .unwrap();
    let says = plan.credentials.unwrap();
    assert!(says.contains("your own credentials"), "{says}");
    let created = service
        .create_cluster(&world.alice, &world.create_request("alices"))
        .await
        .unwrap();
    assert_eq!(
        lab.wait(&JobId::from(created.job_id.as_str()), JOB_LIMIT)
            .await,
        JobState::Succeeded
    );
    let cluster = created.cluster.id.clone();

    // kv-cluster has odd sizes: 1 -> 3.
    let grow = ClusterChangeRequest::AddNodes { count: 2 };
    let bobs_plan = service
        .plan_change(&world.bob, &cluster, &grow)
        .await
        .unwrap();
    let says = bobs_plan.credentials.unwrap();
    assert!(says.contains("the tenant's credentials"), "{says}");
    let alices_plan = service
        .plan_change(&world.alice, &cluster, &grow)
        .await
        .unwrap();
    assert!(alices_plan
        .credentials
        .unwrap()
        .contains("your own credentials"));

    let grown = service
        .change_cluster(&world.bob, &cluster, &grow)
        .await
        .unwrap();
    assert_eq!(
        lab.wait(&JobId::from(grown.job_id.as_str()), JOB_LIMIT)
            .await,
        JobState::Failed
    );
    let texts = world.job_texts(&JobId::from(grown.job_id.as_str())).await;
    assert!(texts.contains("the token was rejected"), "{texts}");
    let records = world.records(&cluster).await;
    assert_eq!(
        records.len(),
        1,
        "only alice's own node was made: {records:?}"
    );
    assert_eq!(
        credentials_user(&records[0]).as_deref(),
        Some(world.alice.principal.user_id.as_str())
    );

    let deleted = service
        .delete_cluster(&world.alice, &cluster, true)
        .await
        .unwrap();
    assert_eq!(
        lab.wait(&JobId::from(deleted.job_id.as_str()), JOB_LIMIT)
            .await,
        JobState::Succeeded
    );
    assert_eq!(
        crate::exec_provider::sshds_under(world.nodes.path()),
        Vec::<i32>::new()
    );
}

/// Alice set her own AWS keys for the ec2 provider `cloud`; an admin turns `cloud` into
/// the `echo-input` plugin. Her plan and her create are refused, saying why; a job
/// submitted past the service fails saying the same; the plugin never ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_redirecting_a_provider_gets_no_users_own_credentials() {
    const SECRET: &str = "wJalrXUtnFEMI-alice-K7MDENG";
    let world = world().await;
    let (service, lab) = (&world.service, &world.lab);
    world
        .define_cloud(
            "ec2",
            serde_json::json!({"region": "us-east-1", "user_credentials": true}),
        )
        .await;
    let keys = serde_json::json!({"access_key_id": "AKIAALICE", "secret_access_key": SECRET});
    service
        .set_provider_credentials(
            &world.alice,
            "cloud",
            CredentialsOwner::Caller,
            &keys.to_string(),
        )
        .await
        .unwrap();
    world
        .define_cloud(
            "exec",
            serde_json::json!({
                "plugin": "echo-input",
                "capture": world.capture.display().to_string(),
                "user_credentials": true,
            }),
        )
        .await;

    let refused = service
        .preview_cluster(&world.alice, &world.create_request("alices"))
        .await
        .unwrap_err();
    let ServiceError::Conflict(message) = &refused else {
        panic!("{refused:?}")
    };
    assert!(
        message.contains("provider cloud has changed") && message.contains("enter them again"),
        "{message}"
    );
    let refused = service
        .create_cluster(&world.alice, &world.create_request("alices"))
        .await
        .unwrap_err();
    assert!(matches!(refused, ServiceError::Conflict(_)), "{refused:?}");
    assert!(lab
        .store
        .cluster_by_name(DEFAULT_TENANT_ID, "alices")
        .await
        .is_err());

    // Past the service's check (a job already queued when the admin struck): the job
    // refuses them itself.
    let (_, job) = lab
        .create_owned_on(
            "cloud",
            "kv-cluster",
            "queued",
            1,
            Some(world.alice.principal.user_id.clone()),
        )
        .await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Failed);
    let texts = world.job_texts(&job).await;
    assert!(
        texts.contains("provider cloud has changed") && texts.contains("enter them again"),
        "{texts}"
    );
    assert!(!texts.contains(SECRET));
    assert!(
        !world.capture.exists(),
        "the plugin never ran: {:?}",
        std::fs::read_to_string(&world.capture)
    );
}

/// The tenant's token has quotes, a space, `&` and `/`; `echo-input` repeats it JSON-,
/// URL- and shell-escaped in its refusal (the provider check) and on stderr (a job's
/// create). None of the forms is in the check's report, the audit log or the job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_echoed_back_escaped_is_blotted_out_everywhere() {
    const SECRET: &str = r#"q"u'o te&sl/ash"#;
    // Every escaped form holds one of these (raw, JSON and shlex: `te&sl`; percent:
    // `te%26sl`; backslashes: `te\&sl`).
    const FRAGMENTS: [&str; 3] = ["te&sl", "te%26sl", r"te\&sl"];
    let world = world().await;
    let (service, lab) = (&world.service, &world.lab);
    world
        .define_cloud(
            "exec",
            serde_json::json!({
                "plugin": "echo-input",
                "capture": world.capture.display().to_string(),
            }),
        )
        .await;
    let token = serde_json::json!({ "token": SECRET }).to_string();
    service
        .set_provider_credentials(&world.admin, "cloud", CredentialsOwner::Tenant, &token)
        .await
        .unwrap();
    let leaks = |text: &str| FRAGMENTS.iter().any(|fragment| text.contains(fragment));

    let report = service
        .test_provider(&world.admin, "cloud", &ProviderTestRequest::default())
        .await
        .unwrap();
    let report = serde_json::to_string(&report).unwrap();
    assert!(report.contains("[credential]"), "{report}");
    assert!(!leaks(&report), "{report}");
    let audit: Vec<String> = sqlx::query_scalar(
        "SELECT COALESCE(before_json, '') || COALESCE(after_json, '') FROM audit_log",
    )
    .fetch_all(lab.store.pool())
    .await
    .unwrap();
    assert!(
        audit.iter().any(|row| row.contains("[credential]")),
        "{audit:?}"
    );
    assert!(!audit.iter().any(|row| leaks(row)), "{audit:?}");
    let entries = service
        .audit_log(&world.admin, &AuditQuery::default())
        .await
        .unwrap();
    assert!(!leaks(&serde_json::to_string(&entries).unwrap()));

    let created = service
        .create_cluster(&world.admin, &world.create_request("echoed"))
        .await
        .unwrap();
    assert_eq!(
        lab.wait(&JobId::from(created.job_id.as_str()), JOB_LIMIT)
            .await,
        JobState::Failed
    );
    let texts = world.job_texts(&JobId::from(created.job_id.as_str())).await;
    assert!(texts.contains("[credential]"), "{texts}");
    assert!(!leaks(&texts), "{texts}");
    // The plugin did get the token: blotting is what kept it out.
    let captured = std::fs::read_to_string(&world.capture).unwrap();
    assert!(captured.contains("te&sl"), "{captured}");
}
