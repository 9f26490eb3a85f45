//! `upgrade`: a cluster of N local nodes, half running a service whose start the admin
//! then changes, is upgraded; timed are the upgrade's preview and its job, against the
//! same service's steps in the cluster's create (the baseline, measured in the same
//! run: from the first of its steps starting to the last ending).
//!
//! The changed service's nodes all go in one batch (`max_unavailable` = their count),
//! as its steps went in the create; what the upgrade adds is its own cost: the
//! comparison of definitions, the stop with the old definition, and the health gate.
//!
//! Prints `upgrade nodes= changed_nodes= preview_ms= upgrade_s= baseline_s= ratio=`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use domain::catalog::coopr::import_bundle;
use engine::operations::{preview_change, submit_change, ClusterChange};
use engine::provider::LocalProvider;
use engine::queue::{JobId, Queue, SubmitOptions};
use engine::resources::ResourceFiles;
use engine::store::tenants::DEFAULT_TENANT_ID;
use engine::store::{now_ms, Backend, Store};
use engine::testing::TestDatabase;
use engine::worker::WorkerSettings;
use serde_json::{json, Value};

use crate::fanout::{self, Engine};
use crate::BenchError;

const TEMPLATE: &str = "upgrade";
const CHANGING: &str = "changing";
const UPGRADE_LIMIT: Duration = Duration::from_secs(300);

pub fn run(args: &[String]) -> Result<String, BenchError> {
    let nodes = crate::parse_count(args, "--nodes", 200)?;
    if nodes < 2 || nodes % 2 != 0 {
        return Err(BenchError::Usage(
            "--nodes must be even and at least 2".into(),
        ));
    }
    crate::run_in_scratch_dir("corral-upgrade-", |base| async move {
        let db = TestDatabase::new(Backend::Sqlite).await;
        let store = Store::open(&db.url).await?;
        let queue = Queue::new(store.clone());
        import(&store, nodes / 2, "sleep 1").await?;
        let engine = Engine {
            queue: queue.clone(),
            providers: engine::execute::Providers::new()
                .with(Arc::new(LocalProvider::new(base.join("nodes"))?)),
            resources: ResourceFiles::in_directory(base.join("resources")),
        };
        let running = engine.start(WorkerSettings::default());
        let cluster_id = fanout::create(&running, TEMPLATE, nodes).await?;
        let create_job = queue
            .cluster_jobs(&cluster_id)
            .await?
            .into_iter()
            .next()
            .ok_or_else(|| BenchError::Failed("the create job is missing".into()))?;
        let baseline = steps_span(&queue, &create_job.id).await?;

        // The admin's change: the service's start now says which release it is.
        import(&store, nodes / 2, "sleep 1; echo release 2").await?;
        let cluster = store.cluster(&cluster_id).await?;
        let change = ClusterChange::Upgrade {
            max_unavailable: u32::try_from(nodes / 2).unwrap_or(u32::MAX),
        };
        let started = Instant::now();
        let plan = preview_change(&queue, &cluster, &change)
            .await
            .map_err(|error| BenchError::Failed(format!("upgrade preview: {error}")))?;
        let preview = started.elapsed();
        let changed_nodes = plan.upgrade.as_ref().map_or(0, |upgrade| {
            upgrade.batches.iter().map(Vec::len).sum::<usize>()
        });
        let started = Instant::now();
        let job = submit_change(
            &queue,
            &cluster_id,
            &change,
            None,
            SubmitOptions::default(),
            now_ms(),
        )
        .await
        .map_err(|error| BenchError::Failed(format!("upgrade: {error}")))?;
        running.pool.waker().notify_waiters();
        fanout::wait_for(&queue, &job, UPGRADE_LIMIT).await?;
        let upgrade = started.elapsed();
        running.pool.shutdown().await;
        Ok(format!(
            "upgrade nodes={nodes} changed_nodes={changed_nodes} preview_ms={:.1} \
             upgrade_s={:.2} baseline_s={:.2} ratio={:.2}",
            preview.as_secs_f64() * 1000.0,
            upgrade.as_secs_f64(),
            baseline.as_secs_f64(),
            upgrade.as_secs_f64() / baseline.as_secs_f64().max(f64::EPSILON),
        ))
    })
}

/// Imports the benchmark catalog with `changing` on exactly `half` nodes and `start` as
/// its start.
async fn import(store: &Store, half: usize, start: &str) -> Result<(), BenchError> {
    let mut bundle: Value = serde_json::from_str(fanout::CATALOG)
        .map_err(|error| BenchError::Failed(format!("bench catalog: {error}")))?;
    for service in bundle["services"].as_array_mut().into_iter().flatten() {
        if service["name"] == CHANGING {
            service["provisioner"]["actions"]["start"]["fields"]["run"] = json!(start);
        }
    }
    for template in bundle["clustertemplates"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        if template["name"] == TEMPLATE {
            template["constraints"]["services"] =
                json!({CHANGING: {"quantities": {"min": half, "max": half}}});
        }
    }
    let catalog = import_bundle(&bundle.to_string())
        .map_err(|error| BenchError::Failed(format!("bench catalog: {error}")))?;
    engine::catalog::import(store, DEFAULT_TENANT_ID, &catalog, None, now_ms())
        .await
        .map_err(|error| BenchError::Failed(format!("bench catalog import: {error}")))?;
    Ok(())
}

/// From the first start of the changing service to the last end of one, in `job_id`.
async fn steps_span(queue: &Queue, job_id: &JobId) -> Result<Duration, BenchError> {
    let tasks = queue.job_tasks(job_id).await?;
    let steps = tasks.iter().filter(|task| {
        task.service
            .as_ref()
            .is_some_and(|s| s.as_str() == CHANGING)
    });
    let first = steps.clone().filter_map(|task| task.started_at_ms).min();
    let last = steps.filter_map(|task| task.finished_at_ms).max();
    match (first, last) {
        (Some(first), Some(last)) => Ok(Duration::from_millis(
            u64::try_from(last - first).unwrap_or(0),
        )),
        _ => Err(BenchError::Failed(format!(
            "job {job_id} ran no {CHANGING} step"
        ))),
    }
}
