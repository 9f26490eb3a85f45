//! Plugin resources reach nodes from any process sharing the database (a worker whose
//! cache has never seen a resource, or holds a damaged copy, bootstraps nodes with the
//! bytes kept in the database, and caches them), come along when a tenant is seeded
//! with another tenant's catalog, and, uploaded before the database kept bytes, move
//! there when the server that took them starts again.

use std::time::Duration;

use crate::lab::Lab;
use engine::execute::{node_id, ExecutorSettings};
use engine::principal::Principal;
use engine::queue::JobState;
use engine::resources::{ResourceFiles, ResourceKind, Upload};
use engine::service::{Caller, Service, TenantRequest};
use engine::store::tenants::DEFAULT_TENANT_ID;
use engine::store::users::Role;
use engine::store::{now_ms, Backend};
use engine::worker::WorkerPool;

const JOB_LIMIT: Duration = Duration::from_secs(60);

async fn a_worker_elsewhere_bootstraps_nodes_from_the_database(backend: Backend) {
    let mut lab = Lab::start(backend).await;
    lab.stop_workers().await;
    // Another machine: a cache directory of its own, holding a damaged copy of the
    // lab's staged script (version 1 of scripts/web.sh).
    let cache = tempfile::tempdir().unwrap();
    let cached = cache
        .path()
        .join(format!("{DEFAULT_TENANT_ID}/scripts/web.sh/1"));
    std::fs::create_dir_all(cached.parent().unwrap()).unwrap();
    std::fs::write(&cached, "#!/bin/sh\nexit 42\n").unwrap();
    let executor = crate::lab::executor(
        &lab.queue,
        &lab.nodes_dir,
        &lab.pool_keys_dir,
        ResourceFiles::in_directory(cache.path()),
        ExecutorSettings::default(),
        None,
    );
    lab.pool = Some(WorkerPool::start(executor, lab.settings.clone()));

    // The lifecycle template's web service runs that script; the create succeeds only
    // if the node got the uploaded bytes.
    let (cluster, job) = lab.create("elsewhere", 2).await;
    assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
    let uploaded = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/lifecycle/web.sh"
    ))
    .unwrap();
    for node in lab.store.list_nodes(&cluster.id).await.unwrap() {
        let number = u32::try_from(node.number).unwrap();
        let on_node = lab
            .nodes_dir
            .join(node_id(&cluster.id, number))
            .join("home/corral/resources/scripts/web.sh");
        assert_eq!(std::fs::read(on_node).unwrap(), uploaded);
    }
    assert_eq!(
        std::fs::read(&cached).unwrap(),
        uploaded,
        "the damaged cache entry was replaced"
    );
}

/// A tenant seeded with another's catalog also gets that tenant's staged scripts, so its
/// clusters build: the copied `lifecycle` template runs `web.sh`.
async fn a_seeded_tenant_gets_the_staged_scripts_its_catalog_runs(backend: Backend) {
    let lab = Lab::start(backend).await;
    let cache = tempfile::tempdir().unwrap();
    let resources = ResourceFiles::in_directory(cache.path());
    let service = Service::new(lab.queue.clone(), resources.clone());
    let superadmin = Caller::new(
        Principal {
            user_id: "root-1".to_owned(),
            username: "root".to_owned(),
            tenant_id: DEFAULT_TENANT_ID.to_owned(),
            role: Role::Superadmin,
        },
        None,
    );
    let source = lab.store.tenant(DEFAULT_TENANT_ID).await.unwrap();
    let tenant = service
        .create_tenant(
            &superadmin,
            &TenantRequest {
                name: "copycat".to_owned(),
                max_clusters: None,
                max_nodes: None,
                seed_catalog_from: Some(source.name),
                local_nodes: true,
                provider_types: None,
            },
        )
        .await
        .unwrap();
    let staged = resources.staged(&lab.store, &tenant.id).await.unwrap();
    assert_eq!(staged.len(), 1, "{staged:?}");
    assert_eq!((staged[0].name.as_str(), staged[0].version), ("web.sh", 1));
    let uploaded = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/lifecycle/web.sh"
    ))
    .unwrap();
    assert_eq!(
        resources.read(&lab.store, &staged[0]).await.unwrap(),
        uploaded
    );

    let (cluster, job) = lab.create_in(&tenant.id, "lifecycle", "copied", 2).await;
    assert_eq!(
        lab.wait(&job, JOB_LIMIT).await,
        JobState::Succeeded,
        "{}",
        cluster.id
    );
}

/// A resource uploaded before the database kept bytes: elsewhere it fails clearly; once
/// the uploading server starts again its cached bytes go into the database.
async fn bytes_only_one_cache_holds_are_kept_in_the_database(backend: Backend) {
    let lab = Lab::start(backend).await;
    let (here, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let uploader = ResourceFiles::in_directory(here.path());
    let other = ResourceFiles::in_directory(elsewhere.path());
    let upload = Upload {
        tenant_id: DEFAULT_TENANT_ID,
        kind: ResourceKind::Scripts,
        name: "old.sh",
        author_id: None,
    };
    let old = uploader
        .upload(&lab.store, &upload, b"echo old\n", now_ms())
        .await
        .unwrap();
    sqlx::query("DELETE FROM plugin_resource_blobs WHERE name = 'old.sh'")
        .execute(lab.store.pool())
        .await
        .unwrap();

    let error = other.read(&lab.store, &old).await.unwrap_err();
    assert!(
        error.to_string().contains("scripts/old.sh version 1")
            && error.to_string().contains("upload it again"),
        "{error}"
    );
    assert_eq!(
        other
            .keep_cached_bytes_in_database(&lab.store)
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        uploader
            .keep_cached_bytes_in_database(&lab.store)
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        uploader
            .keep_cached_bytes_in_database(&lab.store)
            .await
            .unwrap(),
        0
    );
    assert_eq!(other.read(&lab.store, &old).await.unwrap(), b"echo old\n");
}

engine::on_both_backends!(
    bytes_only_one_cache_holds_are_kept_in_the_database,
    a_worker_elsewhere_bootstraps_nodes_from_the_database,
    a_seeded_tenant_gets_the_staged_scripts_its_catalog_runs,
);
