//! The history retention (`Store::prune_history`) on real clusters and jobs: what ended
//! before the cutoff goes with everything hanging off it, what a cluster still needs
//! (its latest job), what is recent and what is kept on purpose (audit, cost) stays;
//! the audit log goes by its own retention (`Store::prune_audit`).

use std::time::Duration;

use engine::operations::ClusterChange;
use engine::queue::{JobId, JobState};
use engine::store::history::{Pruned, PRUNE_BATCH};
use engine::store::tenants::DEFAULT_TENANT_ID;
use engine::store::{now_ms, Backend, Store};

use engine::execute::ExecutorSettings;
use engine::worker::janitor::HistoryRetention;
use engine::worker::WorkerSettings;

use crate::lab::{quick_settings, Lab};

const JOB_LIMIT: Duration = Duration::from_secs(90);
/// Far enough back to be past any retention the test asks for.
const LONG_AGO_MS: i64 = 1_000;
const HOUR_MS: i64 = 3_600_000;

/// A lab whose own janitor never prunes: the test's passes are the only ones.
async fn lab(backend: Backend) -> Lab {
    let settings = WorkerSettings {
        history: HistoryRetention::Forever,
        ..quick_settings()
    };
    Lab::start_with(backend, settings, ExecutorSettings::default()).await
}

async fn count(store: &Store, sql: &str, id: &str) -> i64 {
    sqlx::query_scalar(sql)
        .bind(id)
        .fetch_one(store.pool())
        .await
        .unwrap()
}

async fn events_of(store: &Store, job: &JobId) -> i64 {
    count(
        store,
        "SELECT COUNT(*) FROM task_events WHERE job_id = $1",
        job.as_str(),
    )
    .await
}

async fn tasks_of(store: &Store, job: &JobId) -> i64 {
    count(
        store,
        "SELECT COUNT(*) FROM tasks WHERE job_id = $1",
        job.as_str(),
    )
    .await
}

async fn job_exists(store: &Store, job: &JobId) -> bool {
    count(
        store,
        "SELECT COUNT(*) FROM jobs WHERE id = $1",
        job.as_str(),
    )
    .await
        == 1
}

async fn cluster_exists(store: &Store, cluster: &str) -> bool {
    count(
        store,
        "SELECT COUNT(*) FROM clusters WHERE id = $1",
        cluster,
    )
    .await
        == 1
}

/// Moves a job's end (and so its place in the retention) far into the past.
async fn age_job(store: &Store, job: &JobId) {
    sqlx::query("UPDATE jobs SET finished_at_ms = $1 WHERE id = $2")
        .bind(LONG_AGO_MS)
        .bind(job.as_str())
        .execute(store.pool())
        .await
        .unwrap();
}

async fn age_cluster(store: &Store, cluster: &str) {
    sqlx::query("UPDATE clusters SET updated_at_ms = $1 WHERE id = $2")
        .bind(LONG_AGO_MS)
        .bind(cluster)
        .execute(store.pool())
        .await
        .unwrap();
}

