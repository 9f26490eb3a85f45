//! `bench http --clusters N`: the database of a Corral with thousands of clusters,
//! written in seconds instead of N real creates. The clusters are copies of the real
//! one the bench built (its template, layout, config and catalog snapshot), active,
//! a third of them leased; each gets 10 jobs (copies of the real create job's row)
//! and an audit entry, across [`TENANTS`] tenants. The benched tenant (the admin's,
//! `default`) holds a quarter of them, so its list really pages (500 of 2,000: ten
//! pages of 50); the other 49 share the rest.
//!
//! Written straight into the server's SQLite file while it runs (WAL: the server keeps
//! answering), one transaction per tenant.

use std::path::Path;
use std::time::Instant;

use engine::store::clusters::{insert_cluster, ClusterState, NewCluster};
use engine::store::tenants::{NewTenant, DEFAULT_TENANT_ID};
use engine::store::{now_ms, DatabaseUrl, Store};

use crate::served::failed;
use crate::BenchError;

pub const TENANTS: usize = 50;
pub const JOBS_PER_CLUSTER: usize = 10;
const MINUTE: i64 = 60_000;
const DAY: i64 = 24 * 60 * MINUTE;

/// What [`seed`] wrote.
pub struct Seeded {
    pub clusters: usize,
    /// Of them, the benched (admin's) tenant's.
    pub benched: usize,
    pub jobs: usize,
    pub seconds: f64,
}

/// How many of `count` clusters tenant number `index` (0: the benched one) gets.
fn share(count: usize, index: usize) -> usize {
    let benched = count / 4;
    if index == 0 {
        return benched;
    }
    let others = TENANTS - 1;
    let rest = count - benched;
    rest / others + usize::from(index - 1 < rest % others)
}

/// Writes `count` clusters modelled on `model_id` (a real cluster of the default
/// tenant, with its create job) into the database in `data`.
pub async fn seed(data: &Path, model_id: &str, count: usize) -> Result<Seeded, BenchError> {
    let started = Instant::now();
    let store = Store::connect(&DatabaseUrl::sqlite_file(&data.join("corral.db"))).await?;
    let model = store.cluster(model_id).await?;
    let model_job: String = sqlx::query_scalar(
        "SELECT id FROM jobs WHERE cluster_id = $1 ORDER BY created_at_ms LIMIT 1",
    )
    .bind(model_id)
    .fetch_one(store.pool())
    .await
    .map_err(failed)?;
    // The job row copied as it is but for its id, cluster and tenant: whatever columns
    // the schema has now.
    let columns: Vec<String> = sqlx::query_scalar("SELECT name FROM pragma_table_info('jobs')")
        .fetch_all(store.pool())
        .await
        .map_err(failed)?;
    let selected: Vec<&str> = columns
        .iter()
        .map(|column| match column.as_str() {
            "id" => "$1",
            "cluster_id" => "$2",
            "tenant_id" => "$3",
            other => other,
        })
        .collect();
    let copy_job = format!(
        "INSERT INTO jobs ({}) SELECT {} FROM jobs WHERE id = $4",
        columns.join(", "),
        selected.join(", ")
    );

    let now = now_ms();
    let mut tenants = vec![DEFAULT_TENANT_ID.to_owned()];
    for index in 1..TENANTS {
        let tenant = store
            .create_tenant(&NewTenant {
                name: format!("bench-{index:02}"),
                max_clusters: None,
                max_nodes: None,
                provider_types: NewTenant::all_provider_types(),
            })
            .await?;
        tenants.push(tenant.id);
    }
    let mut seeded = Seeded {
        clusters: 0,
        benched: share(count, 0),
        jobs: 0,
        seconds: 0.0,
    };
    for (index, tenant_id) in tenants.iter().enumerate() {
        let mut tx = store.pool().begin().await.map_err(failed)?;
        for number in 0..share(count, index) {
            let new = NewCluster {
                tenant_id: tenant_id.clone(),
                name: format!("seed-{index:02}-{number:04}"),
                template_name: model.template_name.clone(),
                template_version: model.template_version,
                template_json: model.template_json.clone(),
                owner_id: if index == 0 {
                    model.owner_id.clone()
                } else {
                    None
                },
                state: ClusterState::Active,
                layout_json: model.layout_json.clone(),
                config_json: model.config_json.clone(),
                catalog_json: model.catalog_json.clone(),
                provider: model.provider.clone(),
                // Leases end between two days and a few weeks from now: nothing for
                // the janitor to do (not even a day's warning) while the bench runs.
                lease_expires_ms: (number % 3 == 0)
                    .then(|| now + 2 * DAY + i64::try_from(number).unwrap_or(0) * 17 * MINUTE),
            };
            let cluster = insert_cluster(&mut tx, &new, now).await?;
            for job in 0..JOBS_PER_CLUSTER {
                sqlx::query(&copy_job)
                    .bind(format!("{}-job-{job}", cluster.id))
                    .bind(&cluster.id)
                    .bind(tenant_id)
                    .bind(&model_job)
                    .execute(&mut *tx)
                    .await
                    .map_err(failed)?;
            }
            sqlx::query(
                "INSERT INTO audit_log (id, tenant_id, actor_id, actor_name, action, \
                 target_kind, target, address, before_json, after_json, at_ms) \
                 VALUES ($1, $2, NULL, 'bench', 'cluster.create', 'cluster', $3, NULL, NULL, \
                 NULL, $4)",
            )
            .bind(format!("{}-audit", cluster.id))
            .bind(tenant_id)
            .bind(&cluster.name)
            .bind(now)
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
            seeded.clusters += 1;
            seeded.jobs += JOBS_PER_CLUSTER;
        }
        tx.commit().await.map_err(failed)?;
    }
    store.close().await;
    seeded.seconds = started.elapsed().as_secs_f64();
    Ok(seeded)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shares_add_up() {
        for count in [0, 1, 49, 50, 2000, 2001, 12_345] {
            let total: usize = (0..TENANTS).map(|index| share(count, index)).sum();
            assert_eq!(total, count, "{count}");
        }
        assert_eq!(share(2000, 0), 500);
    }
}
