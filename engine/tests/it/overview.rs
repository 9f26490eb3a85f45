//! The admin overview's activity aggregates: jobs per state, running tasks and
//! the workers running them, the latest failed tasks; admins only.

use domain::plan::{Action, TaskDag};
use engine::principal::Principal;
use engine::queue::{ClaimLimits, Outcome, Queue, SubmitOptions};
use engine::resources::ResourceFiles;
use engine::service::{Caller, Service, ServiceError};
use engine::store::tenants::DEFAULT_TENANT_ID;
use engine::store::users::Role;
use engine::store::{Backend, Store};
use engine::testing::TestDatabase;

fn dag() -> TaskDag {
    serde_json::from_value(serde_json::json!({"tasks": [
        {"id": 0, "node": 1000, "service": null, "action": Action::Create, "after": [], "stage": 0},
        {"id": 1, "node": 1001, "service": null, "action": Action::Create, "after": [], "stage": 0},
    ]}))
    .unwrap()
}

fn caller(role: Role) -> Caller {
    Caller::new(
        Principal {
            user_id: "u1".to_owned(),
            username: "someone".to_owned(),
            tenant_id: DEFAULT_TENANT_ID.to_owned(),
            role,
        },
        None,
    )
}

async fn activity_counts_jobs_running_tasks_and_failures(backend: Backend) {
    let db = TestDatabase::new(backend).await;
    let store = Store::open(&db.url).await.unwrap();
    let queue = Queue::new(store.clone());
    let files = tempfile::tempdir().unwrap();
    let service = Service::new(queue.clone(), ResourceFiles::in_directory(files.path()));
    let cluster_id = store
        .create_cluster(&engine::testing::bare_cluster(DEFAULT_TENANT_ID, "c1"), 0)
        .await
        .unwrap()
        .id;
    let job_id = queue
        .submit_job(
            DEFAULT_TENANT_ID,
            &cluster_id,
            api_types::Operation::Create,
            &dag(),
            // One attempt, so the failure below is final.
            &SubmitOptions {
                max_attempts: 1,
                ..SubmitOptions::default()
            },
            0,
        )
        .await
        .unwrap();
    let admin = caller(Role::TenantAdmin);

    let before = service.activity(&admin).await.unwrap();
    assert_eq!(before.running_tasks, 0);
    assert!(before.failed_tasks.is_empty());

    let first = queue
        .claim("w1", 10_000, ClaimLimits::default(), 1)
        .await
        .unwrap()
        .unwrap();
    let _second = queue
        .claim("w2", 10_000, ClaimLimits::default(), 1)
        .await
        .unwrap()
        .unwrap();
    let busy = service.activity(&admin).await.unwrap();
    assert_eq!(busy.running_tasks, 2);
    assert_eq!(busy.busy_workers, 2);
    assert!(busy
        .jobs_by_state
        .iter()
        .any(|(state, count)| *state == engine::queue::JobState::Running && *count == 1));

    queue
        .complete(&first.lease(), &Outcome::failed("no capacity"), 2)
        .await
        .unwrap();
    let failed = service.activity(&admin).await.unwrap();
    assert_eq!(failed.failed_tasks.len(), 1);
    assert_eq!(failed.failed_tasks[0].job_id, job_id);
    assert_eq!(failed.failed_tasks[0].error.as_deref(), Some("no capacity"));

    assert!(matches!(
        service.activity(&caller(Role::User)).await,
        Err(ServiceError::Forbidden(_))
    ));
}

engine::on_both_backends!(activity_counts_jobs_running_tasks_and_failures);
