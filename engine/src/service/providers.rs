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

use std::borrow::Borrow;
use std::time::Duration;

use api_types::{AuditAction, ProviderCredentialsView, ProviderTestReport, ProviderTestRequest};
use domain::catalog::{Catalog, ProviderMapped};
use domain::names::{HardwareTypeName, ImageTypeName};

use super::{AuditRecord, Caller, Problem, Service, ServiceError};
use crate::execute::provider_settings;
use crate::provider::{CredentialBinding, Credentials, USER_CREDENTIALS_SETTING};
use crate::store::now_ms;
use crate::store::provider_credentials::CredentialsSource;
use crate::store::provider_tests::{NewProviderTest, ProviderTestRow, ProviderTestState};

impl Service {
    /// What `owner` has set for `provider`'s credentials (names only): the caller's
    /// tenant's (for its admins) or the caller's own (where the provider takes them).
    pub async fn provider_credentials(
        &self,
        caller: &Caller,
        provider: &str,
        owner: CredentialsOwner,
    ) -> Result<ProviderCredentialsView, ServiceError> {
        let target = self.credentials_target(caller, provider, owner).await?;
        self.credentials_view(caller, provider, &target).await
    }

    /// Sets `owner`'s credentials for `provider` from `json` (a JSON object of strings).
    /// The values are sealed before they are stored and never shown again, and bound
    /// to the provider as it is defined now (see [`CredentialBinding`]); the audit log
    /// records who set which field names.
    pub async fn set_provider_credentials(
        &self,
        caller: &Caller,
        provider: &str,
        owner: CredentialsOwner,
        json: &str,
    ) -> Result<ProviderCredentialsView, ServiceError> {
        let target = self.credentials_target(caller, provider, owner).await?;
        let credentials =
            Credentials::from_json_text(json).map_err(|error| ServiceError::Invalid {
                message: format!("the credentials of provider {provider:?} are refused: {error}"),
                details: vec![Problem {
                    path: "credentials".to_owned(),
                    message: error.to_string(),
                }],
            })?;
        let tenant_id = caller.tenant_id();
        let source = &target.source;
        self.store
            .set_credentials(
                tenant_id,
                provider,
                source,
                &target.binding,
                &credentials,
                Some(&caller.principal.username),
                now_ms(),
            )
            .await?;
        let action = audit_action(
            source,
            AuditAction::ProviderCredentialsSet,
            AuditAction::ProviderCredentialsSetMine,
        );
        let mut record = AuditRecord::new(tenant_id, action, "provider", provider);
        record.after = Some(serde_json::json!({ "fields": credentials.field_names() }).to_string());
        self.audit(caller, record).await;
        self.credentials_view(caller, provider, &target).await
    }

    /// Removes `owner`'s credentials for `provider`; without their own, nodes the
    /// caller's jobs make use the tenant's again.
    pub async fn delete_provider_credentials(
        &self,
        caller: &Caller,
        provider: &str,
        owner: CredentialsOwner,
    ) -> Result<ProviderCredentialsView, ServiceError> {
        let target = self.credentials_target(caller, provider, owner).await?;
        let tenant_id = caller.tenant_id();
        let source = &target.source;
        if !self
            .store
            .delete_credentials(tenant_id, provider, source)
            .await?
        {
            return Err(ServiceError::NotFound(match source {
                CredentialsSource::Tenant => format!("credentials of provider {provider:?}"),
                CredentialsSource::User(_) => format!("your credentials of provider {provider:?}"),
            }));
        }
        let action = audit_action(
            source,
            AuditAction::ProviderCredentialsDelete,
            AuditAction::ProviderCredentialsDeleteMine,
        );
        self.audit(
            caller,
            AuditRecord::new(tenant_id, action, "provider", provider),
        )
        .await;
        self.credentials_view(caller, provider, &target).await
    }

