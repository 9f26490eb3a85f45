//! What an audit log entry records was done, as one enum: the engine writes entries
//! under these names and the pages compare with them, so the dotted names
//! (`cluster.create`, `node.terminal.end`) are spelled here once.
//!
//! The log is history: rows written by older versions keep names no version writes now
//! (`tenant.local-nodes`), so an entry's view ([`crate::AuditView`]) keeps the stored
//! name as text, and [`crate::AuditView::known_action`] parses it for comparisons.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::operation::Operation;

/// The enum, its `ALL`, `as_str` and `FromStr` from one list of `Variant => "name"`
/// (serde uses the same names). Not a `word_enum`: the names have dots.
macro_rules! audit_actions {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum $name { $($(#[$vmeta])* #[serde(rename = $text)] $variant),* }

        $crate::states::named_values!($name, "audit action" { $($variant => $text),* });
    };
}

audit_actions!(
    /// What an audit entry records was done. Grouped by what it was done to (the
    /// name's first part); the filter of the audit log matches names by prefix.
    AuditAction {
        ApprovalRuleAdd => "approval-rule.add",
        ApprovalRuleRemove => "approval-rule.remove",
        ApprovalApprove => "approval.approve",
        ApprovalDeny => "approval.deny",
        /// An operation held until an approver decides.
        ApprovalRequest => "approval.request",

        /// The demo catalog loaded into a new tenant.
        CatalogDemo => "catalog.demo",
        CatalogImport => "catalog.import",
        CatalogRollout => "catalog.rollout",
        CatalogProvidersCreate => "catalog.providers.create",
        CatalogProvidersUpdate => "catalog.providers.update",
        CatalogProvidersDelete => "catalog.providers.delete",
        CatalogHardwaretypesCreate => "catalog.hardwaretypes.create",
        CatalogHardwaretypesUpdate => "catalog.hardwaretypes.update",
        CatalogHardwaretypesDelete => "catalog.hardwaretypes.delete",
        CatalogImagetypesCreate => "catalog.imagetypes.create",
        CatalogImagetypesUpdate => "catalog.imagetypes.update",
        CatalogImagetypesDelete => "catalog.imagetypes.delete",
        CatalogServicesCreate => "catalog.services.create",
        CatalogServicesUpdate => "catalog.services.update",
        CatalogServicesDelete => "catalog.services.delete",
        CatalogClustertemplatesCreate => "catalog.clustertemplates.create",
        CatalogClustertemplatesUpdate => "catalog.clustertemplates.update",
        CatalogClustertemplatesDelete => "catalog.clustertemplates.delete",
        CatalogPartialtemplatesCreate => "catalog.partialtemplates.create",
        CatalogPartialtemplatesUpdate => "catalog.partialtemplates.update",
        CatalogPartialtemplatesDelete => "catalog.partialtemplates.delete",

        // A cluster's operations, one per `Operation` (see `AuditAction::cluster`).
        ClusterCreate => "cluster.create",
        ClusterDelete => "cluster.delete",
        /// A delete that passes over failed stop and remove steps.
        ClusterForceDelete => "cluster.force-delete",
        ClusterAddServices => "cluster.add-services",
        ClusterRemoveServices => "cluster.remove-services",
        ClusterAddNodes => "cluster.add-nodes",
        ClusterRemoveNodes => "cluster.remove-nodes",
        ClusterReconfigure => "cluster.reconfigure",
        ClusterStart => "cluster.start",
        ClusterStop => "cluster.stop",
        ClusterRestart => "cluster.restart",
        ClusterRollback => "cluster.rollback",
        ClusterUpgrade => "cluster.upgrade",
        ClusterReplaceNodes => "cluster.replace-nodes",
        ClusterSyncKeys => "cluster.sync-keys",
        /// The healer replaced nodes.
        ClusterHeal => "cluster.heal",
        /// A user turned the cluster's healing on or off.
        ClusterHealing => "cluster.healing",
        /// A user extended the lease.
        ClusterLease => "cluster.lease",
        /// The janitor warned of the lease's end.
        ClusterLeaseWarning => "cluster.lease-warning",
        /// The janitor stopped the cluster's machines at the lease's end.
        ClusterLeaseStop => "cluster.lease-stop",
        /// The janitor deleted the cluster once the lease's grace was over.
        ClusterLeaseDelete => "cluster.lease-delete",
        ClusterPin => "cluster.pin",

        GroupAdd => "group.add",
        GroupRemove => "group.remove",
        GroupMemberAdd => "group.member-add",
        GroupMemberRemove => "group.member-remove",

        HookCreate => "hook.create",
        HookDelete => "hook.delete",
        HookRedeliver => "hook.redeliver",

        JobCancel => "job.cancel",
        JobRetry => "job.retry",

        /// An SSH session to a node through Corral began.
        NodeSsh => "node.ssh",
        NodeSshCertificate => "node.ssh-certificate",
        NodeSshEnd => "node.ssh.end",
        /// A browser terminal session on a node began.
        NodeTerminal => "node.terminal",
        /// A browser terminal session ended; its recording, if any, is kept with it.
        NodeTerminalEnd => "node.terminal.end",

        PoolHostCreate => "pool_host.create",
        PoolHostUpdate => "pool_host.update",
        PoolHostDelete => "pool_host.delete",

        ProviderCredentialsSet => "provider.credentials.set",
        ProviderCredentialsSetMine => "provider.credentials.set-mine",
        ProviderCredentialsDelete => "provider.credentials.delete",
        ProviderCredentialsDeleteMine => "provider.credentials.delete-mine",
        ProviderTest => "provider.test",

        ResourceUpload => "resource.upload",
        ResourceStage => "resource.stage",

        TenantCreate => "tenant.create",
        TenantDelete => "tenant.delete",
        TenantQuotas => "tenant.quotas",
        TenantBudget => "tenant.budget",
        TenantProviderTypes => "tenant.provider-types",
        TenantDedicatedWorkers => "tenant.dedicated-workers",
        TenantNodeShell => "tenant.node-shell",
        TenantTerminalRecording => "tenant.terminal-recording",
        TenantAdminKeys => "tenant.admin-keys",

        TokenCreate => "token.create",
        TokenRevoke => "token.revoke",

        UserCreate => "user.create",
        UserUpdate => "user.update",
        UserDelete => "user.delete",
        UserMove => "user.move",
        UserPassword => "user.password",
        UserLogoutEverywhere => "user.logout-everywhere",
        UserKeyAdd => "user.key-add",
        UserKeyRemove => "user.key-remove",
    }
);

impl AuditAction {
    /// A cluster's operation: `cluster.<operation>` (a forced delete is
    /// [`AuditAction::ClusterForceDelete`], which the operation alone does not say).
    pub fn cluster(operation: Operation) -> Self {
        match operation {
            Operation::Create => AuditAction::ClusterCreate,
            Operation::Delete => AuditAction::ClusterDelete,
            Operation::AddServices => AuditAction::ClusterAddServices,
            Operation::RemoveServices => AuditAction::ClusterRemoveServices,
            Operation::AddNodes => AuditAction::ClusterAddNodes,
            Operation::RemoveNodes => AuditAction::ClusterRemoveNodes,
            Operation::Reconfigure => AuditAction::ClusterReconfigure,
            Operation::Start => AuditAction::ClusterStart,
            Operation::Stop => AuditAction::ClusterStop,
            Operation::Restart => AuditAction::ClusterRestart,
            Operation::Rollback => AuditAction::ClusterRollback,
            Operation::Upgrade => AuditAction::ClusterUpgrade,
            Operation::ReplaceNodes => AuditAction::ClusterReplaceNodes,
            Operation::SyncKeys => AuditAction::ClusterSyncKeys,
        }
    }
}

impl fmt::Display for AuditAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// Every name as the audit log has stored it: a name changed here would split the
    /// log's history (and its prefix filters) in two.
    const NAMES: &[(AuditAction, &str)] = &[
        (AuditAction::ApprovalRuleAdd, "approval-rule.add"),
        (AuditAction::ApprovalRuleRemove, "approval-rule.remove"),
        (AuditAction::ApprovalApprove, "approval.approve"),
        (AuditAction::ApprovalDeny, "approval.deny"),
        (AuditAction::ApprovalRequest, "approval.request"),
        (AuditAction::CatalogDemo, "catalog.demo"),
        (AuditAction::CatalogImport, "catalog.import"),
        (AuditAction::CatalogRollout, "catalog.rollout"),
        (
            AuditAction::CatalogProvidersCreate,
            "catalog.providers.create",
        ),
        (
            AuditAction::CatalogProvidersUpdate,
            "catalog.providers.update",
        ),
        (
            AuditAction::CatalogProvidersDelete,
            "catalog.providers.delete",
        ),
        (
            AuditAction::CatalogHardwaretypesCreate,
            "catalog.hardwaretypes.create",
        ),
        (
            AuditAction::CatalogHardwaretypesUpdate,
            "catalog.hardwaretypes.update",
        ),
        (
            AuditAction::CatalogHardwaretypesDelete,
            "catalog.hardwaretypes.delete",
        ),
        (
            AuditAction::CatalogImagetypesCreate,
            "catalog.imagetypes.create",
        ),
        (
            AuditAction::CatalogImagetypesUpdate,
            "catalog.imagetypes.update",
        ),
        (
            AuditAction::CatalogImagetypesDelete,
            "catalog.imagetypes.delete",
        ),
        (
            AuditAction::CatalogServicesCreate,
            "catalog.services.create",
        ),
        (
            AuditAction::CatalogServicesUpdate,
            "catalog.services.update",
        ),
        (
            AuditAction::CatalogServicesDelete,
            "catalog.services.delete",
        ),
        (
            AuditAction::CatalogClustertemplatesCreate,
            "catalog.clustertemplates.create",
        ),
        (
            AuditAction::CatalogClustertemplatesUpdate,
            "catalog.clustertemplates.update",
        ),
        (
            AuditAction::CatalogClustertemplatesDelete,
            "catalog.clustertemplates.delete",
        ),
        (
            AuditAction::CatalogPartialtemplatesCreate,
            "catalog.partialtemplates.create",
        ),
        (
            AuditAction::CatalogPartialtemplatesUpdate,
            "catalog.partialtemplates.update",
        ),
        (
            AuditAction::CatalogPartialtemplatesDelete,
            "catalog.partialtemplates.delete",
        ),
        (AuditAction::ClusterCreate, "cluster.create"),
        (AuditAction::ClusterDelete, "cluster.delete"),
        (AuditAction::ClusterForceDelete, "cluster.force-delete"),
        (AuditAction::ClusterAddServices, "cluster.add-services"),
        (
            AuditAction::ClusterRemoveServices,
            "cluster.remove-services",
        ),
        (AuditAction::ClusterAddNodes, "cluster.add-nodes"),
        (AuditAction::ClusterRemoveNodes, "cluster.remove-nodes"),
        (AuditAction::ClusterReconfigure, "cluster.reconfigure"),
        (AuditAction::ClusterStart, "cluster.start"),
        (AuditAction::ClusterStop, "cluster.stop"),
        (AuditAction::ClusterRestart, "cluster.restart"),
        (AuditAction::ClusterRollback, "cluster.rollback"),
        (AuditAction::ClusterUpgrade, "cluster.upgrade"),
        (AuditAction::ClusterReplaceNodes, "cluster.replace-nodes"),
        (AuditAction::ClusterSyncKeys, "cluster.sync-keys"),
        (AuditAction::ClusterHeal, "cluster.heal"),
        (AuditAction::ClusterHealing, "cluster.healing"),
        (AuditAction::ClusterLease, "cluster.lease"),
        (AuditAction::ClusterLeaseWarning, "cluster.lease-warning"),
        (AuditAction::ClusterLeaseStop, "cluster.lease-stop"),
        (AuditAction::ClusterLeaseDelete, "cluster.lease-delete"),
        (AuditAction::ClusterPin, "cluster.pin"),
        (AuditAction::GroupAdd, "group.add"),
        (AuditAction::GroupRemove, "group.remove"),
        (AuditAction::GroupMemberAdd, "group.member-add"),
        (AuditAction::GroupMemberRemove, "group.member-remove"),
        (AuditAction::HookCreate, "hook.create"),
        (AuditAction::HookDelete, "hook.delete"),
        (AuditAction::HookRedeliver, "hook.redeliver"),
        (AuditAction::JobCancel, "job.cancel"),
        (AuditAction::JobRetry, "job.retry"),
        (AuditAction::NodeSsh, "node.ssh"),
        (AuditAction::NodeSshCertificate, "node.ssh-certificate"),
        (AuditAction::NodeSshEnd, "node.ssh.end"),
        (AuditAction::NodeTerminal, "node.terminal"),
        (AuditAction::NodeTerminalEnd, "node.terminal.end"),
        (AuditAction::PoolHostCreate, "pool_host.create"),
        (AuditAction::PoolHostUpdate, "pool_host.update"),
        (AuditAction::PoolHostDelete, "pool_host.delete"),
        (
            AuditAction::ProviderCredentialsSet,
            "provider.credentials.set",
        ),
        (
            AuditAction::ProviderCredentialsSetMine,
            "provider.credentials.set-mine",
        ),
        (
            AuditAction::ProviderCredentialsDelete,
            "provider.credentials.delete",
        ),
        (
            AuditAction::ProviderCredentialsDeleteMine,
            "provider.credentials.delete-mine",
        ),
        (AuditAction::ProviderTest, "provider.test"),
        (AuditAction::ResourceUpload, "resource.upload"),
        (AuditAction::ResourceStage, "resource.stage"),
        (AuditAction::TenantCreate, "tenant.create"),
        (AuditAction::TenantDelete, "tenant.delete"),
        (AuditAction::TenantQuotas, "tenant.quotas"),
        (AuditAction::TenantBudget, "tenant.budget"),
        (AuditAction::TenantProviderTypes, "tenant.provider-types"),
        (
            AuditAction::TenantDedicatedWorkers,
            "tenant.dedicated-workers",
        ),
        (AuditAction::TenantNodeShell, "tenant.node-shell"),
        (
            AuditAction::TenantTerminalRecording,
            "tenant.terminal-recording",
        ),
        (AuditAction::TenantAdminKeys, "tenant.admin-keys"),
        (AuditAction::TokenCreate, "token.create"),
        (AuditAction::TokenRevoke, "token.revoke"),
        (AuditAction::UserCreate, "user.create"),
        (AuditAction::UserUpdate, "user.update"),
        (AuditAction::UserDelete, "user.delete"),
        (AuditAction::UserMove, "user.move"),
        (AuditAction::UserPassword, "user.password"),
        (AuditAction::UserLogoutEverywhere, "user.logout-everywhere"),
        (AuditAction::UserKeyAdd, "user.key-add"),
        (AuditAction::UserKeyRemove, "user.key-remove"),
    ];

    #[test]
    fn every_action_round_trips_to_its_stored_name() {
        for (action, name) in NAMES {
            assert_eq!(action.as_str(), *name);
            assert_eq!(action.to_string(), *name);
            assert_eq!(name.parse::<AuditAction>(), Ok(*action));
            let json = serde_json::to_string(action).expect("serialises");
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(
                serde_json::from_str::<AuditAction>(&json).expect("parses"),
                *action
            );
        }
        // The table names every action, each once.
        let listed: BTreeSet<AuditAction> = NAMES.iter().map(|(action, _)| *action).collect();
        let every: BTreeSet<AuditAction> = AuditAction::ALL.iter().copied().collect();
        assert_eq!(listed, every);
        assert_eq!(NAMES.len(), AuditAction::ALL.len());
    }

    #[test]
    fn a_name_no_version_writes_now_is_unknown() {
        let error = "tenant.local-nodes"
            .parse::<AuditAction>()
            .expect_err("not written any more");
        assert_eq!(
            error.to_string(),
            "unknown audit action \"tenant.local-nodes\""
        );
        assert!(serde_json::from_str::<AuditAction>("\"cluster.\"").is_err());
    }

    #[test]
    fn a_view_keeps_any_stored_name_and_knows_the_current_ones() {
        let view = |action: &str| crate::AuditView {
            id: "a1".to_owned(),
            tenant_id: "t1".to_owned(),
            actor: "ada".to_owned(),
            action: action.to_owned(),
            target_kind: "node".to_owned(),
            target: "shop 1000".to_owned(),
            address: None,
            before: None,
            after: None,
            at_ms: 1,
        };
        assert_eq!(
            view("node.terminal.end").known_action(),
            Some(AuditAction::NodeTerminalEnd)
        );
        let old = view("tenant.local-nodes");
        assert_eq!(old.known_action(), None);
        let json = serde_json::to_value(&old).expect("serialises");
        assert_eq!(json["action"], "tenant.local-nodes");
    }

    #[test]
    fn a_cluster_operation_is_named_after_it() {
        for operation in Operation::ALL {
            assert_eq!(
                AuditAction::cluster(*operation).as_str(),
                format!("cluster.{}", operation.as_str())
            );
        }
    }
}
