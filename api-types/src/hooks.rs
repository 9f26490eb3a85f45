//! Lifecycle hooks: the HTTP endpoints a tenant's admins register to hear of its jobs
//! (events, delivered through the durable store and signed with the hook's secret) or
//! to be asked before an operation is queued (gates). Here are the requests and views
//! of the hooks API, each delivery's log, and the JSON bodies a receiver gets: the
//! versioned event body ([`HookEventBody`], `"schema": 1`) and the gate's question and
//! answer ([`GateRequestBody`], [`GateAnswer`]).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::states::{word_enum, UnknownValue, Word};
use crate::{ApprovalOperation, Operation, TaskAction};

/// The version of [`HookEventBody`] and [`GateRequestBody`] (their `schema` field).
pub const HOOK_SCHEMA_VERSION: u32 = 1;

/// What a hook can be told of. The words have dots, so this is not a `word_enum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum HookEvent {
    /// A job's first step started.
    #[serde(rename = "job.started")]
    JobStarted,
    /// A job ended with every step done.
    #[serde(rename = "job.succeeded")]
    JobSucceeded,
    /// A job's step failed for good (the body names it).
    #[serde(rename = "job.failed")]
    JobFailed,
    /// A cluster's lease ends within a day, then within an hour (the body's `lease`
    /// says when and which warning).
    #[serde(rename = "lease.expiring")]
    LeaseExpiring,
    /// A monitored service of a node stopped answering its health check (it answered
    /// at the check before; the body's `health` names node, service and what the check
    /// said).
    #[serde(rename = "health.down")]
    HealthDown,
    /// A monitored service that had stopped answering answers again.
    #[serde(rename = "health.up")]
    HealthUp,
    /// A node was replaced by a new one (healing or a user's `replace-nodes`), once its
    /// job succeeded; the body's `replacement` names the old node and the new.
    #[serde(rename = "node.replaced")]
    NodeReplaced,
    /// A user's create or grow waits for an approver (the body's `approval` says what
    /// and why).
    #[serde(rename = "approval.needed")]
    ApprovalNeeded,
    /// Sent on request (`corral hook test`), to check a receiver.
    #[serde(rename = "test")]
    Test,
}

impl HookEvent {
    pub const ALL: &'static [HookEvent] = &[
        HookEvent::JobStarted,
        HookEvent::JobSucceeded,
        HookEvent::JobFailed,
        HookEvent::LeaseExpiring,
        HookEvent::HealthDown,
        HookEvent::HealthUp,
        HookEvent::NodeReplaced,
        HookEvent::ApprovalNeeded,
        HookEvent::Test,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::JobStarted => "job.started",
            HookEvent::JobSucceeded => "job.succeeded",
            HookEvent::JobFailed => "job.failed",
            HookEvent::LeaseExpiring => "lease.expiring",
            HookEvent::HealthDown => "health.down",
            HookEvent::HealthUp => "health.up",
            HookEvent::NodeReplaced => "node.replaced",
            HookEvent::ApprovalNeeded => "approval.needed",
            HookEvent::Test => "test",
        }
    }
}

impl FromStr for HookEvent {
    type Err = UnknownValue;

