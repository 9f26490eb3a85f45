//! The `ec2` provider against moto, an emulator of AWS's APIs started by each test on a
//! free port of 127.0.0.1 (`scripts/bootstrap.sh` installs it): instances are made once
//! per node (also when created again), a cluster's nodes share one key pair and one
//! security group, nodes are adopted by a restarted provider, and the last node's delete
//! takes the cluster's key pair and group with it. Credentials come from a real store.
//!
//! The addresses moto gives instances are made up: every test sets `connect` to `none`,
//! and nothing here connects to an instance.

use std::time::{Duration, Instant};

use engine::provider::{
    ec2_group_name, ec2_key_name, Credentials, Ec2NodeState, Ec2Provider, HostKeySource,
    NodeProvider, NodeRecord, NodeSpec, Params, ProviderError, ProviderSettings, QueryClient,
    EC2_PROVIDER, EC2_VERSION,
};
use engine::ssh::{PoolConfig, SessionPool};
use engine::store::tenants::DEFAULT_TENANT_ID;
use engine::store::Store;
use engine::testing::moto::{Moto, MOTO_AMI, MOTO_REGION};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const REGION: &str = MOTO_REGION;
const PROVIDER: &str = "aws1";
const AMI: &str = MOTO_AMI;

fn provider_settings(moto: &Moto) -> ProviderSettings {
    let settings = serde_json::json!({
        "region": REGION,
        "endpoint": moto.endpoint,
        "connect": "none",
    });
    ProviderSettings {
        name: PROVIDER.to_owned(),
        settings: settings.as_object().unwrap().clone(),
    }
}

async fn store_with_credentials(db: &engine::testing::TestDatabase, json: Option<&str>) -> Store {
    let store = Store::open(&db.url)
        .await
        .unwrap()
        .with_secret_key(engine::testing::test_secret_key());
    if let Some(json) = json {
        set_credentials(&store, json).await;
    }
    store
}

async fn set_credentials(store: &Store, json: &str) {
    let credentials = Credentials::from_json_text(json).unwrap();
    store
        .set_provider_credentials(DEFAULT_TENANT_ID, PROVIDER, &credentials, None, 0)
        .await
        .unwrap();
}

const TEST_CREDENTIALS: &str =
    r#"{"access_key_id": "AKIDTESTING", "secret_access_key": "testing"}"#;

fn spec(moto: &Moto, cluster: &str, number: u32) -> NodeSpec {
    NodeSpec {
        cluster_id: Some(cluster.to_owned()),
        image: Some(AMI.to_owned()),
        flavor: Some("t3.small".to_owned()),
        ssh_user: Some("admin".to_owned()),
        provider: provider_settings(moto),
        ..NodeSpec::for_tenant(format!("{cluster}-{number}"), DEFAULT_TENANT_ID)
    }
}

fn state(record: &NodeRecord) -> Ec2NodeState {
    serde_json::from_value(record.provider_state.clone()).unwrap()
}

async fn instance_xml(moto: &Moto, instance: &str) -> String {
    moto.ec2()
        .call(
            "DescribeInstances",
            Params::new().set("InstanceId.1", instance).as_slice(),
        )
        .await
        .unwrap()
}

async fn key_pair_exists(moto: &Moto, cluster: &str) -> bool {
    match moto
        .ec2()
        .call(
            "DescribeKeyPairs",
            Params::new()
                .set("KeyName.1", ec2_key_name(cluster))
                .as_slice(),
        )
        .await
    {
        Ok(_) => true,
        Err(error) if error.is("InvalidKeyPair.NotFound") => false,
        Err(error) => panic!("{error}"),
    }
}

