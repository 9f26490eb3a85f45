//! Plugin resource rows (`plugin_resources`, one per version) and their bytes
//! (`plugin_resource_blobs`), always written in the same transaction. What they mean
//! and how processes cache the bytes is the engine's `resources` module's.

use super::{conflict_on_unique, Listing, Store, StoreError, Window};
use crate::resource_types::{ResourceKind, ResourceVersion, Upload};

const COLUMNS: &str = "tenant_id, kind, name, version, sha256, size_bytes, staged, created_at_ms";

/// Every version of every resource of the tenant, by kind, name and version.
fn tenant_versions<'a>(tenant_id: &'a &'a str) -> Listing<'a> {
    Listing {
        columns: COLUMNS,
        from: "plugin_resources WHERE tenant_id = $1",
        order: "kind, name, version",
        params: std::slice::from_ref(tenant_id),
    }
}

impl Store {
    /// Stores `bytes` (whose SHA-256 is `sha256`) as the next version of `upload`'s
    /// resource, not staged: row and bytes in one transaction.
    pub async fn insert_resource_version(
        &self,
        upload: &Upload<'_>,
        sha256: String,
        bytes: &[u8],
        now_ms: i64,
    ) -> Result<ResourceVersion, StoreError> {
        let Upload {
            tenant_id,
            kind,
            name,
            author_id,
        } = *upload;
        let (_turn, mut tx) = self.begin_write().await?;
        let newest: Option<i64> = sqlx::query_scalar(
            "SELECT MAX(version) FROM plugin_resources \
             WHERE tenant_id = $1 AND kind = $2 AND name = $3",
        )
        .bind(tenant_id)
        .bind(kind.as_str())
        .bind(name)
        .fetch_one(&mut *tx)
        .await?;
        let resource = ResourceVersion {
            tenant_id: tenant_id.to_owned(),
            kind,
            name: name.to_owned(),
            version: newest.unwrap_or(0) + 1,
            sha256,
            size_bytes: i64::try_from(bytes.len()).unwrap_or(i64::MAX),
            staged: false,
            created_at_ms: now_ms,
        };
        let inserted = sqlx::query(&format!(
            "INSERT INTO plugin_resources ({COLUMNS}, author_id) \
             VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $8)"
        ))
        .bind(&resource.tenant_id)
        .bind(kind.as_str())
        .bind(&resource.name)
        .bind(resource.version)
        .bind(&resource.sha256)
        .bind(resource.size_bytes)
        .bind(now_ms)
        .bind(author_id)
        .execute(&mut *tx)
        .await;
        conflict_on_unique(inserted, || {
            format!("version {} of {kind}/{name}", resource.version)
        })?;
        sqlx::query(
            "INSERT INTO plugin_resource_blobs (tenant_id, kind, name, version, bytes) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&resource.tenant_id)
        .bind(kind.as_str())
        .bind(&resource.name)
        .bind(resource.version)
        .bind(bytes)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(resource)
    }

    /// Makes `version` the staged one (unstaging any other); `false` when there is no
    /// such version.
    pub async fn stage_resource_version(
        &self,
        tenant_id: &str,
        kind: ResourceKind,
        name: &str,
        version: i64,
    ) -> Result<bool, StoreError> {
        let (_turn, mut tx) = self.begin_write().await?;
        let exists: Option<i64> = sqlx::query_scalar(
            "SELECT version FROM plugin_resources \
             WHERE tenant_id = $1 AND kind = $2 AND name = $3 AND version = $4",
        )
        .bind(tenant_id)
        .bind(kind.as_str())
        .bind(name)
        .bind(version)
        .fetch_optional(&mut *tx)
        .await?;
        if exists.is_none() {
            return Ok(false);
        }
        sqlx::query(
            "UPDATE plugin_resources SET staged = CASE WHEN version = $4 THEN 1 ELSE 0 END \
             WHERE tenant_id = $1 AND kind = $2 AND name = $3 AND (staged = 1 OR version = $4)",
        )
        .bind(tenant_id)
        .bind(kind.as_str())
        .bind(name)
        .bind(version)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Copies tenant `from`'s staged versions, bytes too, to tenant `to` (same version
    /// numbers, staged); returns how many.
    pub async fn copy_staged_resources(
        &self,
        from: &str,
        to: &str,
        now_ms: i64,
    ) -> Result<u64, StoreError> {
        let (_turn, mut tx) = self.begin_write().await?;
        let copied = sqlx::query(
            "INSERT INTO plugin_resources (tenant_id, kind, name, version, sha256, size_bytes, \
             staged, author_id, created_at_ms) \
             SELECT $2, kind, name, version, sha256, size_bytes, 1, NULL, $3 \
             FROM plugin_resources WHERE tenant_id = $1 AND staged = 1",
        )
        .bind(from)
        .bind(to)
        .bind(now_ms)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        sqlx::query(
            "INSERT INTO plugin_resource_blobs (tenant_id, kind, name, version, bytes) \
             SELECT $2, b.kind, b.name, b.version, b.bytes FROM plugin_resource_blobs b \
             JOIN plugin_resources r ON r.tenant_id = b.tenant_id AND r.kind = b.kind \
               AND r.name = b.name AND r.version = b.version \
             WHERE r.tenant_id = $1 AND r.staged = 1",
        )
        .bind(from)
        .bind(to)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(copied)
    }

    /// Versions (of every tenant) whose bytes the database does not hold: uploaded
    /// before it kept them.
    pub async fn resources_without_bytes(&self) -> Result<Vec<ResourceVersion>, StoreError> {
        sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM plugin_resources r WHERE NOT EXISTS \
             (SELECT 1 FROM plugin_resource_blobs b WHERE b.tenant_id = r.tenant_id \
              AND b.kind = r.kind AND b.name = r.name AND b.version = r.version)"
        ))
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::from)
    }

    /// Puts `bytes` in as `resource`'s unless the database has them already; returns
    /// how many rows it wrote (0 or 1).
    pub async fn insert_missing_resource_bytes(
        &self,
        resource: &ResourceVersion,
        bytes: &[u8],
    ) -> Result<u64, StoreError> {
        let (_turn, mut tx) = self.begin_write().await?;
        let written = sqlx::query(
            "INSERT INTO plugin_resource_blobs (tenant_id, kind, name, version, bytes) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
        )
        .bind(&resource.tenant_id)
        .bind(resource.kind.as_str())
        .bind(&resource.name)
        .bind(resource.version)
        .bind(bytes)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok(written)
    }

    /// Every version of every resource of the tenant.
    pub async fn list_resources(
        &self,
        tenant_id: &str,
    ) -> Result<Vec<ResourceVersion>, StoreError> {
        self.listed(&tenant_versions(&tenant_id)).await
    }

    /// One window of the tenant's resource versions, by kind, name and version.
    pub async fn resources_window(
        &self,
        tenant_id: &str,
        window: Window,
    ) -> Result<(Vec<ResourceVersion>, u64), StoreError> {
        self.windowed(&tenant_versions(&tenant_id), window).await
    }

    /// The staged version of each resource of the tenant.
    pub async fn staged_resources(
        &self,
        tenant_id: &str,
    ) -> Result<Vec<ResourceVersion>, StoreError> {
        let listing = Listing {
            columns: COLUMNS,
            from: "plugin_resources WHERE tenant_id = $1 AND staged = 1",
            order: "kind, name",
            params: &[tenant_id],
        };
        self.listed(&listing).await
    }

    /// The bytes the database holds for `resource`, if any.
    pub async fn resource_bytes(
        &self,
        resource: &ResourceVersion,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT bytes FROM plugin_resource_blobs \
             WHERE tenant_id = $1 AND kind = $2 AND name = $3 AND version = $4",
        )
        .bind(&resource.tenant_id)
        .bind(resource.kind.as_str())
        .bind(&resource.name)
        .bind(resource.version)
        .fetch_optional(&self.pool)
        .await?)
    }
}