async fn old_history_goes_and_what_is_needed_stays(backend: Backend) {
    let lab = lab(backend).await;
    let store = &lab.store;
    // A live cluster with two ended jobs, both old: only the latest stays.
    let (live, created) = lab.create("live", 2).await;
    assert_eq!(lab.wait(&created, JOB_LIMIT).await, JobState::Succeeded);
    let stopped = lab
        .change(&live.id, ClusterChange::Stop { services: None })
        .await;
    assert_eq!(lab.wait(&stopped, JOB_LIMIT).await, JobState::Succeeded);
    // A cluster deleted long ago, and one deleted just now.
    let mut gone = Vec::new();
    for name in ["old-gone", "new-gone"] {
        let (cluster, job) = lab.create(name, 2).await;
        assert_eq!(lab.wait(&job, JOB_LIMIT).await, JobState::Succeeded);
        let deleted = lab
            .change(&cluster.id, ClusterChange::Delete { force: false })
            .await;
        assert_eq!(lab.wait(&deleted, JOB_LIMIT).await, JobState::Succeeded);
        gone.push((cluster.id, job, deleted));
    }
    let [(old_gone, old_create, _), (new_gone, new_create, _)] = <[_; 2]>::try_from(gone).unwrap();
    assert!(events_of(store, &created).await > 0);
    assert!(tasks_of(store, &old_create).await > 0);
    for job in [&created, &stopped] {
        age_job(store, job).await;
    }
    age_cluster(store, &old_gone).await;
    // What outlives a cluster on purpose: its cost intervals and the audit log.
    sqlx::query(
        "INSERT INTO cost_intervals (id, tenant_id, cluster_id, owner, template, \
         per_hour_micros, start_ms, end_ms) VALUES ('kept', $1, $2, 'admin', 'lifecycle', 1, 0, 1)",
    )
    .bind(DEFAULT_TENANT_ID)
    .bind(&old_gone)
    .execute(store.pool())
    .await
    .unwrap();
    let audit_rows = |store: &Store| {
        let store = store.clone();
        async move {
            sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM audit_log")
                .fetch_one(store.pool())
                .await
                .unwrap()
        }
    };
    let audit_before = audit_rows(store).await;

    let pruned = store.prune_history(now_ms() - HOUR_MS).await.unwrap();
    assert_eq!(
        pruned,
        Pruned {
            clusters: 1,
            jobs: 1,
            hook_deliveries: 0
        }
    );
    // The old deleted cluster went with its jobs, tasks and events.
    assert!(!cluster_exists(store, &old_gone).await);
    assert!(!job_exists(store, &old_create).await);
    assert_eq!(tasks_of(store, &old_create).await, 0);
    assert_eq!(events_of(store, &old_create).await, 0);
    // The live cluster lost its older job only; its latest one is whole.
    assert!(!job_exists(store, &created).await);
    assert_eq!(events_of(store, &created).await, 0);
    assert!(job_exists(store, &stopped).await);
    assert!(events_of(store, &stopped).await > 0);
    assert!(cluster_exists(store, &live.id).await);
    // Recent history stays.
    assert!(cluster_exists(store, &new_gone).await);
    assert!(job_exists(store, &new_create).await);
    // Kept on purpose.
    assert_eq!(
        count(
            store,
            "SELECT COUNT(*) FROM cost_intervals WHERE cluster_id = $1",
            &old_gone
        )
        .await,
        1
    );
    assert_eq!(audit_rows(store).await, audit_before);
    // Nothing is left to prune a second time.
    assert!(store
        .prune_history(now_ms() - HOUR_MS)
        .await
        .unwrap()
        .is_empty());
}

/// A backlog bigger than a batch goes in one pass, batch after batch.
async fn a_backlog_goes_in_batches(backend: Backend) {
    let lab = lab(backend).await;
    let store = &lab.store;
    let backlog = PRUNE_BATCH * 2 + 7;
    for number in 0..backlog {
        let cluster = store
            .create_cluster(
                &engine::testing::bare_cluster(DEFAULT_TENANT_ID, &format!("gone-{number}")),
                0,
            )
            .await
            .unwrap();
        sqlx::query("UPDATE clusters SET state = 'deleted', updated_at_ms = $1 WHERE id = $2")
            .bind(LONG_AGO_MS)
            .bind(&cluster.id)
            .execute(store.pool())
            .await
            .unwrap();
    }
    let pruned = store.prune_history(now_ms() - HOUR_MS).await.unwrap();
    assert_eq!(pruned.clusters, backlog.unsigned_abs());
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM clusters WHERE state = 'deleted'")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(left, 0);
}

/// Audit entries older than the audit cutoff go, in batches; newer ones stay whole.
async fn old_audit_entries_go_by_their_own_retention(backend: Backend) {
    let lab = lab(backend).await;
    let store = &lab.store;
    let entry = |number: i64, at_ms: i64| engine::store::audit::AuditEntry {
        id: format!("audit-{number}"),
        tenant_id: DEFAULT_TENANT_ID.to_owned(),
        actor_id: None,
        actor_name: "admin".to_owned(),
        action: api_types::AuditAction::ClusterCreate,
        target_kind: "cluster".to_owned(),
        target: format!("c{number}"),
        address: None,
        before_json: None,
        after_json: None,
        at_ms,
    };
    let old = PRUNE_BATCH + 3;
    for number in 0..old {
        store
            .append_audit(&entry(number, LONG_AGO_MS))
            .await
            .unwrap();
    }
    let recent = entry(old, now_ms());
    store.append_audit(&recent).await.unwrap();
    let before: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_log")
        .fetch_one(store.pool())
        .await
        .unwrap();

    let pruned = store.prune_audit(now_ms() - HOUR_MS).await.unwrap();
    assert_eq!(pruned, old.unsigned_abs());
    let after: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_log")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(after, before - old);
    let kept: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_log WHERE id = $1")
        .bind(&recent.id)
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(kept, 1);
    // The history's own pass leaves the audit log alone (the test above), and a second
    // audit pass finds nothing.
    assert_eq!(store.prune_audit(now_ms() - HOUR_MS).await.unwrap(), 0);
}

engine::on_both_backends!(
    old_history_goes_and_what_is_needed_stays,
    a_backlog_goes_in_batches,
    old_audit_entries_go_by_their_own_retention
);
