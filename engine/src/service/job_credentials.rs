//! Whose credentials a job's new machines are made with, said before anything runs.
//!
//! A job's machines are made with the credentials of the user who asked for that job:
//! their own, where the provider takes users' own (`user_credentials`) and they set
//! some for the provider as it is defined now; the tenant's otherwise. Never the
//! cluster owner's for another user's request: a second user growing someone's cluster
//! grows it on the tenant's account (or is refused), not on the owner's. The plan (dry
//! run) says which, and refuses, as the submit does, a request whose own credentials
//! were set for another definition of the provider (an admin has since pointed it
//! elsewhere): they are not used until the user enters them again.

use domain::catalog::coopr::import_bundle;
use domain::catalog::Catalog;
use domain::plan::{Action, TaskDag};

use super::{Caller, Service, ServiceError};
use crate::execute::provider_settings;
use crate::operations::{ClusterChange, CreateRequest};
use crate::provider::{EC2_PROVIDER, EXEC_PROVIDER};
use crate::store::clusters::Cluster;
use crate::store::provider_credentials::CredentialsChoice;

/// Provider types that make machines with credentials from the store.
const CREDENTIAL_TYPES: &[&str] = &[EC2_PROVIDER, EXEC_PROVIDER];

/// What the plan says about `choice` for `provider`, or the refusal.
fn statement(provider: &str, choice: CredentialsChoice) -> Result<String, ServiceError> {
    match choice {
        CredentialsChoice::User(_) => Ok(format!(
            "new machines are made with your own credentials for provider {provider}"
        )),
        CredentialsChoice::Tenant => Ok(format!(
            "new machines are made with the tenant's credentials for provider {provider} \
             (nobody else's own: a user's own pay only for what that user asks for)"
        )),
        CredentialsChoice::Nothing => Ok(format!(
            "provider {provider} has no credentials for this request: neither yours nor \
             the tenant's are set"
        )),
        CredentialsChoice::Rebound(_) => Err(ServiceError::Conflict(format!(
            "provider {provider} has changed (its type, endpoint, plugin or region) since you \
             set your own credentials for it, so they are not used: enter them again for the \
             provider as it is now (`corral provider credentials set {provider} --mine \
             --stdin`, or the provider's page)"
        ))),
    }
}

/// Whether `dag` makes machines (a create task).
pub(super) fn makes_machines(dag: &TaskDag) -> bool {
    dag.tasks().iter().any(|task| task.action == Action::Create)
}

impl Service {
    /// What a plan says about credentials: whose make its machines, when it makes any.
    pub(super) async fn plan_credentials(
        &self,
        caller: &Caller,
        catalog: &Catalog,
        provider: &str,
        dag: &TaskDag,
    ) -> Result<Option<String>, ServiceError> {
        if !makes_machines(dag) {
            return Ok(None);
        }
        self.job_credentials(caller, catalog, provider).await
    }

    /// Refuses, before a create is stored, one whose machines the caller's rebound own
    /// credentials would make (see [`Service::job_credentials`]).
    pub(super) async fn check_create_credentials(
        &self,
        caller: &Caller,
        request: &CreateRequest,
    ) -> Result<(), ServiceError> {
        let catalog = crate::catalog::load(&self.store, &request.tenant_id).await?;
        // A template that does not resolve is refused by the create itself.
        let default = catalog
            .resolved_template(&request.template)
            .ok()
            .and_then(|template| template.defaults.provider);
        let Some(provider) = request.solve.provider.clone().or(default) else {
            return Ok(());
        };
        self.job_credentials(caller, &catalog, provider.as_str())
            .await
            .map(drop)
    }

    /// Refuses, before a change is stored, one that may make machines with the
    /// caller's rebound own credentials (see [`Service::job_credentials`]).
    pub(super) async fn check_change_credentials(
        &self,
        caller: &Caller,
        cluster: &Cluster,
        change: &ClusterChange,
    ) -> Result<(), ServiceError> {
        let may_make_machines = matches!(
            change,
            ClusterChange::AddNodes { .. }
                | ClusterChange::AddServices { .. }
                | ClusterChange::Rollback { .. }
        );
        if !may_make_machines {
            return Ok(());
        }
        // An unreadable snapshot is refused by the change itself.
        let Ok(snapshot) = import_bundle(&cluster.catalog_json) else {
            return Ok(());
        };
        self.job_credentials(caller, &snapshot, &cluster.provider)
            .await
            .map(drop)
    }

