//! Approvals: which creates and grows wait for a person, and who may decide them.
//!
//! [`decide`] and [`may_decide`] are pure (table-tested below); the service calls
//! [`decide`] after the preview, with the plan's size, and either submits as usual or
//! holds the operation: [`hold_create`] stores the cluster in `awaiting-approval` with
//! an empty layout, [`hold_grow`] moves an active cluster there, each with its
//! request row, in one transaction. Nothing is made while it waits: no job, no task,
//! no node. An approval submits the job (re-planned then, see
//! [`super::create::create_held`] and [`super::change::submit_held_change`]) in the
//! transaction that marks the request approved; a denial or the window's end
//! ([`settle`]) marks it and puts the cluster back (a held create's cluster ends
//! `deleted`: it never had anything). Holding writes an `approval.needed` delivery to
//! the tenant's hooks that hear it, in the same transaction.

use api_types::{ApprovalOperation, ApprovalRuleKind, ApprovalState, ClusterState};
use domain::cost::{format_amount, parse_amount, Micros};
use domain::names::{GroupName, ProviderName, TemplateName};

use super::create::{new_cluster, CreatePlan, CreateRequest};
use super::OperationError;
use crate::queue::Queue;
use crate::store::approvals::{
    decide_in, insert_request_in, move_cluster_state_in, Decision as Stored, NewRequest, RequestRow,
};
use crate::store::clusters::{insert_cluster, lock_cluster_state, Cluster};
use crate::store::hooks::record_approval_needed;
use crate::store::{Store, StoreError};

/// A request waits this long for a decision unless its rule says otherwise.
pub const DEFAULT_WINDOW_MS: i64 = 24 * 3600 * 1000;
/// The longest window a rule may set.
pub const MAX_WINDOW_MS: i64 = 30 * 24 * 3600 * 1000;

/// What a rule matches on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleMatch {
    /// Creates and grows of clusters of this template.
    Template(TemplateName),
    /// Clusters that would have more than this many nodes.
    SizeAbove(u64),
    /// Clusters on this provider.
    Provider(ProviderName),
    /// Clusters whose estimated cost per month after the operation is above this
    /// (micro-units, docs/cost.md).
    CostAbove(Micros),
}

