//! Cost and budgets as the API, the CLI and the portal see them (docs/cost.md): the
//! estimate a preview carries, a cluster's cost so far, the tenant's monthly budget
//! (set by its admins; a create or grow over it is refused or held for approval) and
//! the month's showback. The arithmetic is [`domain::cost`]'s; the ledger is
//! [`crate::store::cost`].

use api_types::{
    AuditAction, BudgetAction, BudgetRequest, BudgetView, ClusterCost, CostEstimate,
    ShowbackLineView, ShowbackView,
};
use domain::cost::{
    check_budget, projected_month, showback, units, Estimate, Interval, Micros, Month, OverBudget,
    ShowbackLine,
};

use super::clusters::field_problem;
use super::{AuditRecord, Caller, Service, ServiceError};
use crate::operations::approval::{Rule, RuleMatch, DEFAULT_WINDOW_MS};
use crate::store::cost::Budget;
use crate::store::now_ms;

/// The id a request held by the budget names instead of a rule's.
pub(super) const BUDGET_RULE_ID: &str = "budget";

/// A preview's estimate; `before` is the cluster's before a change.
pub(super) fn estimate_view(after: &Estimate, before: Option<&Estimate>) -> CostEstimate {
    CostEstimate {
        per_hour: units(after.per_hour),
        per_month: units(after.per_month()),
        priced_nodes: after.priced_nodes,
        unpriced_nodes: after.unpriced_nodes,
        change_per_hour: before.map(|before| units(after.per_hour - before.per_hour)),
        change_per_month: before.map(|before| units(after.per_month() - before.per_month())),
    }
}

/// A cluster's cost from its intervals.
pub(super) fn cluster_cost(intervals: &[Interval], now_ms: i64) -> Option<ClusterCost> {
    if intervals.is_empty() {
        return None;
    }
    let month = Month::of_ms(now_ms);
    let so_far: Micros = intervals
        .iter()
        .map(|interval| interval.cost_within(i64::MIN, now_ms))
        .sum();
    let this_month: Micros = intervals
        .iter()
        .map(|interval| interval.cost_within(month.start_ms(), now_ms))
        .sum();
    let per_hour = intervals
        .iter()
        .filter(|interval| interval.end_ms.is_none())
        .map(|interval| interval.per_hour)
        .sum();
    Some(ClusterCost {
        per_hour: units(per_hour),
        so_far: units(so_far),
        this_month: units(this_month),
        priced: true,
    })
}

/// What a request over the budget gets.
pub(super) enum OverBudgetOutcome {
    /// Held for approval, as by this rule, with this note as the request's reason.
    Hold { rule: Rule, note: String },
}

fn lines(lines: Vec<ShowbackLine>) -> Vec<ShowbackLineView> {
    lines
        .into_iter()
        .map(|line| ShowbackLineView {
            name: line.key,
            cost: units(line.cost),
        })
        .collect()
}

impl Service {
    /// What the cluster costs (absent when it never had a price).
    pub(super) async fn cost_of_cluster(
        &self,
        cluster_id: &str,
        now_ms: i64,
    ) -> Result<Option<ClusterCost>, ServiceError> {
        let intervals = self.store.cluster_cost_intervals(cluster_id).await?;
        Ok(cluster_cost(&intervals, now_ms))
    }

    /// The tenant's month so far and its live hourly rate.
    async fn month_of(
        &self,
        tenant_id: &str,
        now_ms: i64,
    ) -> Result<(Micros, Micros), ServiceError> {
        let month = Month::of_ms(now_ms);
        let entries = self
            .store
            .tenant_cost_entries(tenant_id, month.start_ms(), now_ms.saturating_add(1))
            .await?;
        let spent = showback(&entries, month, now_ms).total;
        let live = entries
            .iter()
            .filter(|entry| entry.interval.end_ms.is_none())
            .map(|entry| entry.interval.per_hour)
            .sum();
        Ok((spent, live))
    }

    /// Checks a create or grow that adds `added_per_hour` to the tenant's rate against
    /// its budget: `Ok(None)` when it fits (or there is none), refused (409, as a
    /// quota is) when the budget's action is `refuse`, else held for approval (what
    /// tenant admins ask for goes ahead: they are the approvers of last resort, and
    /// may raise the budget).
    pub(super) async fn check_tenant_budget(
        &self,
        caller: &Caller,
        tenant_id: &str,
        added_per_hour: Micros,
    ) -> Result<Option<OverBudgetOutcome>, ServiceError> {
        let Some(budget) = self.store.tenant_budget(tenant_id).await? else {
            return Ok(None);
        };
        let now = now_ms();
        let (spent, live) = self.month_of(tenant_id, now).await?;
        let Err(over) = check_budget(
            budget.monthly_micros,
            spent,
            live.saturating_add(added_per_hour),
            added_per_hour,
            now,
        ) else {
            return Ok(None);
        };
        match budget.action {
            BudgetAction::Refuse => {
                Err(ServiceError::QuotaExceeded(format!("over budget: {over}")))
            }
            BudgetAction::Approval if caller.principal.can_administer_tenant(tenant_id) => Ok(None),
            BudgetAction::Approval => Ok(Some(budget_hold(&budget, &over))),
        }
    }