    /// Where `owner`'s credentials for `provider` are kept, and the provider's type and
    /// binding as defined now, once the caller was found allowed to reach them: the
    /// tenant's only by its admins, one's own only where the provider takes them.
    async fn credentials_target(
        &self,
        caller: &Caller,
        provider: &str,
        owner: CredentialsOwner,
    ) -> Result<CredentialsTarget, ServiceError> {
        let (providertype, binding, source) = match owner {
            CredentialsOwner::Tenant => {
                let (catalog, providertype) = self.administered_provider(caller, provider).await?;
                let settings = provider_settings(&catalog, provider);
                let binding = crate::provider::binding::of(&providertype, &settings);
                (providertype, binding, CredentialsSource::Tenant)
            }
            CredentialsOwner::Caller => {
                let (providertype, binding) =
                    self.user_credentials_provider(caller, provider).await?;
                let user = caller.principal.user_id.clone();
                (providertype, binding, CredentialsSource::User(user))
            }
        };
        Ok(CredentialsTarget {
            providertype,
            binding,
            source,
        })
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

    /// What `target` has set for `provider` (names only), and whether the tenant may
    /// build on the provider's type.
    async fn credentials_view(
        &self,
        caller: &Caller,
        provider: &str,
        target: &CredentialsTarget,
    ) -> Result<ProviderCredentialsView, ServiceError> {
        let tenant_id = caller.tenant_id();
        let stored = self
            .store
            .stored_credentials(tenant_id, provider, &target.source)
            .await?;
        let providertype = &target.providertype;
        let usable = self.store.tenant(tenant_id).await?.may_use(providertype);
        Ok(ProviderCredentialsView {
            provider: provider.to_owned(),
            providertype: providertype.clone(),
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
        let mut record =
            AuditRecord::new(tenant_id, AuditAction::ProviderTest, "provider", provider);
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

/// Whose credentials for which provider of what type an operation is about, once the
/// caller was found allowed to reach them.
struct CredentialsTarget {
    providertype: String,
    /// The provider as defined now (what set credentials are bound to).
    binding: CredentialBinding,
    source: CredentialsSource,
}

/// Whose credentials for a provider an operation is about (the two are kept apart: see
/// [`CredentialsSource`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialsOwner {
    /// The caller's tenant's, which only its admins see and change.
    Tenant,
    /// The caller's own, where the provider takes users' own credentials.
    Caller,
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

/// The audit action of a change to `source`'s credentials: `tenant` for the tenant's,
/// `mine` for a user's own.
fn audit_action(source: &CredentialsSource, tenant: AuditAction, mine: AuditAction) -> AuditAction {
    match source {
        CredentialsSource::Tenant => tenant,
        CredentialsSource::User(_) => mine,
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
    let hardware = machine_entry(
        ("hardwaretype", "hardware type"),
        request.hardwaretype.as_deref(),
        catalog.hardwaretypes.values(),
        provider,
    )?;
    let image = machine_entry(
        ("imagetype", "image type"),
        request.imagetype.as_deref(),
        catalog.imagetypes.values(),
        provider,
    )?;
    Ok((hardware, image))
}

/// The name of the catalog entry of one kind (a hardware or an image type, `field` in
/// the request and `kind` in messages) a check's machine uses: `asked`, if it is
/// mapped to `provider`, or else the first of `entries` that is.
fn machine_entry<'a, Name>(
    (field, kind): (&str, &str),
    asked: Option<&str>,
    mut entries: impl Iterator<Item = &'a ProviderMapped<Name>>,
    provider: &str,
) -> Result<Name, ServiceError>
where
    Name: Borrow<str> + Clone + 'a,
{
    let mapped = |entry: &&ProviderMapped<Name>| entry.providermap.contains_key(provider);
    let found = match asked {
        Some(name) => entries.find(|entry| entry.name.borrow() == name),
        None => entries.find(mapped),
    };
    found
        .filter(mapped)
        .map(|entry| entry.name.clone())
        .ok_or_else(|| {
            let message = match asked {
                Some(name) => format!(
                    "{kind} {name:?} does not exist or is not mapped to provider {provider:?}"
                ),
                None => format!("no {kind} is mapped to provider {provider:?}"),
            };
            ServiceError::Invalid {
                message: message.clone(),
                details: vec![Problem {
                    path: field.to_owned(),
                    message,
                }],
            }
        })
}
