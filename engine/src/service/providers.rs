//! A tenant's providers beyond their catalog definition: the credentials its admins set
//! for each (sealed; only their field names ever come back) and the provider check
//! behind `corral provider test` and the provider page's Test button.
//!
//! Both are tenant-admin operations on the caller's tenant, for a provider of that
//! tenant's catalog. Besides, any user of the tenant may set their own credentials for a
//! provider whose admins allow it (`"user_credentials": true`): nodes that jobs they ask
//! for make are then made with those, for the provider as it was defined when they set
//! them (see [`crate::store::Store::credentials_for`]); each user sees and changes only
//! their own. A check may make a machine: it does so only with a provider type
//! the tenant may use, under the tenant's own credentials, and always tries to delete
//! what it made, also when an earlier phase failed.

use std::time::{Duration, Instant};

use api_types::{
    PhaseOutcome, ProviderCredentialsView, ProviderTestPhase, ProviderTestReport,
    ProviderTestRequest,
};
use domain::catalog::Catalog;
use domain::names::{HardwareTypeName, ImageTypeName};

use super::{AuditRecord, Caller, Problem, Service, ServiceError};
use crate::execute::{node_spec, provider_settings};
use crate::provider::{
    CredentialBinding, Credentials, NodeProvider, NodeSpec, USER_CREDENTIALS_SETTING,
};
use crate::store::now_ms;
use crate::store::provider_credentials::CredentialsSource;

/// How long the check's new machine may take to accept SSH.
const TEST_CONFIRM_TIMEOUT: Duration = Duration::from_secs(120);

impl Service {
    /// What is set for `provider`'s credentials in the caller's tenant (names only).
    pub async fn provider_credentials(
        &self,
        caller: &Caller,
        provider: &str,
    ) -> Result<ProviderCredentialsView, ServiceError> {
        let (_, providertype) = self.administered_provider(caller, provider).await?;
        self.credentials_view(caller, provider, &providertype, &CredentialsSource::Tenant)
            .await
    }

    /// Sets the caller's tenant's credentials for `provider` from `json` (a JSON object
    /// of strings). The values are sealed before they are stored and never shown again;
    /// the audit log records who set which field names.
    pub async fn set_provider_credentials(
        &self,
        caller: &Caller,
        provider: &str,
        json: &str,
    ) -> Result<ProviderCredentialsView, ServiceError> {
        let (catalog, providertype) = self.administered_provider(caller, provider).await?;
        let binding = CredentialBinding::of(&providertype, &provider_settings(&catalog, provider));
        self.set_credentials(
            caller,
            provider,
            (&providertype, &binding),
            CredentialsSource::Tenant,
            json,
        )
        .await
    }

    /// Removes the caller's tenant's credentials for `provider`.
    pub async fn delete_provider_credentials(
        &self,
        caller: &Caller,
        provider: &str,
    ) -> Result<ProviderCredentialsView, ServiceError> {
        let (_, providertype) = self.administered_provider(caller, provider).await?;
        self.delete_credentials(caller, provider, &providertype, CredentialsSource::Tenant)
            .await
    }

    /// What the caller has set as their own credentials for `provider` (names only).
    pub async fn my_provider_credentials(
        &self,
        caller: &Caller,
        provider: &str,
    ) -> Result<ProviderCredentialsView, ServiceError> {
        let (providertype, _) = self.user_credentials_provider(caller, provider).await?;
        let source = CredentialsSource::User(caller.principal.user_id.clone());
        self.credentials_view(caller, provider, &providertype, &source)
            .await
    }

    /// Sets the caller's own credentials for `provider` from `json`, where the provider
    /// allows users' own. Sealed like the tenant's, and bound to the provider as it is
    /// defined now (see [`CredentialBinding`]); the audit log records field names.
    pub async fn set_my_provider_credentials(
        &self,
        caller: &Caller,
        provider: &str,
        json: &str,
    ) -> Result<ProviderCredentialsView, ServiceError> {
        let (providertype, binding) = self.user_credentials_provider(caller, provider).await?;
        let source = CredentialsSource::User(caller.principal.user_id.clone());
        self.set_credentials(caller, provider, (&providertype, &binding), source, json)
            .await
    }

    /// Removes the caller's own credentials for `provider`: nodes their jobs make use
    /// the tenant's again.
    pub async fn delete_my_provider_credentials(
        &self,
        caller: &Caller,
        provider: &str,
    ) -> Result<ProviderCredentialsView, ServiceError> {
        let (providertype, _) = self.user_credentials_provider(caller, provider).await?;
        let source = CredentialsSource::User(caller.principal.user_id.clone());
        self.delete_credentials(caller, provider, &providertype, source)
            .await
    }

