//! Gates: a tenant's hooks asked, synchronously, before a create, change or delete is
//! queued. Each is sent the request and the plan's summary ([`GateRequestBody`],
//! signed as events are) and answers `{"allow": true}` or `{"allow": false, "reason":
//! "..."}`; the first refusal refuses the operation with its reason and nothing is
//! stored. A gate that cannot be asked (down, slow, a bad answer, an address the
//! network rules refuse) refuses too, saying it is unreachable, unless its failure
//! policy is `allow`.

use std::time::Duration;

use api_types::{
    GateAnswer, GateFailurePolicy, GateOperation, GatePlanSummary, GateRequestBody, HookCluster,
    HookTenant, Operation, HOOK_SCHEMA_VERSION,
};
use serde_json::{json, Value};

use super::send::{call, Call};
use crate::operations::{ClusterChange, CreateRequest, OperationError, Preview};
use crate::store::clusters::Cluster;
use crate::store::Store;

/// The most of a gate's answer that is read.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// What a gate is asked about.
#[derive(Debug, Clone)]
pub struct GateCall {
    pub operation: GateOperation,
    /// The job's operation, which the gate is sent by name (`create`, `add nodes`…).
    pub job_operation: Operation,
    pub cluster: HookCluster,
    /// The user asking (their id).
    pub requested_by: Option<String>,
    pub request: Value,
    pub plan: GatePlanSummary,
}

fn summary(preview: &Preview) -> GatePlanSummary {
    GatePlanSummary {
        nodes_before: preview.from.size() as u64,
        nodes_after: preview.to.size() as u64,
        services: preview
            .to
            .services()
            .into_iter()
            .map(|service| service.to_string())
            .collect(),
        tasks: preview.dag.len() as u64,
    }
}

impl GateCall {
    /// A create of `request`, planned as `preview`.
    pub fn create(request: &CreateRequest, preview: &Preview) -> Self {
        Self {
            operation: GateOperation::Create,
            job_operation: Operation::Create,
            cluster: HookCluster {
                id: None,
                name: request.name.to_string(),
            },
            requested_by: request.owner_id.clone(),
            request: json!({
                "name": request.name.to_string(),
                "template": request.template.to_string(),
                "size": request.solve.size,
                "services": request.solve.services,
                "provider": request.solve.provider.as_ref().map(ToString::to_string),
                "hardwaretype": request.solve.hardwaretype.as_ref().map(ToString::to_string),
                "imagetype": request.solve.imagetype.as_ref().map(ToString::to_string),
                "config": request.config,
            }),
            plan: summary(preview),
        }
    }

    /// `change` of `cluster`, planned as `preview`: a delete asks the delete gates, any
    /// other change the change gates.
    pub fn change(
        cluster: &Cluster,
        change: &ClusterChange,
        requested_by: Option<&str>,
        preview: &Preview,
    ) -> Self {
        let mut request = json!({ "operation": change.operation().label() });
        // The details of the common changes; the others are named by their operation.
        let detail = match change {
            ClusterChange::AddNodes { count } => Some(("count", json!(count))),
            ClusterChange::AddServices { services }
            | ClusterChange::RemoveServices { services } => Some(("services", json!(services))),
            ClusterChange::RemoveNodes { which } => Some(("nodes", json!(format!("{which:?}")))),
            ClusterChange::Delete { force } => Some(("force", json!(force))),
            _ => None,
        };
        if let (Some((key, value)), Some(object)) = (detail, request.as_object_mut()) {
            object.insert(key.to_owned(), value);
        }
        Self {
            operation: if matches!(change, ClusterChange::Delete { .. }) {
                GateOperation::Delete
            } else {
                GateOperation::Change
            },
            job_operation: change.operation(),
            cluster: HookCluster {
                id: Some(cluster.id.clone()),
                name: cluster.name.clone(),
            },
            requested_by: requested_by.map(str::to_owned),
            request,
            plan: summary(preview),
        }
    }
}

