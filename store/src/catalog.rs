//! Catalog rows: every revision of every admin entity of a tenant.
//!
//! An edit writes revision `highest + 1`; a delete writes a revision without a body, so
//! the history of a deleted entity survives. The current catalog is each name's highest
//! revision that has a body. Bodies are Coopr-format JSON text; turning them into
//! `domain` types is the engine's `catalog`'s job.

use sqlx::{Any, Transaction};

use super::{Listing, Store, StoreError, Window};
use crate::found::OrNotFound;

/// One revision of one entity. `body_json` is `None` for a deletion.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct CatalogRevision {
    pub tenant_id: String,
    /// The bundle key: `providers`, `hardwaretypes`, `imagetypes`, `services`,
    /// `clustertemplates`, `partialtemplates`.
    pub kind: String,
    pub name: String,
    pub version: i64,
    pub body_json: Option<String>,
    pub author_id: Option<String>,
    pub created_at_ms: i64,
}

/// A write to apply: a new body, or `None` to delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogWrite {
    pub kind: String,
    pub name: String,
    pub body_json: Option<String>,
}

/// See [`Store::catalog_stamp`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CatalogStamp {
    revisions: i64,
    newest_ms: i64,
}

const COLUMNS: &str = "tenant_id, kind, name, version, body_json, author_id, created_at_ms";

/// Revisions that are the newest of their name.
const NEWEST: &str = "version = (SELECT MAX(version) FROM catalog_entities newest \
     WHERE newest.tenant_id = e.tenant_id AND newest.kind = e.kind AND newest.name = e.name)";

impl Store {
    /// The current (not deleted) revision of every entity of the tenant, by kind and name.
    pub async fn current_catalog(
        &self,
        tenant_id: &str,
    ) -> Result<Vec<CatalogRevision>, StoreError> {
        let from = format!(
            "catalog_entities e WHERE tenant_id = $1 AND {NEWEST} AND body_json IS NOT NULL"
        );
        let listing = Listing {
            columns: COLUMNS,
            from: &from,
            order: "kind, name",
            params: &[tenant_id],
        };
        self.listed(&listing).await
    }

    /// Where the tenant's catalog stands: how many revisions it has and when the newest
    /// was written. Every edit and delete appends a revision (none is ever changed), so
    /// the stamp moves with any change, made by any server on the database; a kept copy
    /// of the catalog is current while the stamp is the same.
    pub async fn catalog_stamp(&self, tenant_id: &str) -> Result<CatalogStamp, StoreError> {
        let (revisions, newest_ms): (i64, i64) = sqlx::query_as(
            "SELECT COUNT(*), COALESCE(MAX(created_at_ms), 0) FROM catalog_entities \
             WHERE tenant_id = $1",
        )
        .bind(tenant_id)
        .fetch_one(&self.pool)
        .await?;
        Ok(CatalogStamp {
            revisions,
            newest_ms,
        })
    }

    /// One window of the current entities of one kind (by bundle key), by name.
    pub async fn catalog_entities_window(
        &self,
        tenant_id: &str,
        kind: &str,
        window: Window,
    ) -> Result<(Vec<CatalogRevision>, u64), StoreError> {
        let from = format!(
            "catalog_entities e WHERE tenant_id = $1 AND kind = $2 AND {NEWEST} \
             AND body_json IS NOT NULL"
        );
        let listing = Listing {
            columns: COLUMNS,
            from: &from,
            order: "name",
            params: &[tenant_id, kind],
        };
        self.windowed(&listing, window).await
    }

