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
//! what it made, also when an earlier phase failed. It runs on a worker pool that
//! serves the tenant, as the tenant's tasks do (`crate::worker::provider_tests`); this
//! module stores the request and waits for the report.

use std::time::Duration;

use api_types::{ProviderCredentialsView, ProviderTestReport, ProviderTestRequest};
use domain::catalog::Catalog;
use domain::names::{HardwareTypeName, ImageTypeName};

use super::{AuditRecord, Caller, Problem, Service, ServiceError};
use crate::execute::provider_settings;
use crate::provider::{CredentialBinding, Credentials, USER_CREDENTIALS_SETTING};
use crate::store::now_ms;
use crate::store::provider_credentials::CredentialsSource;
use crate::store::provider_tests::{NewProviderTest, ProviderTestRow, ProviderTestState};

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
        let binding =
            crate::provider::binding::of(&providertype, &provider_settings(&catalog, provider));
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
        let binding = crate::provider::binding::of(&providertype, &settings);
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
    /// provider connects to its machines, and deleted.
    ///
    /// The check runs where the tenant's tasks run, never in this process for its own
    /// sake: the request is stored, a worker pool serving the tenant (a shared one, or
    /// the tenant's dedicated `corral worker --tenant`) runs it (see
    /// `crate::worker::provider_tests`), and this waits for its report within
    /// [`ProviderTestWaits`]. When no pool takes it in time it is marked so none ever
    /// runs it, and the answer says which worker to start.
    pub async fn test_provider(
        &self,
        caller: &Caller,
        provider: &str,
        request: &ProviderTestRequest,
    ) -> Result<ProviderTestReport, ServiceError> {
        let tenant_id = caller.tenant_id();
        let (catalog, _) = self.administered_provider(caller, provider).await?;
        crate::operations::check_provider_allowed(&self.store, tenant_id, &catalog, provider)
            .await?;
        // Resolved here, so bad input is refused before anything is stored.
        let resolved = if request.create {
            let (hardware, image) = test_machine(&catalog, provider, request)?;
            ProviderTestRequest {
                create: true,
                hardwaretype: Some(hardware.to_string()),
                imagetype: Some(image.to_string()),
            }
        } else {
            ProviderTestRequest::default()
        };
        let waits = self.provider_test_waits;
        let id = uuid::Uuid::new_v4().to_string();
        let asked_at = now_ms();
        let request_json = serde_json::to_string(&resolved).map_err(ServiceError::internal)?;
        self.store
            .queue_provider_test(&NewProviderTest {
                id: &id,
                tenant_id,
                provider,
                request_json: &request_json,
                created_at_ms: asked_at,
                claim_by_ms: asked_at + duration_ms(waits.claim),
            })
            .await?;
        // The pool in this process (if it serves the tenant) takes it at once.
        self.wake_workers();
        // Waited for (and audited) by a task of its own, which goes on when the caller
        // hangs up: an unclaimed request is still abandoned, and a test that ran is
        // still audited.
        let service = self.clone();
        let (caller, provider) = (caller.clone(), provider.to_owned());
        tokio::spawn(async move {
            service
                .audited_report(&caller, &provider, &id, resolved.create)
                .await
        })
        .await
        .map_err(ServiceError::internal)?
    }

    /// The report of the stored request `id` once a pool ran it, with its audit entry.
    async fn audited_report(
        &self,
        caller: &Caller,
        provider: &str,
        id: &str,
        create: bool,
    ) -> Result<ProviderTestReport, ServiceError> {
        let row = self.provider_test_report(id, create).await?;
        let worker = row.claimed_by.clone().unwrap_or_default();
        let report: ProviderTestReport = row
            .report_json
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(ServiceError::internal)?
            .ok_or_else(|| ServiceError::internal("a finished provider test has no report"))?;
        let tenant_id = caller.tenant_id();
        let mut record = AuditRecord::new(tenant_id, "provider.test", "provider", provider);
        record.after = serde_json::to_value(&report).ok().map(|mut after| {
            // Which pool ran it: the tenant's own, for a tenant with dedicated workers.
            after["worker"] = serde_json::Value::String(worker);
            after.to_string()
        });
        self.audit(caller, record).await;
        Ok(report)
    }

    /// Waits for the report of the stored request `id`: first for a pool to claim it
    /// (or marks it abandoned and says no worker serves the tenant), then for the pool
    /// to finish it.
    async fn provider_test_report(
        &self,
        id: &str,
        create: bool,
    ) -> Result<ProviderTestRow, ServiceError> {
        let waits = self.provider_test_waits;
        let claim_until = tokio::time::Instant::now() + waits.claim;
        let mut finish_until = None;
        loop {
            let row = self.store.provider_test(id).await?;
            match row.state {
                ProviderTestState::Done => return Ok(row),
                ProviderTestState::Abandoned => {
                    return Err(ServiceError::internal(format!(
                        "provider test {id} was abandoned while it was waited for"
                    )))
                }
                ProviderTestState::Running => {
                    let until = *finish_until.get_or_insert_with(|| {
                        tokio::time::Instant::now() + waits.run_bound(create)
                    });
                    if tokio::time::Instant::now() >= until {
                        return Err(ServiceError::Conflict(no_report_message(
                            row.claimed_by.as_deref().unwrap_or("?"),
                            waits.run_bound(create),
                        )));
                    }
                }
                ProviderTestState::Queued => {
                    if tokio::time::Instant::now() >= claim_until
                        && self.store.abandon_provider_test(id, now_ms()).await?
                    {
                        let tenant = self.store.tenant(&row.tenant_id).await?;
                        return Err(ServiceError::Conflict(no_worker_message(
                            &tenant.name,
                            tenant.dedicated_workers,
                            waits.claim,
                        )));
                    }
                    // Not abandoned: a pool claimed it meanwhile; the next look sees it.
                }
            }
            tokio::time::sleep(PROVIDER_TEST_POLL).await;
        }
    }
}