impl RuleMatch {
    /// Reads a rule as it is written (`--size-above 3`), naming what is wrong.
    pub fn parse(kind: &str, value: &str) -> Result<Self, String> {
        let kind: ApprovalRuleKind = kind.parse().map_err(|_| {
            format!(
                "unknown rule kind {kind:?}; the kinds are {}",
                ApprovalRuleKind::ALL
                    .iter()
                    .map(|kind| kind.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        Ok(match kind {
            ApprovalRuleKind::Template => RuleMatch::Template(
                TemplateName::parse(value).map_err(|error| format!("template: {error}"))?,
            ),
            ApprovalRuleKind::Provider => RuleMatch::Provider(
                ProviderName::parse(value).map_err(|error| format!("provider: {error}"))?,
            ),
            ApprovalRuleKind::SizeAbove => {
                RuleMatch::SizeAbove(value.trim().parse().map_err(|_| {
                    format!("size-above takes a whole number of nodes, not {value:?}")
                })?)
            }
            ApprovalRuleKind::CostAbove => RuleMatch::CostAbove(
                parse_amount(value).map_err(|error| format!("cost-above: {error}"))?,
            ),
        })
    }

    pub fn kind(&self) -> ApprovalRuleKind {
        match self {
            RuleMatch::Template(_) => ApprovalRuleKind::Template,
            RuleMatch::SizeAbove(_) => ApprovalRuleKind::SizeAbove,
            RuleMatch::Provider(_) => ApprovalRuleKind::Provider,
            RuleMatch::CostAbove(_) => ApprovalRuleKind::CostAbove,
        }
    }

    /// The value as stored beside the kind.
    pub fn value(&self) -> String {
        match self {
            RuleMatch::Template(name) => name.to_string(),
            RuleMatch::SizeAbove(nodes) => nodes.to_string(),
            RuleMatch::Provider(name) => name.to_string(),
            RuleMatch::CostAbove(amount) => format_amount(*amount),
        }
    }

    /// In words, for lists and for the request it held.
    pub fn describe(&self) -> String {
        match self {
            RuleMatch::Template(name) => format!("template {name}"),
            RuleMatch::SizeAbove(nodes) => format!("size above {nodes}"),
            RuleMatch::Provider(name) => format!("provider {name}"),
            RuleMatch::CostAbove(amount) => {
                format!("estimated cost above {} per month", format_amount(*amount))
            }
        }
    }

    fn matches(&self, ask: &Ask<'_>) -> bool {
        match self {
            RuleMatch::Template(name) => name.as_str() == ask.template,
            RuleMatch::SizeAbove(nodes) => ask.size > *nodes,
            RuleMatch::Provider(name) => name.as_str() == ask.provider,
            RuleMatch::CostAbove(amount) => ask.cost_per_month > *amount,
        }
    }
}

/// A tenant's rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub id: String,
    pub matches: RuleMatch,
    /// Members of this group may decide too (tenant admins always may).
    pub approvers: Option<GroupName>,
    pub window_ms: i64,
}

/// An operation as the rules see it, after its preview.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ask<'a> {
    pub operation: ApprovalOperation,
    pub template: &'a str,
    pub provider: &'a str,
    /// The cluster's size if it goes ahead.
    pub size: u64,
    /// The nodes it adds (a create adds them all).
    pub growth: u64,
    /// The cluster's estimated cost per month if it goes ahead (micro-units; 0 when
    /// unpriced).
    pub cost_per_month: Micros,
    /// Tenant admins (and superadmins) are the approvers of last resort: what they ask
    /// for goes ahead.
    pub by_admin: bool,
}

/// Whether an operation goes ahead or waits, and on which rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision<'r> {
    Proceed,
    Wait(&'r Rule),
}

/// The first of `rules` (oldest first) that holds `ask`; operations that add no node
/// never wait (only creates and grows are approved).
pub fn decide<'r>(rules: &'r [Rule], ask: &Ask<'_>) -> Decision<'r> {
    if ask.by_admin || ask.growth == 0 {
        return Decision::Proceed;
    }
    rules
        .iter()
        .find(|rule| rule.matches.matches(ask))
        .map_or(Decision::Proceed, Decision::Wait)
}

/// Who wants to decide a request.
#[derive(Debug, Clone, Copy)]
pub struct Decider<'a> {
    pub user_id: &'a str,
    pub is_admin: bool,
    pub groups: &'a [String],
}

/// Why someone may not decide a request (a 403 saying so).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    OwnRequest,
    NotAnApprover { group: Option<String> },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::OwnRequest => {
                f.write_str("you asked for this yourself; another approver must decide it")
            }
            Refusal::NotAnApprover { group: None } => {
                f.write_str("only a tenant admin may decide this request")
            }
            Refusal::NotAnApprover { group: Some(group) } => write!(
                f,
                "only a tenant admin or a member of group {group} may decide this request"
            ),
        }
    }
}

/// Whether `decider` may approve or deny a request of `requested_by` whose rule names
/// `approvers`: never their own request, else tenant admins and the group's members.
pub fn may_decide(
    decider: &Decider<'_>,
    requested_by: &str,
    approvers: Option<&str>,
) -> Result<(), Refusal> {
    if decider.user_id == requested_by {
        return Err(Refusal::OwnRequest);
    }
    let in_group =
        approvers.is_some_and(|group| decider.groups.iter().any(|have| have.as_str() == group));
    if decider.is_admin || in_group {
        Ok(())
    } else {
        Err(Refusal::NotAnApprover {
            group: approvers.map(str::to_owned),
        })
    }
}

