//! Cost and budgets (issue 44 point 4, docs/cost.md): a plan's estimated cost, what a
//! cluster has cost so far, a tenant's monthly budget and its showback. Money is one
//! currency, as a decimal number of its units (the server keeps exact micro-units and
//! converts at the edge); people see it rounded to cents.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::states::{word_enum, Word};

/// What a cluster costs to run after a create or change, at its nodes' prices.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CostEstimate {
    pub per_hour: f64,
    /// At 730 hours a month.
    pub per_month: f64,
    /// Nodes whose hardware type has a price on the cluster's provider.
    pub priced_nodes: u32,
    /// Nodes without one (counted as free). When every node is unpriced, say "no
    /// prices set" rather than 0.
    pub unpriced_nodes: u32,
    /// For a change: what it adds (or, negative, saves) per hour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_per_hour: Option<f64>,
    /// For a change: what it adds (or saves) per month.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_per_month: Option<f64>,
}

/// What a cluster costs: its rate now and what it has cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClusterCost {
    /// Its nodes' prices now (0 when deleted or unpriced).
    pub per_hour: f64,
    /// Everything it has cost since it was made.
    pub so_far: f64,
    /// What it has cost since this month (UTC) began.
    pub this_month: f64,
    /// Whether any of its intervals had a price.
    pub priced: bool,
}

word_enum!(
    /// What happens to a create or grow that would take the tenant's month over its
    /// budget.
    #[derive(Default)]
    BudgetAction, "budget action" {
        /// Refused (422), naming the budget.
        #[default]
        Refuse => "refuse",
        /// Held for approval as an approval rule would hold it.
        Approval => "approval",
    }
);

/// What `PUT /api/v1/budget` takes: the caller's tenant's monthly budget (`null`
/// removes it) and what a request over it gets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct BudgetRequest {
    #[serde(default)]
    pub monthly_budget: Option<f64>,
    /// `refuse` (default) or `approval`.
    #[serde(default)]
    pub budget_action: Option<String>,
}

/// A tenant's budget and where its month stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BudgetView {
    pub tenant_id: String,
    /// Absent: no budget.
    #[serde(default)]
    pub monthly_budget: Option<f64>,
    pub budget_action: BudgetAction,
    /// The month (UTC) as `YYYY-MM`.
    pub month: String,
    /// What the tenant's clusters have cost this month so far.
    pub spent_this_month: f64,
    /// What its live clusters cost per hour now.
    pub per_hour: f64,
    /// Spent so far plus the live rate until the month ends.
    pub projected_month: f64,
}

/// One line of a showback table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ShowbackLineView {
    /// The username (or template name).
    pub name: String,
    pub cost: f64,
}

/// `GET /api/v1/showback?month=YYYY-MM`: what the tenant's clusters cost in a month,
/// per user and per template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ShowbackView {
    pub month: String,
    pub per_user: Vec<ShowbackLineView>,
    pub per_template: Vec<ShowbackLineView>,
    pub total: f64,
}

impl ShowbackView {
    /// The CSV form: a header row, then one row per line (`by` is `user` or
    /// `template`), costs rounded to cents.
    pub fn to_csv(&self) -> String {
        let mut csv = String::from("month,by,name,cost\n");
        let rows = self
            .per_user
            .iter()
            .map(|line| ("user", line))
            .chain(self.per_template.iter().map(|line| ("template", line)));
        for (by, line) in rows {
            csv.push_str(&format!(
                "{},{by},{},{:.2}\n",
                self.month,
                csv_field(&line.name),
                line.cost
            ));
        }
        csv
    }
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// Money rounded to cents, for people (`12.35`).
pub fn money(amount: f64) -> String {
    format!("{amount:.2}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn showback_csv_has_a_header_and_quotes_what_needs_it() {
        let view = ShowbackView {
            month: "2026-11".into(),
            per_user: vec![ShowbackLineView {
                name: "alice".into(),
                cost: 12.345,
            }],
            per_template: vec![ShowbackLineView {
                name: "odd,\"name\"".into(),
                cost: 1.0,
            }],
            total: 13.345,
        };
        assert_eq!(
            view.to_csv(),
            "month,by,name,cost\n2026-11,user,alice,12.35\n2026-11,template,\"odd,\"\"name\"\"\",1.00\n"
        );
    }
}