/// How long a provider test waits for a pool to take it, and then for its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderTestWaits {
    /// For a pool serving the tenant to claim the request (pools look every half
    /// second, and the one in this process at once).
    pub claim: Duration,
    /// For the report of a check that makes no machine, once claimed.
    pub check: Duration,
    /// For the report of a check that makes, reaches and deletes a machine.
    pub create: Duration,
}

impl Default for ProviderTestWaits {
    fn default() -> Self {
        Self {
            claim: Duration::from_secs(30),
            check: Duration::from_secs(60),
            create: Duration::from_secs(300),
        }
    }
}

impl ProviderTestWaits {
    /// How long a claimed check may run before its report is given up on.
    fn run_bound(self, create: bool) -> Duration {
        if create {
            self.create
        } else {
            self.check
        }
    }
}

/// How often a waiting provider test looks at its request.
const PROVIDER_TEST_POLL: Duration = Duration::from_millis(200);

/// Why a provider test of tenant `tenant` was not run: no pool serving it took the
/// request within `waited`. Says which worker serves the tenant, and how to start one.
fn no_worker_message(tenant: &str, dedicated: bool, waited: Duration) -> String {
    let secs = waited.as_secs();
    if dedicated {
        format!(
            "no worker serving tenant {tenant} took the provider test within {secs} s, so it              was not run: tenant {tenant} is served by dedicated workers only, and the test              runs where its tasks run; start one with `corral worker --tenant {tenant}` (or,              if one runs, it is busy with other provider tests: try again)"
        )
    } else {
        format!(
            "no worker serving tenant {tenant} took the provider test within {secs} s, so it              was not run: the tenant's tasks and tests run on the shared workers of `corral              serve` or `corral worker` (without --tenant), or on a `corral worker --tenant              {tenant}`; start one (or, if one runs, it is busy with other provider tests: try              again)"
        )
    }
}

/// Why a claimed provider test has no answer: `worker` took it and gave no report
/// within `waited`.
fn no_report_message(worker: &str, waited: Duration) -> String {
    format!(
        "worker {worker} took the provider test but gave no report within {} s (it may have          stopped, or the provider is slow); its log says more, and a machine the test made is          deleted when the test ends",
        waited.as_secs()
    )
}

fn duration_ms(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX / 2)
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