    /// Sets `source`'s credentials (the tenant's or the caller's own) for `provider` of
    /// `providertype` defined as `binding` says, once the caller was found allowed to.
    async fn set_credentials(
        &self,
        caller: &Caller,
        provider: &str,
        (providertype, binding): (&str, &CredentialBinding),
        source: CredentialsSource,
        json: &str,
    ) -> Result<ProviderCredentialsView, ServiceError> {
        let credentials =
            Credentials::from_json_text(json).map_err(|error| ServiceError::Invalid {
                message: format!("the credentials of provider {provider:?} are refused: {error}"),
                details: vec![Problem {
                    path: "credentials".to_owned(),
                    message: error.to_string(),
                }],
            })?;
        let tenant_id = caller.tenant_id();
        self.store
            .set_credentials(
                tenant_id,
                provider,
                &source,
                binding,
                &credentials,
                Some(&caller.principal.username),
                now_ms(),
            )
            .await?;
        let action = audit_action("set", &source);
        let mut record = AuditRecord::new(tenant_id, &action, "provider", provider);
        record.after = Some(serde_json::json!({ "fields": credentials.field_names() }).to_string());
        self.audit(caller, record).await;
        self.credentials_view(caller, provider, providertype, &source)
            .await
    }

    /// Removes `source`'s credentials, once the caller was found allowed to.
    async fn delete_credentials(
        &self,
        caller: &Caller,
        provider: &str,
        providertype: &str,
        source: CredentialsSource,
    ) -> Result<ProviderCredentialsView, ServiceError> {
        let tenant_id = caller.tenant_id();
        if !self
            .store
            .delete_credentials(tenant_id, provider, &source)
            .await?
        {
            return Err(ServiceError::NotFound(match source {
                CredentialsSource::Tenant => format!("credentials of provider {provider:?}"),
                CredentialsSource::User(_) => format!("your credentials of provider {provider:?}"),
            }));
        }
        let action = audit_action("delete", &source);
        self.audit(
            caller,
            AuditRecord::new(tenant_id, &action, "provider", provider),
        )
        .await;
        self.credentials_view(caller, provider, providertype, &source)
            .await
    }

    /// The provider type of `provider` of the caller's tenant's catalog and its
    /// binding as defined now, when the provider takes users' own credentials. Any
    /// user of the tenant may ask: it is about their own credentials.
    async fn user_credentials_provider(
        &self,
        caller: &Caller,
        provider: &str,
    ) -> Result<(String, CredentialBinding), ServiceError> {
        let catalog = crate::catalog::load(&self.store, caller.tenant_id()).await?;
        let providertype = providertype_of(&catalog, provider)?.to_owned();
        let settings = provider_settings(&catalog, provider);
        if !settings.allows_user_credentials() {
            return Err(ServiceError::Forbidden(format!(
                "provider {provider} does not take users' own credentials (its admins set \
                 `{USER_CREDENTIALS_SETTING}`)"
            )));
        }
        let binding = CredentialBinding::of(&providertype, &settings);
        Ok((providertype, binding))
    }

    /// What `source` has set for `provider` (names only), and whether the tenant may
    /// build on the provider's type.
    async fn credentials_view(
        &self,
        caller: &Caller,
        provider: &str,
        providertype: &str,
        source: &CredentialsSource,
    ) -> Result<ProviderCredentialsView, ServiceError> {
        let tenant_id = caller.tenant_id();
        let stored = self
            .store
            .stored_credentials(tenant_id, provider, source)
            .await?;
        let usable = self.store.tenant(tenant_id).await?.may_use(providertype);
        Ok(ProviderCredentialsView {
            provider: provider.to_owned(),
            providertype: providertype.to_owned(),
            usable,
            set: stored.is_some(),
            fields: match &stored {
                Some(stored) => stored.field_names()?,
                None => Vec::new(),
            },
            updated_by: stored.as_ref().and_then(|stored| stored.updated_by.clone()),
            updated_at_ms: stored.map(|stored| stored.updated_at_ms),
        })
    }