/// How many groups are named for the cluster (only groups themselves have a description;
/// their rules name groups too).
async fn group_ids(moto: &Moto, cluster: &str) -> usize {
    moto.ec2()
        .call(
            "DescribeSecurityGroups",
            Params::new()
                .filter("group-name", &[&ec2_group_name(cluster)])
                .as_slice(),
        )
        .await
        .unwrap()
        .matches("<groupDescription>")
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ec2_nodes_are_made_once_share_their_cluster_and_go_with_it() {
    let moto = Moto::start(&[]);
    let db = engine::testing::TestDatabase::sqlite();
    let store = store_with_credentials(&db, Some(TEST_CREDENTIALS)).await;
    let keys = tempfile::tempdir().unwrap();
    let provider = Ec2Provider::new(store.clone(), keys.path())
        .unwrap()
        .with_allowed_endpoints(vec![moto.endpoint.clone()]);
    let cluster = "c-ec2-lifecycle";

    let started = Instant::now();
    let first = provider.create(&spec(&moto, cluster, 1)).await.unwrap();
    let create_time = started.elapsed();
    let first_state = state(&first);
    assert_eq!(first.provider, "ec2");
    assert_eq!(first.user, "admin");
    assert_eq!(first.port, 22);
    assert_eq!(first_state.provider, PROVIDER);
    assert_eq!(first_state.region, REGION);
    assert_eq!(first_state.host_key_source, HostKeySource::Unknown);
    assert!(!Ec2Provider::reachable(&first));
    let described = instance_xml(&moto, &first_state.instance_id).await;
    assert!(described.contains("<name>running</name>"), "{described}");
    for tag in ["corral.cluster", "corral.node", "corral.tenant", "Name"] {
        assert!(
            described.contains(&format!("<key>{tag}</key>")),
            "{tag}: {described}"
        );
    }
    assert!(described.contains(&format!("<value>{cluster}-1</value>")));
    assert!(
        described.contains("<instanceType>t3.small</instanceType>"),
        "{described}"
    );
    assert!(described.contains(&format!("<keyName>{}</keyName>", ec2_key_name(cluster))));
    assert!(described.contains(&first_state.security_group_id));
    assert!(key_pair_exists(&moto, cluster).await);
    assert_eq!(group_ids(&moto, cluster).await, 1);
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&first.client_key_path)
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // Created again (a retried task): the same instance, nothing new.
    let again = provider.create(&spec(&moto, cluster, 1)).await.unwrap();
    assert_eq!(state(&again).instance_id, first_state.instance_id);

    // A second node shares the cluster's key pair and group.
    let started = Instant::now();
    let second = provider.create(&spec(&moto, cluster, 2)).await.unwrap();
    let second_create_time = started.elapsed();
    let second_state = state(&second);
    assert_ne!(second_state.instance_id, first_state.instance_id);
    assert_eq!(second_state.key_name, first_state.key_name);
    assert_eq!(
        second_state.security_group_id,
        first_state.security_group_id
    );
    assert_eq!(second.client_key_path, first.client_key_path);
    assert_eq!(group_ids(&moto, cluster).await, 1);

    // Nodes set not to be connected to are not confirmed.
    let pool = SessionPool::new(PoolConfig::default());
    let error = provider
        .confirm(&first, &pool, Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(
        matches!(error, ProviderError::NotConnected { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("`connect`"), "{error}");

    // A restarted process adopts what the records name.
    let restarted = Ec2Provider::new(store.clone(), keys.path())
        .unwrap()
        .with_allowed_endpoints(vec![moto.endpoint.clone()]);
    let adopted = restarted.adopt(&first).await.unwrap();
    assert_eq!(state(&adopted).instance_id, first_state.instance_id);
    assert_eq!(
        restarted.presence(&first).await.unwrap(),
        engine::provider::NodePresence::Present
    );
    assert_eq!(adopted.host_key, first.host_key);
    // A process on another machine connects with its own copy of the stored key.
    let elsewhere = tempfile::tempdir().unwrap();
    let other = Ec2Provider::new(store.clone(), elsewhere.path()).unwrap();
    let target = other.ssh_target(&first).await.unwrap();
    assert!(target.client_key.path().starts_with(elsewhere.path()));
    assert_eq!(
        std::fs::read(target.client_key.path()).unwrap(),
        std::fs::read(&first.client_key_path).unwrap()
    );

    // The first delete leaves what the second node uses; deleting again is fine.
    let started = Instant::now();
    restarted.delete(&first).await.unwrap();
    let delete_time = started.elapsed();
    restarted.delete(&first).await.unwrap();
    assert!(instance_xml(&moto, &first_state.instance_id)
        .await
        .contains("<name>terminated</name>"));
    // What healing reads: a terminated instance is gone.
    assert_eq!(
        restarted.presence(&first).await.unwrap(),
        engine::provider::NodePresence::Gone
    );
    assert!(key_pair_exists(&moto, cluster).await);
    assert_eq!(group_ids(&moto, cluster).await, 1);
    let error = restarted.adopt(&first).await.unwrap_err();
    assert!(
        matches!(error, ProviderError::InstanceGone { .. }),
        "{error}"
    );

    // The last node takes the cluster's key pair, group and key file with it.
    restarted.delete(&second).await.unwrap();
    assert!(instance_xml(&moto, &second_state.instance_id)
        .await
        .contains("<name>terminated</name>"));
    assert!(!key_pair_exists(&moto, cluster).await);
    assert_eq!(group_ids(&moto, cluster).await, 0);
    assert!(!first.client_key_path.exists());
    let stored_name = format!("ec2:{}", first_state.key_name);
    assert!(store.client_key(&stored_name).await.unwrap().is_none());
    restarted.delete(&second).await.unwrap();
    eprintln!(
        "ec2 against moto: first create {create_time:?}, second create \
         {second_create_time:?}, delete {delete_time:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ec2_check_accepts_good_credentials_and_names_rejected_ones() {
    // Moto checks signatures after this many unauthenticated calls: the three that make
    // an IAM user allowed everything, with an access key.
    let moto = Moto::start(&[("INITIAL_NO_AUTH_ACTION_COUNT", "3")]);
    let (key_id, secret) = moto.iam_user().await;

    let db = engine::testing::TestDatabase::sqlite();
    let store = store_with_credentials(&db, None).await;
    let keys = tempfile::tempdir().unwrap();
    let provider = Ec2Provider::new(store.clone(), keys.path())
        .unwrap()
        .with_allowed_endpoints(vec![moto.endpoint.clone()]);
    set_credentials(
        &store,
        &serde_json::json!({"access_key_id": key_id, "secret_access_key": secret}).to_string(),
    )
    .await;
    let said = provider
        .check(DEFAULT_TENANT_ID, &provider_settings(&moto))
        .await
        .unwrap();
    assert!(
        said.contains(REGION) && said.contains(&moto.endpoint),
        "{said}"
    );

    let wrong_secret = "not-the-secret-at-all";
    set_credentials(
        &store,
        &serde_json::json!({"access_key_id": key_id, "secret_access_key": wrong_secret})
            .to_string(),
    )
    .await;
    let error = provider
        .check(DEFAULT_TENANT_ID, &provider_settings(&moto))
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(
        matches!(error, ProviderError::CredentialsRejected { .. }),
        "{text}"
    );
    assert!(
        text.contains("the EC2 credentials of provider aws1 were rejected")
            && text.contains("corral provider credentials set aws1 --stdin"),
        "{text}"
    );
    assert!(
        !text.contains(wrong_secret) && !text.contains(&secret),
        "{text}"
    );
    // Creating a node says the same, and makes nothing.
    let error = provider
        .create(&spec(&moto, "c-ec2-rejected", 1))
        .await
        .unwrap_err();
    assert!(
        matches!(error, ProviderError::CredentialsRejected { .. }),
        "{error}"
    );
}

#[tokio::test]
async fn ec2_without_credentials_or_region_says_what_is_missing() {
    let db = engine::testing::TestDatabase::sqlite();
    let store = store_with_credentials(&db, None).await;
    let keys = tempfile::tempdir().unwrap();
    let provider = Ec2Provider::new(store.clone(), keys.path()).unwrap();
    // An endpoint the operator did not allow is refused before anything is sent.
    let elsewhere = ProviderSettings {
        name: PROVIDER.to_owned(),
        settings: serde_json::json!({"region": REGION, "endpoint": "http://127.0.0.1:5432"})
            .as_object()
            .unwrap()
            .clone(),
    };
    let error = provider
        .check(DEFAULT_TENANT_ID, &elsewhere)
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("--ec2-endpoint"), "{error}");
    let provider = provider.with_allowed_endpoints(vec!["http://127.0.0.1:9".to_owned()]);
    // Nothing answers at this endpoint: both errors come before any request.
    let mut settings = ProviderSettings {
        name: PROVIDER.to_owned(),
        settings: serde_json::json!({"region": REGION, "endpoint": "http://127.0.0.1:9"})
            .as_object()
            .unwrap()
            .clone(),
    };
    let error = provider
        .check(DEFAULT_TENANT_ID, &settings)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "provider aws1 has no credentials in this tenant: an admin sets them at \
         /admin/providers/aws1 or with `corral provider credentials set aws1 --stdin`"
    );
    settings.settings.remove("region");
    set_credentials(&store, TEST_CREDENTIALS).await;
    let error = provider
        .check(DEFAULT_TENANT_ID, &settings)
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(
        text.starts_with("provider aws1: setting `region`"),
        "{text}"
    );
    let node = NodeSpec {
        image: Some(AMI.to_owned()),
        flavor: Some("t3.small".to_owned()),
        provider: settings.clone(),
        ..NodeSpec::for_tenant("c-none-1", DEFAULT_TENANT_ID)
    };
    let text = provider.create(&node).await.unwrap_err().to_string();
    assert!(
        text.starts_with("provider aws1: setting `region`"),
        "{text}"
    );
}

/// Answers each request on `listener` with a throttling error `throttles` times, then
/// with an empty DescribeRegions; returns how many requests it answered.
async fn throttling_responder(listener: tokio::net::TcpListener, throttles: usize) -> usize {
    let mut answered = 0;
    loop {
        let Ok(Ok((mut stream, _))) =
            tokio::time::timeout(Duration::from_secs(2), listener.accept()).await
        else {
            return answered;
        };
        let mut request = Vec::new();
        let mut buffer = [0u8; 4096];
        // The headers, then as much body as they announce.
        loop {
            let read = stream.read(&mut buffer).await.unwrap();
            if read == 0 {
                break;
            }
            request.extend_from_slice(&buffer[..read]);
            let text = String::from_utf8_lossy(&request).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text[..end]
                    .lines()
                    .find_map(|line| {
                        let (name, value) = line.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length")
                            .then(|| value.trim().parse::<usize>().ok())
                            .flatten()
                    })
                    .unwrap_or(0);
                if request.len() >= end + 4 + length {
                    break;
                }
            }
        }
        let (status, body) = if answered < throttles {
            (
                "503 Service Unavailable",
                "<Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>Request \
                 limit exceeded.</Message></Error></Errors></Response>",
            )
        } else {
            (
                "200 OK",
                "<DescribeRegionsResponse><regionInfo/></DescribeRegionsResponse>",
            )
        };
        answered += 1;
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/xml\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(response.as_bytes()).await.unwrap();
        stream.shutdown().await.unwrap();
    }
}

#[tokio::test]
async fn ec2_throttling_is_retried_with_backoff() {
    // A stand-in for EC2 that throttles twice: the call still succeeds, after backing off.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let responder = tokio::spawn(throttling_responder(listener, 2));
    let client = QueryClient::new(
        reqwest::Client::new(),
        &endpoint,
        REGION,
        "ec2",
        EC2_VERSION,
        "AKIDTESTING",
        "testing",
        None,
    );
    let started = Instant::now();
    let answer = client
        .call("DescribeRegions", Params::new().as_slice())
        .await
        .unwrap();
    assert!(answer.contains("DescribeRegionsResponse"), "{answer}");
    // Two pauses: at least half of 250 ms and of 500 ms.
    assert!(
        started.elapsed() >= Duration::from_millis(375),
        "{:?}",
        started.elapsed()
    );
    drop(client);
    assert_eq!(responder.await.unwrap(), 3);
}

/// A node of a cluster whose owner set their own AWS credentials, on a provider with
/// `user_credentials`, is made with theirs (the tenant here has none) and records it;
/// without the setting the same owner's node needs the tenant's. Once the user's are
/// removed, deleting their node falls back to the tenant's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ec2_nodes_of_a_users_cluster_sign_with_the_owners_own_credentials() {
    use engine::store::users::{NewUser, Role};
    let moto = Moto::start(&[]);
    let db = engine::testing::TestDatabase::sqlite();
    let store = store_with_credentials(&db, None).await;
    let alice = store
        .create_user(&NewUser {
            tenant_id: DEFAULT_TENANT_ID.into(),
            username: "alice".into(),
            role: Role::User,
            password_hash: "x".into(),
        })
        .await
        .unwrap()
        .id;
    let own = Credentials::from_json_text(TEST_CREDENTIALS).unwrap();
    store
        .set_user_provider_credentials(
            DEFAULT_TENANT_ID,
            &alice,
            PROVIDER,
            &engine::provider::binding::of(EC2_PROVIDER, &provider_settings(&moto)),
            &own,
            None,
            0,
        )
        .await
        .unwrap();
    let keys = tempfile::tempdir().unwrap();
    let provider = Ec2Provider::new(store.clone(), keys.path())
        .unwrap()
        .with_allowed_endpoints(vec![moto.endpoint.clone()]);
    let cluster = "c-ec2-alice";
    let owned = |number: u32, allowed: bool| {
        let mut spec = spec(&moto, cluster, number);
        spec.requested_by = Some(alice.clone());
        spec.provider
            .settings
            .insert("user_credentials".to_owned(), allowed.into());
        spec
    };

    let record = provider.create(&owned(1, true)).await.unwrap();
    assert_eq!(
        state(&record).credentials_user.as_deref(),
        Some(alice.as_str())
    );
    let refused = provider.create(&owned(2, false)).await.unwrap_err();
    assert!(
        matches!(refused, ProviderError::NoCredentials { .. }),
        "{refused}"
    );
    // The check is an admin's: the tenant's credentials, which are not set.
    let checked = provider
        .check(DEFAULT_TENANT_ID, &owned(1, true).provider)
        .await;
    assert!(
        matches!(checked, Err(ProviderError::NoCredentials { .. })),
        "{checked:?}"
    );

    assert!(store
        .delete_user_provider_credentials(DEFAULT_TENANT_ID, &alice, PROVIDER)
        .await
        .unwrap());
    let error = provider.delete(&record).await.unwrap_err();
    assert!(
        matches!(error, ProviderError::NoCredentials { .. }),
        "{error}"
    );
    set_credentials(&store, TEST_CREDENTIALS).await;
    provider.delete(&record).await.unwrap();
    assert!(!key_pair_exists(&moto, cluster).await);
}

