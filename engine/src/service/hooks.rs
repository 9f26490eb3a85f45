//! A tenant's lifecycle hooks: its admins add, list and remove them (superadmins those
//! of every tenant), send a test event, read each hook's delivery log and send a
//! delivery again.
//!
//! The signing secret is made here, returned once in [`CreatedHook`] and stored sealed;
//! no later answer holds it. A hook's URL is checked against the operator's network
//! rules when it is saved (and again at every call; see [`crate::hooks::network`]).

use api_types::{
    AuditAction, CreatedHook, DeliveryAttemptView, DeliveryView, GateFailurePolicy, HookEvent,
    HookEventBody, HookLinks, HookRequest, HookTenant, HookView, HOOK_SCHEMA_VERSION,
};
use ring::rand::{SecureRandom, SystemRandom};

use super::{AuditRecord, Caller, Page, PageRequest, Problem, Service, ServiceError};
use crate::hooks::send::MAX_TIMEOUT;
use crate::store::hooks::{rfc3339, Delivery, Hook};
use crate::store::{now_ms, StoreError};

/// The longest URL a hook may have.
const MAX_URL: usize = 2048;

fn view(hook: Hook) -> HookView {
    HookView {
        id: hook.id,
        tenant_id: hook.tenant_id,
        url: hook.url,
        events: hook.events,
        gates: hook.gates,
        format: hook.format,
        timeout_secs: u32::try_from(hook.timeout_ms / 1000).unwrap_or(0),
        on_failure: hook.on_failure,
        created_by: hook.created_by,
        created_at_ms: hook.created_at_ms,
    }
}

/// What the audit log keeps of a hook (never its secret).
fn audit_body(hook: &Hook) -> String {
    serde_json::json!({
        "url": hook.url,
        "events": hook.events,
        "gates": hook.gates,
        "format": hook.format,
        "on_failure": hook.on_failure,
    })
    .to_string()
}

/// 32 random bytes, hex: a signing secret.
fn new_secret() -> Result<String, ServiceError> {
    let mut bytes = [0u8; 32];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| ServiceError::internal("the random source failed"))?;
    Ok(hex::encode(bytes))
}

impl Service {
    /// The hook `id` if the caller administers its tenant; `NotFound` exactly as for a
    /// missing hook when it belongs to a tenant the caller cannot see.
    async fn administered_hook(&self, caller: &Caller, id: &str) -> Result<Hook, ServiceError> {
        let what = || format!("hook {id:?}");
        caller
            .administered(what, self.store.hook(id), |hook| &hook.tenant_id)
            .await
    }

    /// The hooks of the caller's tenant; a superadmin's list holds every tenant's.
    pub async fn list_hooks(
        &self,
        caller: &Caller,
        page: PageRequest,
    ) -> Result<Page<HookView>, ServiceError> {
        let tenant = caller.administered_scope()?;
        let (hooks, total) = self.store.hooks_window(tenant, page.window()?).await?;
        Ok(page.of(hooks.into_iter().map(view).collect(), total))
    }

    pub async fn hook(&self, caller: &Caller, id: &str) -> Result<HookView, ServiceError> {
        Ok(view(self.administered_hook(caller, id).await?))
    }