    /// The caller's tenant's catalog and the provider type of its provider `provider`,
    /// for an admin of that tenant.
    async fn administered_provider(
        &self,
        caller: &Caller,
        provider: &str,
    ) -> Result<(Catalog, String), ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        let catalog = crate::catalog::load(&self.store, caller.tenant_id()).await?;
        let providertype = providertype_of(&catalog, provider)?.to_owned();
        Ok((catalog, providertype))
    }

    /// Checks `provider` as the caller's tenant would use it: its credentials and
    /// endpoint, then (with `create`) one machine made, reached over SSH where the
    /// provider connects to its machines, and deleted. Each phase is timed; a failed
    /// phase skips the ones that need it, but a made machine is always deleted.
    pub async fn test_provider(
        &self,
        caller: &Caller,
        provider: &str,
        request: &ProviderTestRequest,
    ) -> Result<ProviderTestReport, ServiceError> {
        let tenant_id = caller.tenant_id();
        let (catalog, providertype) = self.administered_provider(caller, provider).await?;
        crate::operations::check_provider_allowed(&self.store, tenant_id, &catalog, provider)
            .await?;
        refuse_outside_dedicated_workers(&self.store.tenant(tenant_id).await?)?;
        let machine = if request.create {
            Some(test_machine(&catalog, provider, request)?)
        } else {
            None
        };
        let executor = self.executor.as_ref().ok_or_else(|| {
            ServiceError::Conflict(
                "this server runs no workers, so it has no providers to test".to_owned(),
            )
        })?;
        let mut phases = Vec::new();
        match executor.providers().require(&providertype) {
            Err(error) => phases.push(failed("check", error.to_string(), Duration::ZERO)),
            Ok(plugin) => {
                let settings = provider_settings(&catalog, provider);
                let started = Instant::now();
                let checked = plugin.check(tenant_id, &settings).await;
                let passed = checked.is_ok();
                phases.push(phase("check", checked.map_err(|e| e.to_string()), started));
                if let Some((hardware, image)) = machine {
                    let cluster_id = test_cluster_id();
                    let base = NodeSpec {
                        tenant_id: Some(tenant_id.to_owned()),
                        cluster_id: Some(cluster_id.clone()),
                        ..NodeSpec::new(format!("{cluster_id}-1"))
                    };
                    let spec = node_spec(&catalog, provider, base, &hardware, &image);
                    if passed {
                        self.test_machine_phases(plugin.as_ref(), &spec, &mut phases)
                            .await;
                    } else {
                        for name in ["create", "ssh", "delete"] {
                            phases.push(skipped(name, "the check failed"));
                        }
                    }
                }
            }
        }
        // What a plugin or a cloud said may quote the credentials it got: blotted out
        // here too (in every escaped form) before the report is shown or audited.
        if let Some(credentials) = self.store.provider_credentials(tenant_id, provider).await? {
            let scrubber = credentials.scrubber();
            for phase in &mut phases {
                phase.detail = scrubber.scrub(&phase.detail);
            }
        }
        let report = ProviderTestReport {
            provider: provider.to_owned(),
            providertype,
            passed: phases
                .iter()
                .all(|phase| phase.outcome != PhaseOutcome::Failed),
            phases,
        };
        let mut record = AuditRecord::new(tenant_id, "provider.test", "provider", provider);
        record.after = serde_json::to_string(&report).ok();
        self.audit(caller, record).await;
        Ok(report)
    }

    /// Makes, reaches and deletes one machine, adding a phase for each.
    async fn test_machine_phases(
        &self,
        plugin: &dyn NodeProvider,
        spec: &NodeSpec,
        phases: &mut Vec<ProviderTestPhase>,
    ) {
        let started = Instant::now();
        let record = match plugin.create(spec).await {
            Ok(record) => {
                let detail = format!(
                    "made node {} (SSH at {}:{}, address {})",
                    record.id,
                    record.host,
                    record.port,
                    record.address()
                );
                phases.push(phase("create", Ok(detail), started));
                record
            }
            Err(error) => {
                phases.push(phase("create", Err(error.to_string()), started));
                phases.push(skipped("ssh", "no machine was made"));
                phases.push(skipped("delete", "no machine was made"));
                return;
            }
        };
        let started = Instant::now();
        if plugin.connects(&record) {
            let ssh = self
                .executor
                .as_ref()
                .map(|executor| executor.ssh().clone());
            let reached = match &ssh {
                Some(pool) => plugin
                    .confirm(&record, pool, TEST_CONFIRM_TIMEOUT)
                    .await
                    .map(|()| {
                        format!(
                            "{}@{}:{} accepted Corral's key and presented the pinned host key",
                            record.user, record.host, record.port
                        )
                    })
                    .map_err(|error| error.to_string()),
                None => Err("no SSH sessions on this server".to_owned()),
            };
            if let Some(pool) = &ssh {
                pool.close(&record.id).await;
            }
            phases.push(phase("ssh", reached, started));
        } else {
            phases.push(skipped(
                "ssh",
                "the provider's settings say Corral does not connect to its machines",
            ));
        }
        let started = Instant::now();
        let deleted = plugin
            .delete(&record)
            .await
            .map(|()| format!("node {} deleted", record.id))
            .map_err(|error| error.to_string());
        phases.push(phase("delete", deleted, started));
    }
}