/// A lease's grace on ec2 (issue 44 point 5): suspending a node stops its instance
/// (StopInstances; moto says `stopped`), again is fine, resuming starts the same
/// instance (`running`) and keeps the record's identity, and a node deleted while
/// stopped (its grace over) leaves no instance, key pair or group. Nothing connects to
/// moto's made-up addresses: the provider is set `connect: none`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ec2_nodes_are_stopped_for_a_lease_started_again_and_deleted_while_stopped() {
    use engine::provider::Suspended;
    let moto = Moto::start(&[]);
    let db = engine::testing::TestDatabase::sqlite();
    let store = store_with_credentials(&db, Some(TEST_CREDENTIALS)).await;
    let keys = tempfile::tempdir().unwrap();
    let provider = Ec2Provider::new(store.clone(), keys.path())
        .unwrap()
        .with_allowed_endpoints(vec![moto.endpoint.clone()]);
    let cluster = "c-ec2-lease";
    let first = provider.create(&spec(&moto, cluster, 1)).await.unwrap();
    let second = provider.create(&spec(&moto, cluster, 2)).await.unwrap();
    let instance = |record: &NodeRecord| state(record).instance_id;
    let state_name = |xml: String| {
        let start = xml.find("<instanceState>").unwrap();
        let name = &xml[start..];
        let from = name.find("<name>").unwrap() + "<name>".len();
        let to = name.find("</name>").unwrap();
        name[from..to].to_owned()
    };
    assert!(engine::provider::suspends_machines(EC2_PROVIDER));

    for record in [&first, &second] {
        assert_eq!(provider.suspend(record).await.unwrap(), Suspended::Stopped);
        assert_eq!(
            state_name(instance_xml(&moto, &instance(record)).await),
            "stopped"
        );
    }
    // Stopping a stopped instance succeeds and changes nothing.
    assert_eq!(provider.suspend(&first).await.unwrap(), Suspended::Stopped);
    assert_eq!(
        state_name(instance_xml(&moto, &instance(&first)).await),
        "stopped"
    );

    // Extended within the grace: the same instance runs again.
    let resumed = provider.resume(&first).await.unwrap();
    assert_eq!(instance(&resumed), instance(&first));
    assert_eq!(resumed.host_key, first.host_key);
    assert_eq!(resumed.id, first.id);
    assert_eq!(
        state_name(instance_xml(&moto, &instance(&first)).await),
        "running"
    );
    assert_eq!(
        provider.presence(&resumed).await.unwrap(),
        engine::provider::NodePresence::Present
    );
    // Resuming a running instance leaves it running.
    provider.resume(&resumed).await.unwrap();
    assert_eq!(
        state_name(instance_xml(&moto, &instance(&first)).await),
        "running"
    );

    // Past the grace, still stopped: deleted, and the cluster's leftovers with the last.
    provider.delete(&resumed).await.unwrap();
    provider.delete(&second).await.unwrap();
    for record in [&first, &second] {
        assert_eq!(
            state_name(instance_xml(&moto, &instance(record)).await),
            "terminated"
        );
    }
    assert!(!key_pair_exists(&moto, cluster).await);
    assert_eq!(group_ids(&moto, cluster).await, 0);
    // A gone instance cannot be stopped: said, not passed over as stopped.
    let error = provider.suspend(&second).await.unwrap_err();
    assert!(
        matches!(error, ProviderError::InstanceGone { .. }),
        "{error}"
    );
}