    fn from_str(raw: &str) -> Result<Self, UnknownValue> {
        HookEvent::ALL
            .iter()
            .copied()
            .find(|event| event.as_str() == raw)
            .ok_or_else(|| UnknownValue {
                what: "hook event",
                value: raw.to_owned(),
            })
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

word_enum!(
    /// What a hook's deliveries carry: Corral's JSON event body, or a Slack-compatible
    /// `{"text": "..."}`.
    #[derive(Default)]
    HookFormat, "hook format" {
        #[default]
        Json => "json",
        Slack => "slack",
    }
);

word_enum!(
    /// The operations a gate hook is asked about before their job is queued.
    GateOperation, "gate operation" {
        Create => "create",
        Change => "change",
        Delete => "delete",
    }
);

word_enum!(
    /// What a gate that cannot be asked (down, slow, a bad answer) means.
    #[derive(Default)]
    GateFailurePolicy, "gate failure policy" {
        /// The operation goes ahead.
        Allow => "allow",
        /// The operation is refused, saying the gate is unreachable.
        #[default]
        Refuse => "refuse",
    }
);

word_enum!(
    /// Where a delivery is.
    DeliveryState, "delivery state" {
        /// Waiting for its (next) attempt.
        Pending => "pending",
        /// A process is sending it now.
        Sending => "sending",
        /// The receiver answered 2xx.
        Delivered => "delivered",
        /// Given up on: no 2xx answer within a day of retries.
        Failed => "failed",
    }
);

/// What `POST /api/v1/hooks` takes. A hook hears `events`, is a gate for `gates`, or
/// both; it needs at least one of them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct HookRequest {
    /// `http://` or `https://`. Only public addresses, unless the operator allows a
    /// range with `corral serve --hook-allow CIDR`.
    pub url: String,
    #[serde(default)]
    pub events: Vec<HookEvent>,
    #[serde(default)]
    pub gates: Vec<GateOperation>,
    #[serde(default)]
    pub format: Option<HookFormat>,
    /// Seconds each call may take, 1-10 (default 10).
    #[serde(default)]
    pub timeout_secs: Option<u32>,
    /// What a gate that cannot be asked means (default `refuse`).
    #[serde(default)]
    pub on_failure: Option<GateFailurePolicy>,
}

/// A registered hook. Its secret is never shown again after [`CreatedHook`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HookView {
    pub id: String,
    pub tenant_id: String,
    pub url: String,
    pub events: Vec<HookEvent>,
    pub gates: Vec<GateOperation>,
    pub format: HookFormat,
    pub timeout_secs: u32,
    pub on_failure: GateFailurePolicy,
    pub created_by: Option<String>,
    pub created_at_ms: i64,
}

/// A hook just added, with its signing secret: shown this once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreatedHook {
    pub hook: HookView,
    /// The HMAC-SHA256 key of the `Corral-Signature` header. Not stored in clear and
    /// never shown again.
    pub secret: String,
}

/// One try at sending a delivery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeliveryAttemptView {
    pub attempt: i64,
    pub at_ms: i64,
    /// The receiver's HTTP status, when it answered.
    pub status: Option<u16>,
    /// Why there was no answer (refused address, timeout, connection refused).
    pub error: Option<String>,
    /// The start of the answer's body (at most 1 KiB).
    pub response_excerpt: String,
    pub elapsed_ms: i64,
}

/// One event sent (or to be sent) to one hook: the same id on every retry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeliveryView {
    /// The `Corral-Delivery` header.
    pub id: String,
    pub hook_id: String,
    pub event: HookEvent,
    /// The event's id (the same for every hook the event went to).
    pub event_id: String,
    pub state: DeliveryState,
    pub attempts: i64,
    /// When the next attempt is due, while one is.
    pub next_attempt_ms: Option<i64>,
    pub created_at_ms: i64,
    pub delivered_at_ms: Option<i64>,
    /// Newest first.
    pub log: Vec<DeliveryAttemptView>,
}

/// The tenant an event or gate question is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HookTenant {
    pub id: String,
    pub name: String,
}

/// The cluster an event or gate question is about (a cluster still to be made has no
/// id yet).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HookCluster {
    pub id: Option<String>,
    pub name: String,
}

/// The job an event is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HookJob {
    pub id: String,
    /// `create`, `add nodes`, `delete`… (the spaced words: [`Operation::label`]).
    #[serde(with = "crate::operation::labelled")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub operation: Operation,
    pub state: crate::JobState,
    /// The user who asked for it, by name.
    pub requested_by: Option<String>,
}

/// The step that failed a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HookFailedStep {
    /// The node's id (`<cluster id>-<number>`).
    pub node: String,
    pub service: Option<String>,
    pub action: TaskAction,
    pub message: String,
}

/// Where to look: the pages' paths on the Corral server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HookLinks {
    pub job: Option<String>,
    pub cluster: Option<String>,
}