    /// The current revision of one entity; `NotFound` when it never existed or was deleted.
    pub async fn catalog_entity(
        &self,
        tenant_id: &str,
        kind: &str,
        name: &str,
    ) -> Result<CatalogRevision, StoreError> {
        let revision: Option<CatalogRevision> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM catalog_entities e \
             WHERE tenant_id = $1 AND kind = $2 AND name = $3 AND {NEWEST}"
        ))
        .bind(tenant_id)
        .bind(kind)
        .bind(name)
        .fetch_optional(&self.pool)
        .await?;
        // A deletion is stored as a revision without a body.
        revision
            .filter(|revision| revision.body_json.is_some())
            .or_not_found(|| format!("{} {name:?}", singular(kind)))
    }

    /// Every revision of one entity, oldest first (deletions included).
    pub async fn catalog_history(
        &self,
        tenant_id: &str,
        kind: &str,
        name: &str,
    ) -> Result<Vec<CatalogRevision>, StoreError> {
        sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM catalog_entities \
             WHERE tenant_id = $1 AND kind = $2 AND name = $3 ORDER BY version"
        ))
        .bind(tenant_id)
        .bind(kind)
        .bind(name)
        .fetch_all(&self.pool)
        .await
        .map_err(StoreError::from)
    }

    /// Applies `writes` in one transaction and returns the new revisions. A write whose
    /// body equals the current one is skipped (no empty revisions); deleting an entity
    /// that does not exist is `NotFound` and nothing is written.
    pub async fn write_catalog(
        &self,
        tenant_id: &str,
        writes: &[CatalogWrite],
        author_id: Option<&str>,
        now_ms: i64,
    ) -> Result<Vec<CatalogRevision>, StoreError> {
        let (_turn, mut tx) = self.begin_write().await?;
        let mut written = Vec::with_capacity(writes.len());
        for write in writes {
            if let Some(revision) = write_one(&mut tx, tenant_id, write, author_id, now_ms).await? {
                written.push(revision);
            }
        }
        tx.commit().await?;
        Ok(written)
    }

    /// Makes the tenant's catalog exactly `entities` in one transaction: entities not
    /// listed are deleted (a revision without body), changed ones get a new revision.
    pub async fn replace_catalog(
        &self,
        tenant_id: &str,
        entities: &[CatalogWrite],
        author_id: Option<&str>,
        now_ms: i64,
    ) -> Result<Vec<CatalogRevision>, StoreError> {
        let current = self.current_catalog(tenant_id).await?;
        let mut writes: Vec<CatalogWrite> = current
            .into_iter()
            .filter(|old| {
                !entities
                    .iter()
                    .any(|new| new.kind == old.kind && new.name == old.name)
            })
            .map(|old| CatalogWrite {
                kind: old.kind,
                name: old.name,
                body_json: None,
            })
            .collect();
        writes.extend(entities.iter().cloned());
        self.write_catalog(tenant_id, &writes, author_id, now_ms)
            .await
    }
}

async fn write_one(
    tx: &mut Transaction<'static, Any>,
    tenant_id: &str,
    write: &CatalogWrite,
    author_id: Option<&str>,
    now_ms: i64,
) -> Result<Option<CatalogRevision>, StoreError> {
    let newest: Option<CatalogRevision> = sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM catalog_entities e \
         WHERE tenant_id = $1 AND kind = $2 AND name = $3 AND {NEWEST}"
    ))
    .bind(tenant_id)
    .bind(&write.kind)
    .bind(&write.name)
    .fetch_optional(&mut **tx)
    .await?;
    let current_body = newest.as_ref().and_then(|rev| rev.body_json.as_deref());
    if write.body_json.is_none() && current_body.is_none() {
        return Err(StoreError::NotFound(format!(
            "{} {:?}",
            singular(&write.kind),
            write.name
        )));
    }
    if write.body_json.as_deref() == current_body {
        return Ok(None);
    }
    let revision = CatalogRevision {
        tenant_id: tenant_id.to_owned(),
        kind: write.kind.clone(),
        name: write.name.clone(),
        version: newest.map_or(1, |rev| rev.version + 1),
        body_json: write.body_json.clone(),
        author_id: author_id.map(str::to_owned),
        created_at_ms: now_ms,
    };
    let inserted = sqlx::query(&format!(
        "INSERT INTO catalog_entities ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)"
    ))
    .bind(&revision.tenant_id)
    .bind(&revision.kind)
    .bind(&revision.name)
    .bind(revision.version)
    .bind(&revision.body_json)
    .bind(&revision.author_id)
    .bind(revision.created_at_ms)
    .execute(&mut **tx)
    .await;
    // Two PostgreSQL writers may read the same newest revision; the key refuses the second.
    super::conflict_on_unique(inserted, || {
        format!(
            "revision {} of {} {:?}",
            revision.version,
            singular(&revision.kind),
            revision.name
        )
    })?;
    Ok(Some(revision))
}

/// `services` → `service`, for messages.
fn singular(kind: &str) -> &str {
    kind.strip_suffix('s').unwrap_or(kind)
}