/// What the service holds an operation with.
#[derive(Debug, Clone)]
pub struct Hold<'a> {
    pub rule: &'a Rule,
    pub requested_by: &'a str,
    /// The request as asked (re-read and re-planned at approval).
    pub request_json: String,
    /// What its preview showed.
    pub preview_json: String,
    /// What the request says held it, when not the rule's description (a budget).
    pub note: Option<String>,
}

impl Hold<'_> {
    fn row(
        &self,
        tenant_id: &str,
        cluster_id: &str,
        operation: ApprovalOperation,
        resume: ClusterState,
        now_ms: i64,
    ) -> NewRequest {
        NewRequest {
            tenant_id: tenant_id.to_owned(),
            cluster_id: cluster_id.to_owned(),
            operation,
            request_json: self.request_json.clone(),
            preview_json: self.preview_json.clone(),
            rule_id: self.rule.id.clone(),
            rule: self
                .note
                .clone()
                .unwrap_or_else(|| self.rule.matches.describe()),
            approver_group: self.rule.approvers.as_ref().map(ToString::to_string),
            resume_state: resume,
            requested_by: self.requested_by.to_owned(),
            expires_at_ms: now_ms.saturating_add(self.rule.window_ms),
        }
    }
}

/// Stores the planned create's cluster in `awaiting-approval` (an empty layout: no
/// node counts toward quotas yet, but the cluster does and holds its name) with its
/// request. Returns the cluster and the request's id.
pub async fn hold_create(
    store: &Store,
    request: &CreateRequest,
    plan: &CreatePlan,
    hold: &Hold<'_>,
    now_ms: i64,
) -> Result<(Cluster, String), OperationError> {
    let new = new_cluster(request, plan, ClusterState::AwaitingApproval);
    let (_turn, mut tx) = store.begin_write().await?;
    super::quota::check_growth(&mut tx, store.backend(), &request.tenant_id, 1, 0).await?;
    let cluster = insert_cluster(&mut tx, &new, now_ms).await?;
    let row = hold.row(
        &cluster.tenant_id,
        &cluster.id,
        ApprovalOperation::Create,
        ClusterState::Deleted,
        now_ms,
    );
    let id = insert_request_in(&mut tx, &row, now_ms).await?;
    record_approval_needed(&mut tx, &id, plan.preview.to.size() as u64, now_ms).await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok((cluster, id))
}

/// Moves an active cluster to `awaiting-approval` with its grow's request. Refused
/// like any change while the cluster is busy or failed.
pub async fn hold_grow(
    queue: &Queue,
    cluster: &Cluster,
    size: u64,
    hold: &Hold<'_>,
    now_ms: i64,
) -> Result<String, OperationError> {
    let store = queue.store();
    let (_turn, mut tx) = store.begin_write().await?;
    let state = lock_cluster_state(&mut tx, store.backend(), &cluster.id).await?;
    let unfinished = queue.unfinished_jobs_in(&mut tx, &cluster.id).await?;
    if state != ClusterState::Active || !unfinished.is_empty() {
        return Err(OperationError::Busy {
            name: cluster.name.clone(),
            state,
            hint: "only an active cluster with no job running can ask to grow".to_owned(),
        });
    }
    move_cluster_state_in(
        &mut tx,
        &cluster.id,
        ClusterState::Active,
        ClusterState::AwaitingApproval,
        now_ms,
    )
    .await?;
    let row = hold.row(
        &cluster.tenant_id,
        &cluster.id,
        ApprovalOperation::Grow,
        ClusterState::Active,
        now_ms,
    );
    let id = insert_request_in(&mut tx, &row, now_ms).await?;
    record_approval_needed(&mut tx, &id, size, now_ms).await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(id)
}