/// The JSON body of an event delivery (`format: json`). Signed: `Corral-Signature:
/// sha256=<hex HMAC-SHA256 of "<Corral-Timestamp>.<body>">` with the hook's secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HookEventBody {
    /// [`HOOK_SCHEMA_VERSION`]: fields are only added within a version.
    pub schema: u32,
    pub event: HookEvent,
    /// The event's id: the same in every hook's delivery of it.
    pub id: String,
    /// When it happened, RFC 3339 (UTC).
    pub time: String,
    pub tenant: HookTenant,
    pub cluster: Option<HookCluster>,
    pub job: Option<HookJob>,
    /// For `job.failed`: the step that failed.
    pub failed_step: Option<HookFailedStep>,
    pub links: HookLinks,
    /// For `approval.needed`: the request that waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<HookApproval>,
    /// For `lease.expiring`: when the lease ends and which warning this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<HookLease>,
    /// For `health.down` and `health.up`: the check whose answer changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<HookHealth>,
    /// For `node.replaced`: the node that went and the one in its place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacement: Option<HookReplacement>,
}

/// A node of the cluster an event is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HookNode {
    /// The node's id (`<cluster id>-<number>`).
    pub id: String,
    pub number: u32,
    /// What the provider named the machine; absent when it was never made.
    pub hostname: Option<String>,
}

/// The health check a `health.down` or `health.up` event is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HookHealth {
    pub node: HookNode,
    /// The service whose check it is.
    pub service: String,
    /// What the check said (`health.down`: its exit code and the end of its output);
    /// absent when it passed.
    pub message: Option<String>,
    /// For `health.up`: when the service was first found down, RFC 3339 (UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down_since: Option<String>,
}

/// The nodes a `node.replaced` event names: the one replaced and its successor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HookReplacement {
    /// The node that was replaced (now deleted).
    pub old: HookNode,
    /// The node built in its place, running the same services.
    pub new: HookNode,
}

/// The lease a `lease.expiring` event warns of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HookLease {
    /// When it ends, RFC 3339 (UTC).
    pub expires: String,
    /// `day` (sent a day before) or `hour` (an hour before).
    pub warning: crate::states::LeaseWarning,
    /// How long the template's grace keeps the stopped cluster before deleting it, in
    /// seconds; absent: it is deleted when the lease ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_seconds: Option<u64>,
}

/// The request an `approval.needed` event is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct HookApproval {
    pub id: String,
    pub operation: ApprovalOperation,
    /// The cluster's size if approved.
    pub size: u64,
    /// The rule that matched, in words (`size above 3`).
    pub rule: String,
    /// The group whose members may decide besides the tenant admins.
    pub approvers: Option<String>,
    pub requested_by: Option<String>,
    /// When it expires undecided, RFC 3339 (UTC).
    pub expires: String,
}

/// How big an operation's plan is, as a gate is told.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GatePlanSummary {
    pub nodes_before: u64,
    pub nodes_after: u64,
    /// The services of the cluster after the operation.
    pub services: Vec<String>,
    /// Steps the job would run.
    pub tasks: u64,
}

/// What a gate hook is sent (signed as events are) before an operation is queued.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GateRequestBody {
    pub schema: u32,
    pub gate: GateOperation,
    /// The operation by name (`create`, `add nodes`, `delete`…: [`Operation::label`]).
    #[serde(with = "crate::operation::labelled")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub operation: Operation,
    pub tenant: HookTenant,
    pub cluster: HookCluster,
    pub requested_by: Option<String>,
    /// The request as asked (template and size for a create; the change otherwise).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub request: serde_json::Value,
    pub plan: GatePlanSummary,
}

/// A gate's answer: `{"allow": false, "reason": "..."}` refuses the operation with
/// that reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GateAnswer {
    pub allow: bool,
    #[serde(default)]
    pub reason: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_words_are_serdes_and_read_back() {
        for event in HookEvent::ALL {
            let json = serde_json::to_value(event).expect("serialises");
            assert_eq!(json, serde_json::Value::from(event.as_str()));
            assert_eq!(event.as_str().parse::<HookEvent>(), Ok(*event));
        }
        assert!("job.done".parse::<HookEvent>().is_err());
        for format in HookFormat::ALL {
            assert_eq!(
                serde_json::to_value(format).expect("serialises"),
                serde_json::Value::from(format.word())
            );
        }
    }
}
