//! Plugin resources (scripts, archives, files): tenant members list them; admins
//! upload new versions and choose the staged one nodes get.

use api_types::AuditAction;

use super::{AuditRecord, Caller, Page, PageRequest, ResourceView, Service, ServiceError};
use crate::resources::{ResourceKind, Upload};
use crate::store::now_ms;

impl Service {
    /// Every version of every resource of the caller's tenant, by kind, name, version.
    pub async fn list_resources(
        &self,
        caller: &Caller,
        page: PageRequest,
    ) -> Result<Page<ResourceView>, ServiceError> {
        let (versions, total) = self
            .store
            .resources_window(caller.tenant_id(), page.window()?)
            .await?;
        Ok(page.of(
            versions.into_iter().map(ResourceView::from).collect(),
            total,
        ))
    }

    /// Stores `bytes` as the next version of `kind/name` (not staged yet).
    pub async fn upload_resource(
        &self,
        caller: &Caller,
        kind: &str,
        name: &str,
        bytes: &[u8],
    ) -> Result<ResourceView, ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        let kind = ResourceKind::parse(kind)?;
        let version = self
            .resources
            .upload(
                &self.store,
                &Upload {
                    tenant_id: caller.tenant_id(),
                    kind,
                    name,
                    author_id: Some(&caller.principal.user_id),
                },
                bytes,
                now_ms(),
            )
            .await?;
        let target = format!("{kind}/{name}");
        let mut record = AuditRecord::new(
            caller.tenant_id(),
            AuditAction::ResourceUpload,
            "resource",
            &target,
        );
        record.after = Some(
            serde_json::json!({"version": version.version, "sha256": version.sha256}).to_string(),
        );
        self.audit(caller, record).await;
        Ok(version.into())
    }

    /// Makes `version` the one nodes get from now on.
    pub async fn stage_resource(
        &self,
        caller: &Caller,
        kind: &str,
        name: &str,
        version: i64,
    ) -> Result<ResourceView, ServiceError> {
        caller.require_tenant_admin(caller.tenant_id())?;
        let kind = ResourceKind::parse(kind)?;
        self.resources
            .stage(&self.store, caller.tenant_id(), kind, name, version)
            .await?;
        let target = format!("{kind}/{name}");
        let mut record = AuditRecord::new(
            caller.tenant_id(),
            AuditAction::ResourceStage,
            "resource",
            &target,
        );
        record.after = Some(serde_json::json!({"version": version}).to_string());
        self.audit(caller, record).await;
        self.resources
            .list(&self.store, caller.tenant_id())
            .await?
            .into_iter()
            .find(|resource| {
                resource.kind == kind && resource.name == name && resource.version == version
            })
            .map(ResourceView::from)
            .ok_or_else(|| ServiceError::NotFound(format!("{kind}/{name} version {version}")))
    }
}