/// Ends a pending request without running it (denied with a reason, or expired) and
/// puts its cluster back where it was before it asked. False when the request had
/// already left `pending`.
pub async fn settle(
    store: &Store,
    request: &RequestRow,
    state: ApprovalState,
    decided_by: Option<&str>,
    reason: &str,
    now_ms: i64,
) -> Result<bool, OperationError> {
    let (_turn, mut tx) = store.begin_write().await?;
    let decision = Stored {
        state,
        decided_by,
        reason: Some(reason),
        job_id: None,
    };
    if !decide_in(&mut tx, &request.id, &decision, now_ms).await? {
        return Ok(false);
    }
    move_cluster_state_in(
        &mut tx,
        &request.cluster_id,
        ClusterState::AwaitingApproval,
        request.resume_state,
        now_ms,
    )
    .await?;
    tx.commit().await.map_err(StoreError::from)?;
    Ok(true)
}

/// Marks the request approved with its job inside the transaction that submits the
/// job; a conflict when it was no longer pending.
pub(super) async fn approve_in(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    approval: &Approval<'_>,
    job_id: &str,
    now_ms: i64,
) -> Result<(), OperationError> {
    let decision = Stored {
        state: ApprovalState::Approved,
        decided_by: Some(approval.decided_by),
        reason: None,
        job_id: Some(job_id),
    };
    if decide_in(tx, approval.request_id, &decision, now_ms).await? {
        Ok(())
    } else {
        Err(OperationError::AlreadyDecided(
            approval.request_id.to_owned(),
        ))
    }
}