    /// Refuses `caller`'s retry of another user's job that may make machines with
    /// that user's own credentials: a retry runs the job as it was asked, so only its
    /// requester may spend theirs on it (anyone else submits a change of their own).
    pub(super) async fn check_retry_credentials(
        &self,
        caller: &Caller,
        job: &crate::queue::Job,
    ) -> Result<(), ServiceError> {
        use api_types::Operation;
        let making = matches!(
            job.operation,
            Operation::Create | Operation::AddNodes | Operation::AddServices | Operation::Rollback
        );
        if !making {
            return Ok(());
        }
        let requester = self.queue.job_requested_by(&job.id).await?;
        let Some(requester) = requester.filter(|user| *user != caller.principal.user_id) else {
            return Ok(());
        };
        let cluster = self.store.cluster(&job.cluster_id).await?;
        let Ok(snapshot) = import_bundle(&cluster.catalog_json) else {
            return Ok(());
        };
        let Some(providertype) = snapshot
            .provider(&cluster.provider)
            .map(|found| found.providertype.clone())
            .filter(|providertype| CREDENTIAL_TYPES.contains(&providertype.as_str()))
        else {
            return Ok(());
        };
        let settings = provider_settings(&snapshot, &cluster.provider);
        let choice = self
            .store
            .credentials_choice(
                &job.tenant_id,
                &cluster.provider,
                &crate::provider::binding::of(&providertype, &settings),
                Some(&requester),
                settings.allows_user_credentials(),
            )
            .await?;
        if matches!(choice, CredentialsChoice::User(_)) {
            return Err(ServiceError::Forbidden(format!(
                "job {} makes machines with the own credentials of the user who asked for                  it, so only they may retry it; submit the change yourself to make them with                  yours or the tenant's",
                job.id
            )));
        }
        Ok(())
    }

    /// Whose credentials new machines of a job `caller` asks for on `provider` of
    /// `catalog` (the cluster's snapshot, or the tenant's catalog for a create) are
    /// made with, as the plan says it; `None` for a provider type that takes none.
    /// Refused when the caller's own were set for another definition of the provider.
    pub(super) async fn job_credentials(
        &self,
        caller: &Caller,
        catalog: &Catalog,
        provider: &str,
    ) -> Result<Option<String>, ServiceError> {
        let Some(providertype) = catalog
            .provider(provider)
            .map(|found| found.providertype.as_str())
            .filter(|providertype| CREDENTIAL_TYPES.contains(providertype))
        else {
            return Ok(None);
        };
        let settings = provider_settings(catalog, provider);
        let choice = self
            .store
            .credentials_choice(
                caller.tenant_id(),
                provider,
                &crate::provider::binding::of(providertype, &settings),
                Some(&caller.principal.user_id),
                settings.allows_user_credentials(),
            )
            .await?;
        statement(provider, choice).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_names_whose_credentials_pay_and_refuses_rebound_ones() {
        let cases = [
            (
                CredentialsChoice::User("u".into()),
                Some("your own credentials"),
            ),
            (CredentialsChoice::Tenant, Some("the tenant's credentials")),
            (CredentialsChoice::Nothing, Some("has no credentials")),
            (CredentialsChoice::Rebound("u".into()), None),
        ];
        for (choice, says) in cases {
            match (statement("aws1", choice.clone()), says) {
                (Ok(text), Some(says)) => assert!(text.contains(says), "{choice:?}: {text}"),
                (Err(ServiceError::Conflict(text)), None) => {
                    assert!(text.contains("enter them again"), "{text}");
                }
                (other, _) => panic!("{choice:?}: {other:?}"),
            }
        }
    }
}