    /// The caller's tenant's budget and month (tenant admins).
    pub async fn budget(&self, caller: &Caller) -> Result<BudgetView, ServiceError> {
        let tenant_id = caller.tenant_id();
        caller.require_tenant_admin(tenant_id)?;
        let budget = self.store.tenant_budget(tenant_id).await?;
        let now = now_ms();
        let (spent, live) = self.month_of(tenant_id, now).await?;
        Ok(BudgetView {
            tenant_id: tenant_id.to_owned(),
            monthly_budget: budget.as_ref().map(|budget| units(budget.monthly_micros)),
            budget_action: budget.map(|budget| budget.action).unwrap_or_default(),
            month: Month::of_ms(now).to_string(),
            spent_this_month: units(spent),
            per_hour: units(live),
            projected_month: units(projected_month(spent, live, now)),
        })
    }

    /// Sets or (with no `monthly_budget`) removes the caller's tenant's budget.
    pub async fn set_budget(
        &self,
        caller: &Caller,
        request: &BudgetRequest,
    ) -> Result<BudgetView, ServiceError> {
        let tenant_id = caller.tenant_id().to_owned();
        caller.require_tenant_admin(&tenant_id)?;
        let action = match &request.budget_action {
            None => BudgetAction::default(),
            Some(word) => word.parse().map_err(|_| {
                field_problem(
                    "budget_action",
                    format!("must be refuse or approval, not {word:?}"),
                )
            })?,
        };
        let budget = request
            .monthly_budget
            .map(|amount| {
                domain::cost::amount_of_units(amount)
                    .map(|monthly_micros| Budget {
                        monthly_micros,
                        action,
                    })
                    .map_err(|why| field_problem("monthly_budget", format!("must be {why}")))
            })
            .transpose()?;
        if budget.is_none() && request.budget_action.is_some() {
            return Err(field_problem(
                "budget_action",
                "a budget action needs a monthly_budget",
            ));
        }
        let before = self.store.tenant_budget(&tenant_id).await?;
        self.store
            .set_tenant_budget(
                &tenant_id,
                budget.as_ref(),
                &caller.principal.user_id,
                now_ms(),
            )
            .await?;
        let describe = |budget: &Option<Budget>| {
            budget.as_ref().map(|budget| {
                format!(
                    "monthly budget {} ({})",
                    domain::cost::format_amount(budget.monthly_micros),
                    budget.action
                )
            })
        };
        let mut record =
            AuditRecord::new(&tenant_id, AuditAction::TenantBudget, "tenant", &tenant_id);
        record.before = describe(&before);
        record.after = describe(&budget);
        self.audit(caller, record).await;
        self.budget(caller).await
    }

    /// What the caller's tenant's clusters cost in `month` (`YYYY-MM`, default the
    /// current one), per user and per template (tenant admins).
    pub async fn showback(
        &self,
        caller: &Caller,
        month: Option<&str>,
    ) -> Result<ShowbackView, ServiceError> {
        let tenant_id = caller.tenant_id();
        caller.require_tenant_admin(tenant_id)?;
        let now = now_ms();
        let month = match month {
            None => Month::of_ms(now),
            Some(text) => Month::parse(text).map_err(|message| field_problem("month", message))?,
        };
        let entries = self
            .store
            .tenant_cost_entries(tenant_id, month.start_ms(), month.end_ms())
            .await?;
        let sums = showback(&entries, month, now);
        Ok(ShowbackView {
            month: month.to_string(),
            per_user: lines(sums.per_user),
            per_template: lines(sums.per_template),
            total: units(sums.total),
        })
    }
}

/// The hold of a request over an `approval` budget: a rule of its own (tenant admins
/// decide), whose description the request shows.
fn budget_hold(budget: &Budget, over: &OverBudget) -> OverBudgetOutcome {
    OverBudgetOutcome::Hold {
        rule: Rule {
            id: BUDGET_RULE_ID.to_owned(),
            matches: RuleMatch::CostAbove(budget.monthly_micros),
            approvers: None,
            window_ms: DEFAULT_WINDOW_MS,
        },
        note: format!("over budget: {over}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clusters_cost_sums_its_intervals_until_now() {
        let hour = 3_600_000;
        let month = Month::parse("2026-11").expect("month").start_ms();
        // (intervals, now, (per hour, so far, this month))
        type Case = (Vec<Interval>, i64, Option<(f64, f64, f64)>);
        let cases: [Case; 3] = [
            (vec![], month, None),
            (
                vec![
                    Interval {
                        per_hour: 1_000_000,
                        start_ms: month - 2 * hour,
                        end_ms: Some(month + hour),
                    },
                    Interval {
                        per_hour: 2_000_000,
                        start_ms: month + hour,
                        end_ms: None,
                    },
                ],
                month + 3 * hour,
                Some((2.0, 7.0, 5.0)),
            ),
            (
                vec![Interval {
                    per_hour: 500_000,
                    start_ms: month,
                    end_ms: Some(month + 4 * hour),
                }],
                month + 10 * hour,
                Some((0.0, 2.0, 2.0)),
            ),
        ];
        for (intervals, now, want) in cases {
            let got = cluster_cost(&intervals, now)
                .map(|cost| (cost.per_hour, cost.so_far, cost.this_month));
            assert_eq!(got, want, "{intervals:?}");
        }
    }
}