/// Refuses a provider test for a tenant served by dedicated workers only: the test
/// runs in this process (the plugin, the tenant's credentials, a machine made and
/// reached over SSH), which is the shared server the tenant asked to be kept out of.
fn refuse_outside_dedicated_workers(
    tenant: &crate::store::tenants::Tenant,
) -> Result<(), ServiceError> {
    if tenant.dedicated_workers {
        return Err(ServiceError::Conflict(format!(
            "tenant {} is served by dedicated workers only, and a provider test would run \
             its provider (with the tenant's credentials) in the shared server process; \
             create a small cluster instead (its tasks run on the tenant's own workers), \
             or ask a superadmin to serve the tenant with shared workers while testing",
            tenant.name
        )));
    }
    Ok(())
}

/// The audit action of `what` (`set`, `delete`) done to `source`'s credentials.
fn audit_action(what: &str, source: &CredentialsSource) -> String {
    match source {
        CredentialsSource::Tenant => format!("provider.credentials.{what}"),
        CredentialsSource::User(_) => format!("provider.credentials.{what}-mine"),
    }
}

/// The provider type of `provider` in `catalog`, or not found.
fn providertype_of<'a>(catalog: &'a Catalog, provider: &str) -> Result<&'a str, ServiceError> {
    catalog
        .provider(provider)
        .map(|found| found.providertype.as_str())
        .ok_or_else(|| ServiceError::NotFound(format!("provider {provider:?}")))
}

/// The hardware and image types of a check's machine: as asked, or the first of the
/// catalog mapped to `provider`.
fn test_machine(
    catalog: &Catalog,
    provider: &str,
    request: &ProviderTestRequest,
) -> Result<(HardwareTypeName, ImageTypeName), ServiceError> {
    let refuse = |path: &str, message: String| ServiceError::Invalid {
        message: message.clone(),
        details: vec![Problem {
            path: path.to_owned(),
            message,
        }],
    };
    let hardware = match &request.hardwaretype {
        Some(name) => catalog
            .hardwaretype(name)
            .filter(|hardware| hardware.providermap.contains_key(provider))
            .map(|hardware| hardware.name.clone())
            .ok_or_else(|| {
                refuse(
                    "hardwaretype",
                    format!("hardware type {name:?} does not exist or is not mapped to provider {provider:?}"),
                )
            })?,
        None => catalog
            .hardwaretypes
            .values()
            .find(|hardware| hardware.providermap.contains_key(provider))
            .map(|hardware| hardware.name.clone())
            .ok_or_else(|| {
                refuse(
                    "hardwaretype",
                    format!("no hardware type is mapped to provider {provider:?}"),
                )
            })?,
    };
    let image = match &request.imagetype {
        Some(name) => catalog
            .imagetype(name)
            .filter(|image| image.providermap.contains_key(provider))
            .map(|image| image.name.clone())
            .ok_or_else(|| {
                refuse(
                    "imagetype",
                    format!("image type {name:?} does not exist or is not mapped to provider {provider:?}"),
                )
            })?,
        None => catalog
            .imagetypes
            .values()
            .find(|image| image.providermap.contains_key(provider))
            .map(|image| image.name.clone())
            .ok_or_else(|| {
                refuse(
                    "imagetype",
                    format!("no image type is mapped to provider {provider:?}"),
                )
            })?,
    };
    Ok((hardware, image))
}

/// A cluster id of its own for each check, so its machine shares nothing (network,
/// key pair, security group) with a real cluster and is cleaned up with it.
fn test_cluster_id() -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("ptest{}", &id[..12])
}

fn phase(name: &str, result: Result<String, String>, started: Instant) -> ProviderTestPhase {
    let elapsed = started.elapsed();
    match result {
        Ok(detail) => ProviderTestPhase {
            phase: name.to_owned(),
            outcome: PhaseOutcome::Passed,
            detail,
            elapsed_ms: millis(elapsed),
        },
        Err(detail) => failed(name, detail, elapsed),
    }
}

fn failed(name: &str, detail: String, elapsed: Duration) -> ProviderTestPhase {
    ProviderTestPhase {
        phase: name.to_owned(),
        outcome: PhaseOutcome::Failed,
        detail,
        elapsed_ms: millis(elapsed),
    }
}

fn skipped(name: &str, why: &str) -> ProviderTestPhase {
    ProviderTestPhase {
        phase: name.to_owned(),
        outcome: PhaseOutcome::Skipped,
        detail: why.to_owned(),
        elapsed_ms: 0,
    }
}

fn millis(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
}