/// Asks the tenant's gates for `call.operation`, in the order they were added; `Ok`
/// when every one allows it (or none exists). Operations nobody asked for (the
/// janitor's delete of a cluster whose lease ran out) are the operator's policy and
/// are not gated.
pub async fn check_gates(
    store: &Store,
    tenant_id: &str,
    call_for: GateCall,
) -> Result<(), OperationError> {
    if call_for.requested_by.is_none() {
        return Ok(());
    }
    let gates = store.gate_hooks(tenant_id, call_for.operation).await?;
    if gates.is_empty() {
        return Ok(());
    }
    let tenant = store.tenant(tenant_id).await?;
    let requested_by = match &call_for.requested_by {
        Some(id) => store.user(id).await.ok().map(|user| user.username),
        None => None,
    };
    let body = GateRequestBody {
        schema: HOOK_SCHEMA_VERSION,
        gate: call_for.operation,
        operation: call_for.job_operation,
        tenant: HookTenant {
            id: tenant.id.clone(),
            name: tenant.name.clone(),
        },
        cluster: call_for.cluster.clone(),
        requested_by,
        request: call_for.request.clone(),
        plan: call_for.plan.clone(),
    };
    // Strings, numbers and JSON values only: serialising cannot fail.
    let text = serde_json::to_string(&body).unwrap_or_default();
    for gate in gates {
        let secret = store.hook_secret(&gate.id).await?;
        let id = uuid::Uuid::new_v4().to_string();
        let outcome = call(
            store.hook_network(),
            Call {
                url: &gate.url,
                secret: &secret,
                id: &id,
                event: "gate",
                body: text.clone(),
                timeout: Duration::from_millis(u64::try_from(gate.timeout_ms).unwrap_or(0)),
            },
            MAX_ANSWER_BYTES,
        )
        .await;
        let answer = match (&outcome.status, &outcome.error) {
            // Without the URL's path, which the answer goes to the asking user with.
            (_, Some(error)) => Err(without_path(error, &gate.url)),
            (Some(status), None) if !(200..300).contains(status) => {
                Err(format!("it answered HTTP {status}"))
            }
            _ => serde_json::from_slice::<GateAnswer>(&outcome.body).map_err(|_| {
                "its answer is not {\"allow\": true|false, \"reason\": \"...\"}".to_owned()
            }),
        };
        let what = call_for.job_operation.label();
        match answer {
            Ok(GateAnswer { allow: true, .. }) => {}
            Ok(GateAnswer {
                allow: false,
                reason,
            }) => {
                return Err(OperationError::GateRefused(format!(
                    "the gate at {} refused the {what}: {}",
                    shown(&gate.url),
                    reason.unwrap_or_else(|| "no reason given".to_owned())
                )))
            }
            Err(why) => match gate.on_failure {
                GateFailurePolicy::Allow => {
                    tracing::warn!(gate = %shown(&gate.url), %why, "gate unreachable; its policy allows");
                }
                GateFailurePolicy::Refuse => {
                    return Err(OperationError::GateRefused(format!(
                        "the gate at {} is unreachable ({why}), and its failure policy \
                         refuses the {what}",
                        shown(&gate.url)
                    )))
                }
            },
        }
    }
    Ok(())
}

/// A gate's URL as a refusal shows it to whoever asked: scheme, host and port only (a
/// path may hold a token).
fn shown(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(parsed) => format!(
            "{}://{}{}",
            parsed.scheme(),
            parsed.host_str().unwrap_or_default(),
            parsed
                .port()
                .map(|port| format!(":{port}"))
                .unwrap_or_default()
        ),
        Err(_) => "(an unreadable URL)".to_owned(),
    }
}

/// `text` with `url` (as given, and as parsed back) shown as [`shown`] does.
fn without_path(text: &str, url: &str) -> String {
    let short = shown(url);
    let mut text = text.replace(url, &short);
    if let Ok(parsed) = url::Url::parse(url) {
        text = text.replace(parsed.as_str(), &short);
    }
    text
}
