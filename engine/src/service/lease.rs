//! Lease limits: the template a cluster was built from bounds its lease. `max` is
//! the longest total lease, counted from the cluster's creation; `step` the most
//! one extension may add beyond the current end. Either may be unlimited. Limits
//! come from the cluster's catalog snapshot, so editing a template later does not
//! change the deal existing clusters were made under.

use domain::names::TemplateName;
use serde::Serialize;
use utoipa::ToSchema;

use super::{Caller, Service, ServiceError};
use crate::catalog::memo::CatalogMemo;
use crate::store::clusters::Cluster;

/// How far a cluster's lease may be extended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct LeaseLimits {
    /// The latest the lease may end (creation plus the template's maximum); absent
    /// means no limit.
    pub latest_end_ms: Option<i64>,
    /// The most one extension may add beyond the current end; absent means no limit.
    pub step_ms: Option<i64>,
}

impl LeaseLimits {
    /// The end one click of "extend" gives: a step beyond the current end (a day
    /// when steps are unlimited), capped at the latest end. `None` when the lease
    /// is already as long as it may be (or the cluster has no lease).
    pub fn next_end(&self, current_end_ms: Option<i64>, now_ms: i64) -> Option<i64> {
        const DAY_MS: i64 = 24 * 3600 * 1000;
        let current = current_end_ms?;
        let from = current.max(now_ms);
        let mut end = from.saturating_add(self.step_ms.unwrap_or(DAY_MS));
        if let Some(latest) = self.latest_end_ms {
            end = end.min(latest);
        }
        (end > current).then_some(end)
    }

    /// Refuses an extension to `until` that the template does not allow.
    pub fn check(&self, cluster: &Cluster, until: i64, now_ms: i64) -> Result<(), ServiceError> {
        if let Some(latest) = self.latest_end_ms {
            if until > latest {
                return Err(super::clusters::field_problem(
                    "seconds",
                    format!(
                        "the template's maximum lease lets cluster {:?} live at most {} s from now",
                        cluster.name,
                        ((latest - now_ms) / 1000).max(0)
                    ),
                ));
            }
        }
        if let Some(step) = self.step_ms {
            let from = cluster.lease_expires_ms.unwrap_or(now_ms).max(now_ms);
            if until - from > step {
                return Err(super::clusters::field_problem(
                    "seconds",
                    format!(
                        "one extension may add at most {} s to the lease (the template's step)",
                        step / 1000
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The limits of `cluster`, from its catalog snapshot.
pub(super) fn limits_of(
    memo: &CatalogMemo,
    cluster: &Cluster,
) -> Result<LeaseLimits, ServiceError> {
    let snapshot = memo
        .snapshot(&cluster.catalog_json)
        .map_err(ServiceError::internal)?;
    let name =
        TemplateName::parse(cluster.template_name.clone()).map_err(ServiceError::internal)?;
    let template = snapshot
        .template(&name)
        .map_err(|error| ServiceError::internal(error.message()))?;
    let Some(lease) = template.lease() else {
        return Ok(LeaseLimits {
            latest_end_ms: None,
            step_ms: None,
        });
    };
    let limited = |duration: domain::catalog::DurationMs| {
        (!duration.is_unlimited()).then(|| i64::try_from(duration.millis()).unwrap_or(i64::MAX))
    };
    let max = lease.max_duration().map_err(ServiceError::internal)?;
    let step = lease.step_duration().map_err(ServiceError::internal)?;
    Ok(LeaseLimits {
        latest_end_ms: limited(max).map(|max| cluster.created_at_ms.saturating_add(max)),
        step_ms: limited(step),
    })
}

impl Service {
    /// How far the cluster's lease may be extended.
    pub async fn lease_limits(
        &self,
        caller: &Caller,
        id: &str,
    ) -> Result<LeaseLimits, ServiceError> {
        limits_of(&self.catalogs, &self.visible_cluster(caller, id).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::LeaseLimits;

    const H: i64 = 3600 * 1000;

    #[test]
    fn one_click_adds_a_step_up_to_the_maximum() {
        let limits = LeaseLimits {
            latest_end_ms: Some(100 * H),
            step_ms: Some(24 * H),
        };
        assert_eq!(limits.next_end(Some(10 * H), 0), Some(34 * H));
        assert_eq!(limits.next_end(Some(90 * H), 0), Some(100 * H));
        assert_eq!(limits.next_end(Some(100 * H), 0), None);
        assert_eq!(limits.next_end(None, 0), None);
        let unlimited = LeaseLimits {
            latest_end_ms: None,
            step_ms: None,
        };
        assert_eq!(unlimited.next_end(Some(H), 5 * H), Some(29 * H));
    }
}