/// An approval being acted on: the request and who approved it.
#[derive(Debug, Clone, Copy)]
pub struct Approval<'a> {
    pub request_id: &'a str,
    pub decided_by: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(id: &str, matches: RuleMatch) -> Rule {
        Rule {
            id: id.to_owned(),
            matches,
            approvers: None,
            window_ms: DEFAULT_WINDOW_MS,
        }
    }

    fn ask(operation: ApprovalOperation, size: u64, growth: u64) -> Ask<'static> {
        Ask {
            operation,
            template: "web-stack",
            provider: "docker",
            size,
            growth,
            cost_per_month: 0,
            by_admin: false,
        }
    }

    #[test]
    fn the_first_matching_rule_holds_a_create_or_a_grow() {
        let size = rule("size", RuleMatch::SizeAbove(3));
        let template = rule(
            "template",
            RuleMatch::Template(TemplateName::parse("web-stack").unwrap()),
        );
        let provider = rule(
            "provider",
            RuleMatch::Provider(ProviderName::parse("docker").unwrap()),
        );
        let other = rule(
            "other",
            RuleMatch::Template(TemplateName::parse("paas").unwrap()),
        );
        // Above 250 per month.
        let cost = rule("cost", RuleMatch::CostAbove(250_000_000));
        let costing = |cost_per_month, growth| Ask {
            cost_per_month,
            ..ask(ApprovalOperation::Grow, 4, growth)
        };
        let create = ApprovalOperation::Create;
        let grow = ApprovalOperation::Grow;
        // (rules, ask, the rule that holds it or None)
        let table: Vec<(Vec<&Rule>, Ask<'_>, Option<&str>)> = vec![
            (vec![], ask(create, 50, 50), None),
            (vec![&size], ask(create, 3, 3), None),
            (vec![&size], ask(create, 4, 4), Some("size")),
            (vec![&size], ask(create, 5, 5), Some("size")),
            (vec![&size], ask(grow, 4, 1), Some("size")),
            (vec![&size], ask(grow, 3, 1), None),
            // Shrinking or changing without adding nodes never waits.
            (vec![&size], ask(grow, 10, 0), None),
            (vec![&other], ask(create, 5, 5), None),
            (vec![&other, &template], ask(create, 1, 1), Some("template")),
            (vec![&provider, &size], ask(create, 5, 5), Some("provider")),
            (vec![&size, &provider], ask(create, 5, 5), Some("size")),
            (vec![&size, &provider], ask(create, 2, 2), Some("provider")),
            (vec![&cost], costing(250_000_001, 1), Some("cost")),
            (vec![&cost], costing(250_000_000, 1), None),
            (vec![&cost], ask(create, 50, 50), None),
            (vec![&cost], costing(900_000_000, 0), None),
            (vec![&size, &cost], costing(900_000_000, 1), Some("size")),
            (
                vec![&size],
                Ask {
                    by_admin: true,
                    ..ask(create, 5, 5)
                },
                None,
            ),
        ];
        for (rules, asked, expected) in table {
            let rules: Vec<Rule> = rules.into_iter().cloned().collect();
            let got = match decide(&rules, &asked) {
                Decision::Proceed => None,
                Decision::Wait(rule) => Some(rule.id.as_str()),
            };
            assert_eq!(got, expected, "{asked:?} against {rules:?}");
        }
    }

    #[test]
    fn requesters_never_decide_their_own_and_approvers_are_admins_or_the_group() {
        let team = vec!["data-team".to_owned()];
        let none: Vec<String> = Vec::new();
        let admin = |id: &'static str| Decider {
            user_id: id,
            is_admin: true,
            groups: &[],
        };
        // (who decides, who asked, the rule's approver group, the answer)
        type Case<'a> = (Decider<'a>, &'a str, Option<&'a str>, Result<(), Refusal>);
        let table: Vec<Case<'_>> = vec![
            (admin("boss"), "alice", None, Ok(())),
            (admin("boss"), "boss", None, Err(Refusal::OwnRequest)),
            (
                Decider {
                    user_id: "bob",
                    is_admin: false,
                    groups: &none,
                },
                "alice",
                None,
                Err(Refusal::NotAnApprover { group: None }),
            ),
            (
                Decider {
                    user_id: "bob",
                    is_admin: false,
                    groups: &team,
                },
                "alice",
                Some("data-team"),
                Ok(()),
            ),
            (
                Decider {
                    user_id: "bob",
                    is_admin: false,
                    groups: &team,
                },
                "alice",
                Some("ops"),
                Err(Refusal::NotAnApprover {
                    group: Some("ops".to_owned()),
                }),
            ),
            (
                Decider {
                    user_id: "bob",
                    is_admin: false,
                    groups: &team,
                },
                "bob",
                Some("data-team"),
                Err(Refusal::OwnRequest),
            ),
            (admin("boss"), "alice", Some("ops"), Ok(())),
        ];
        for (decider, requester, group, expected) in table {
            assert_eq!(
                may_decide(&decider, requester, group),
                expected,
                "{decider:?} on {requester}'s"
            );
        }
        assert_eq!(
            Refusal::OwnRequest.to_string(),
            "you asked for this yourself; another approver must decide it"
        );
    }

    #[test]
    fn rules_are_read_naming_what_is_wrong() {
        assert_eq!(
            RuleMatch::parse("size-above", "3"),
            Ok(RuleMatch::SizeAbove(3))
        );
        assert_eq!(
            RuleMatch::parse("template", "web-stack").map(|rule| rule.describe()),
            Ok("template web-stack".to_owned())
        );
        let unknown = RuleMatch::parse("cost-below", "10").unwrap_err();
        assert_eq!(
            unknown,
            "unknown rule kind \"cost-below\"; the kinds are template, size-above, provider, \
             cost-above"
        );
        assert_eq!(
            RuleMatch::parse("cost-above", "250.5").map(|rule| (rule.describe(), rule.value())),
            Ok((
                "estimated cost above 250.50 per month".to_owned(),
                "250.50".to_owned()
            ))
        );
        for bad in ["-1", "lots", "NaN"] {
            assert!(RuleMatch::parse("cost-above", bad)
                .unwrap_err()
                .starts_with("cost-above: "));
        }
        assert!(RuleMatch::parse("size-above", "many")
            .unwrap_err()
            .contains("whole number"));
        assert!(RuleMatch::parse("provider", "no such/name")
            .unwrap_err()
            .starts_with("provider: "));
    }
}
