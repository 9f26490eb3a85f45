//! Users' SSH keys: each user keeps their own (no one else reads or changes them, admins
//! included), and every change is put on the clusters it concerns by a `sync-keys` job
//! started as the user. A tenant's admins choose whether their keys go on every cluster
//! of the tenant; turning that on or off syncs every active cluster of the tenant.

use api_types::{
    AdminKeysSetting, AuditAction, ClusterChangeRequest, ClusterKeyView, KeySync, UserKeyChange,
    UserKeyRequest, UserKeyView,
};

use super::{AuditRecord, Caller, Service, ServiceError};
use crate::accounts::ssh_keys::check_public_key;
use crate::store::now_ms;
use crate::store::tenants::TenantSwitch;
use crate::store::user_keys::{KeyAdded, KeyedCluster, UserKey, MAX_KEYS_PER_USER};

/// A stored key line's algorithm and comment (the line was checked and rebuilt when
/// kept: `algorithm base64 [comment]`).
fn line_parts(line: &str) -> (&str, &str) {
    let mut parts = line.splitn(3, ' ');
    let algorithm = parts.next().unwrap_or_default();
    let comment = parts.nth(1).unwrap_or_default();
    (algorithm, comment)
}

fn key_view(key: UserKey) -> UserKeyView {
    let (algorithm, comment) = line_parts(&key.public_key);
    let (algorithm, comment) = (algorithm.to_owned(), comment.to_owned());
    UserKeyView {
        id: key.id,
        fingerprint: key.fingerprint,
        algorithm,
        comment,
        public_key: key.public_key,
        created_at_ms: key.created_at_ms,
    }
}

impl Service {
    /// The caller's own keys, oldest first.
    pub async fn my_keys(&self, caller: &Caller) -> Result<Vec<UserKeyView>, ServiceError> {
        let keys = self.store.user_keys(&caller.principal.user_id).await?;
        Ok(keys.into_iter().map(key_view).collect())
    }

    /// Keeps a key on the caller's profile and syncs the clusters it goes on.
    pub async fn add_my_key(
        &self,
        caller: &Caller,
        request: &UserKeyRequest,
    ) -> Result<UserKeyChange, ServiceError> {
        let checked = check_public_key(&request.public_key)
            .map_err(|error| super::clusters::field_problem("public_key", error.to_string()))?;
        let key = UserKey {
            id: uuid::Uuid::new_v4().to_string(),
            user_id: caller.principal.user_id.clone(),
            public_key: checked.line,
            fingerprint: checked.fingerprint,
            created_at_ms: now_ms(),
        };
        match self.store.add_user_key(&key).await? {
            KeyAdded::Added => {}
            KeyAdded::Full => {
                return Err(ServiceError::Conflict(format!(
                    "you already have {MAX_KEYS_PER_USER} keys, the most one user keeps; remove one first"
                )))
            }
        }
        let mut record = AuditRecord::new(
            caller.tenant_id(),
            AuditAction::UserKeyAdd,
            "user-key",
            &key.fingerprint,
        );
        record.after = Some(serde_json::json!({"comment": checked.comment}).to_string());
        self.audit(caller, record).await;
        let clusters = self.sync_keyed_clusters(caller).await?;
        Ok(UserKeyChange {
            key: Some(key_view(key)),
            clusters,
        })
    }

    /// Takes one of the caller's keys off their profile and off the clusters it is on.
    pub async fn remove_my_key(
        &self,
        caller: &Caller,
        id: &str,
    ) -> Result<UserKeyChange, ServiceError> {
        let key = self
            .store
            .remove_user_key(&caller.principal.user_id, id)
            .await?;
        self.audit(
            caller,
            AuditRecord::new(
                caller.tenant_id(),
                AuditAction::UserKeyRemove,
                "user-key",
                &key.fingerprint,
            ),
        )
        .await;
        let clusters = self.sync_keyed_clusters(caller).await?;
        Ok(UserKeyChange {
            key: None,
            clusters,
        })
    }

    /// Whether the tenant's admins' keys go on every cluster of the tenant (its admins).
    pub async fn admin_keys_setting(
        &self,
        caller: &Caller,
        tenant_id: &str,
    ) -> Result<AdminKeysSetting, ServiceError> {
        caller.require_visible(tenant_id, || format!("tenant {tenant_id:?}"))?;
        caller.require_tenant_admin(tenant_id)?;
        Ok(AdminKeysSetting {
            admin_keys_on_all_clusters: self
                .store
                .tenant_switch(tenant_id, TenantSwitch::AdminKeysOnAllClusters)
                .await?,
        })
    }

    /// Turns putting the tenant's admins' keys on every cluster on or off (its admins),
    /// syncing every active cluster of the tenant when it changes.
    pub async fn set_admin_keys_setting(
        &self,
        caller: &Caller,
        tenant_id: &str,
        setting: AdminKeysSetting,
    ) -> Result<Vec<KeySync>, ServiceError> {
        let before = self.admin_keys_setting(caller, tenant_id).await?;
        if before == setting {
            return Ok(Vec::new());
        }
        let on = setting.admin_keys_on_all_clusters;
        self.switch_tenant(caller, tenant_id, TenantSwitch::AdminKeysOnAllClusters, on)
            .await?;
        let clusters = self.store.tenant_keyed_clusters(tenant_id).await?;
        Ok(self.sync_keys_on(caller, clusters).await)
    }

    /// The keys a `sync-keys` of the cluster puts on its nodes (for its preview).
    pub(super) async fn cluster_key_views(
        &self,
        cluster_id: &str,
    ) -> Result<Vec<ClusterKeyView>, ServiceError> {
        let keys = self.store.cluster_keys(cluster_id).await?;
        Ok(keys
            .into_iter()
            .map(|key| ClusterKeyView {
                username: key.username,
                comment: line_parts(&key.public_key).1.to_owned(),
                fingerprint: key.fingerprint,
            })
            .collect())
    }

    async fn sync_keyed_clusters(&self, caller: &Caller) -> Result<Vec<KeySync>, ServiceError> {
        let clusters = self.store.keyed_clusters(&caller.principal.user_id).await?;
        Ok(self.sync_keys_on(caller, clusters).await)
    }

    /// Starts a `sync-keys` job on each cluster as the caller; a cluster that cannot
    /// take one now (a job runs, its lease stopped it) is reported with the reason and
    /// the command that syncs it later.
    async fn sync_keys_on(&self, caller: &Caller, clusters: Vec<KeyedCluster>) -> Vec<KeySync> {
        let mut synced = Vec::with_capacity(clusters.len());
        for cluster in clusters {
            let submitted = self
                .change_cluster(caller, &cluster.id, &ClusterChangeRequest::SyncKeys {})
                .await;
            let (job_id, note) = match submitted {
                Ok(job) => (Some(job.job_id), None),
                Err(error) => (
                    None,
                    Some(format!(
                        "not synced now ({error}); run `corral cluster change {} sync-keys` later",
                        cluster.name
                    )),
                ),
            };
            synced.push(KeySync {
                cluster_id: cluster.id,
                cluster_name: cluster.name,
                job_id,
                note,
            });
        }
        synced
    }
}