    /// Adds a hook to the caller's tenant and makes its secret, returned this once.
    /// Refused (422, naming the address and the flag) when the URL reaches an address
    /// the operator has not allowed.
    pub async fn add_hook(
        &self,
        caller: &Caller,
        request: &HookRequest,
    ) -> Result<CreatedHook, ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        let mut problems = Vec::new();
        let url = request.url.trim();
        if url.is_empty() || url.len() > MAX_URL {
            problems.push(Problem::new(
                "url",
                format!("must be an http(s) URL of 1-{MAX_URL} characters"),
            ));
        } else if let Err(refusal) =
            crate::hooks::network::check_url(self.store.hook_network(), url).await
        {
            problems.push(Problem::new("url", refusal.to_string()));
        }
        if request.events.is_empty() && request.gates.is_empty() {
            problems.push(Problem::new(
                "events",
                "name at least one event (or make the hook a gate with `gates`)",
            ));
        }
        let max_secs = MAX_TIMEOUT.as_secs();
        let timeout_secs = request.timeout_secs.unwrap_or(10);
        if timeout_secs == 0 || u64::from(timeout_secs) > max_secs {
            problems.push(Problem::new(
                "timeout_secs",
                format!("{timeout_secs} is out of range (1-{max_secs})"),
            ));
        }
        if !problems.is_empty() {
            return Err(ServiceError::invalid_fields("hook", problems));
        }
        let mut events = request.events.clone();
        events.sort();
        events.dedup();
        let mut gates = request.gates.clone();
        gates.sort();
        gates.dedup();
        let hook = Hook {
            id: uuid::Uuid::new_v4().to_string(),
            tenant_id: caller.tenant_id().to_owned(),
            url: url.to_owned(),
            events,
            gates,
            format: request.format.unwrap_or_default(),
            timeout_ms: i64::from(timeout_secs) * 1000,
            on_failure: request.on_failure.unwrap_or(GateFailurePolicy::Refuse),
            created_by: Some(caller.principal.username.clone()),
            created_at_ms: now_ms(),
        };
        let secret = new_secret()?;
        self.store.insert_hook(&hook, &secret).await?;
        self.audit(
            caller,
            AuditRecord {
                after: Some(audit_body(&hook)),
                ..AuditRecord::new(&hook.tenant_id, AuditAction::HookCreate, "hook", &hook.id)
            },
        )
        .await;
        Ok(CreatedHook {
            hook: view(hook),
            secret,
        })
    }

    /// Removes a hook with its delivery log; deliveries not yet sent are dropped.
    pub async fn remove_hook(&self, caller: &Caller, id: &str) -> Result<(), ServiceError> {
        let hook = self.administered_hook(caller, id).await?;
        if !self.store.delete_hook(&hook.id).await? {
            return Err(ServiceError::NotFound(format!("hook {id:?}")));
        }
        self.audit(
            caller,
            AuditRecord {
                before: Some(audit_body(&hook)),
                ..AuditRecord::new(&hook.tenant_id, AuditAction::HookDelete, "hook", &hook.id)
            },
        )
        .await;
        Ok(())
    }

    /// Queues a `test` event to the hook, through the same deliveries as any event;
    /// its log shows how the receiver answered.
    pub async fn test_hook(&self, caller: &Caller, id: &str) -> Result<DeliveryView, ServiceError> {
        let hook = self.administered_hook(caller, id).await?;
        let tenant = self.store.tenant(&hook.tenant_id).await?;
        let now = now_ms();
        let body = HookEventBody {
            schema: HOOK_SCHEMA_VERSION,
            event: HookEvent::Test,
            id: uuid::Uuid::new_v4().to_string(),
            time: rfc3339(now),
            tenant: HookTenant {
                id: tenant.id,
                name: tenant.name,
            },
            cluster: None,
            job: None,
            failed_step: None,
            links: HookLinks {
                job: None,
                cluster: None,
            },
            approval: None,
            lease: None,
            health: None,
            replacement: None,
        };
        let text = serde_json::to_string(&body).map_err(ServiceError::internal)?;
        let delivery_id = self
            .store
            .insert_delivery(&hook, HookEvent::Test, &body.id, &text, now)
            .await?;
        self.delivery_view(self.store.delivery(&delivery_id).await?)
            .await
    }

    /// The hook's deliveries, newest first, each with its attempts.
    pub async fn hook_deliveries(
        &self,
        caller: &Caller,
        id: &str,
        page: PageRequest,
    ) -> Result<Page<DeliveryView>, ServiceError> {
        let hook = self.administered_hook(caller, id).await?;
        let (deliveries, total) = self
            .store
            .deliveries_window(&hook.id, page.window()?)
            .await?;
        let mut views = Vec::with_capacity(deliveries.len());
        for delivery in deliveries {
            views.push(self.delivery_view(delivery).await?);
        }
        Ok(page.of(views, total))
    }

    /// Sends a delivered or given-up delivery again, with its id and body.
    pub async fn redeliver(
        &self,
        caller: &Caller,
        hook_id: &str,
        delivery_id: &str,
    ) -> Result<DeliveryView, ServiceError> {
        let hook = self.administered_hook(caller, hook_id).await?;
        let what = || format!("delivery {delivery_id:?}");
        let delivery = match self.store.delivery(delivery_id).await {
            Ok(delivery) if delivery.hook_id == hook.id => delivery,
            Ok(_) | Err(StoreError::NotFound(_)) => return Err(ServiceError::NotFound(what())),
            Err(error) => return Err(error.into()),
        };
        if !self.store.redeliver(&delivery.id, now_ms()).await? {
            return Err(ServiceError::Conflict(format!(
                "delivery {delivery_id} is {} already: it is sent again without asking",
                self.store.delivery(delivery_id).await?.state
            )));
        }
        self.audit(
            caller,
            AuditRecord::new(
                &hook.tenant_id,
                AuditAction::HookRedeliver,
                "hook",
                &hook.id,
            ),
        )
        .await;
        self.delivery_view(self.store.delivery(delivery_id).await?)
            .await
    }

    async fn delivery_view(&self, delivery: Delivery) -> Result<DeliveryView, ServiceError> {
        let log = self
            .store
            .delivery_attempts(&delivery.id)
            .await?
            .into_iter()
            .map(|attempt| DeliveryAttemptView {
                attempt: attempt.attempt,
                at_ms: attempt.at_ms,
                status: attempt.status.and_then(|status| u16::try_from(status).ok()),
                error: attempt.error,
                response_excerpt: attempt.response_excerpt,
                elapsed_ms: attempt.elapsed_ms,
            })
            .collect();
        let event = delivery
            .event
            .parse::<HookEvent>()
            .map_err(ServiceError::internal)?;
        let waiting = matches!(
            delivery.state,
            api_types::DeliveryState::Pending | api_types::DeliveryState::Sending
        );
        Ok(DeliveryView {
            id: delivery.id,
            hook_id: delivery.hook_id,
            event,
            event_id: delivery.event_id,
            state: delivery.state,
            attempts: delivery.attempts,
            next_attempt_ms: waiting.then_some(delivery.next_attempt_ms),
            created_at_ms: delivery.created_at_ms,
            delivered_at_ms: delivery.delivered_at_ms,
            log,
        })
    }
}
