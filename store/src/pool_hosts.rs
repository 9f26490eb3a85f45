//! Hosts of the `ssh-pool` provider and which node each is lent to.
//!
//! The check-out is the point of this table: one conditional `UPDATE ... WHERE
//! checked_out_node IS NULL` lends a host, so two processes sharing the database never
//! lend the same host, and `checked_out_node` is unique, so one node never holds two.
//! The client private key is a secret: [`PoolHost`] does not carry it; only
//! [`Store::pool_host_client_key`] reads it, for the provider that connects with it.

use super::{conflict_on_unique, Listing, PortNumber, RowLock, Store, StoreError, Window};
use crate::found::OrNotFound;
use crate::secrets::SecretKey;

/// A registered host, without its client private key.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PoolHost {
    pub id: String,
    pub tenant_id: String,
    pub name: String,
    pub host: String,
    #[sqlx(try_from = "PortNumber")]
    pub port: u16,
    #[sqlx(rename = "ssh_user")]
    pub user: String,
    /// The pinned host key, OpenSSH one-line form.
    pub host_key: String,
    /// The public half of the key pair Corral made for this host, for `authorized_keys`.
    pub client_public_key: String,
    /// The node the host is lent to (`<cluster id>-<node number>`), if any.
    pub checked_out_node: Option<String>,
    pub checked_out_at_ms: Option<i64>,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

impl PoolHost {
    /// `host:port`, as connections and messages name the host.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

const COLUMNS: &str = "id, tenant_id, name, host, port, ssh_user, host_key, client_public_key, \
                       checked_out_node, checked_out_at_ms, created_at_ms, updated_at_ms";

/// Attempts at lending a free host before giving up: each failed attempt means another
/// process lent the host this one picked at the same moment.
const CHECK_OUT_ATTEMPTS: usize = 64;

fn unique_what(host: &PoolHost) -> String {
    format!(
        "a pool host named {:?} or at {} in this tenant",
        host.name,
        host.address()
    )
}

/// What a host's sealed client key is bound to: it opens in its own row only.
fn client_key_context(host_id: &str) -> String {
    format!("pool_hosts.client_key:{host_id}")
}

impl Store {
    /// Registers `host` with its client private key (OpenSSH PEM), sealed with the
    /// server's secret key.
    pub async fn insert_pool_host(
        &self,
        host: &PoolHost,
        client_key: &str,
    ) -> Result<(), StoreError> {
        let client_key = self
            .secret_key()?
            .seal(client_key, &client_key_context(&host.id))?;
        let result = sqlx::query(
            "INSERT INTO pool_hosts (id, tenant_id, name, host, port, ssh_user, host_key, \
             client_key, client_public_key, created_at_ms, updated_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(&host.id)
        .bind(&host.tenant_id)
        .bind(&host.name)
        .bind(&host.host)
        .bind(i64::from(host.port))
        .bind(&host.user)
        .bind(&host.host_key)
        .bind(&client_key)
        .bind(&host.client_public_key)
        .bind(host.created_at_ms)
        .bind(host.updated_at_ms)
        .execute(&self.pool)
        .await;
        conflict_on_unique(result, || unique_what(host))?;
        Ok(())
    }

    /// Saves the admin fields of `host` (name, address, user, host key).
    pub async fn update_pool_host(&self, host: &PoolHost) -> Result<(), StoreError> {
        let result = sqlx::query(
            "UPDATE pool_hosts SET name = $2, host = $3, port = $4, ssh_user = $5, \
             host_key = $6, updated_at_ms = $7 WHERE id = $1",
        )
        .bind(&host.id)
        .bind(&host.name)
        .bind(&host.host)
        .bind(i64::from(host.port))
        .bind(&host.user)
        .bind(&host.host_key)
        .bind(host.updated_at_ms)
        .execute(&self.pool)
        .await;
        conflict_on_unique(result, || unique_what(host))?
            .or_not_found(|| format!("pool host {:?}", host.id))
    }

    pub async fn pool_host(&self, id: &str) -> Result<PoolHost, StoreError> {
        sqlx::query_as(&format!("SELECT {COLUMNS} FROM pool_hosts WHERE id = $1"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .or_not_found(|| format!("pool host {id:?}"))
    }

    /// The host's client private key (OpenSSH PEM): for connecting, never for showing.
    pub async fn pool_host_client_key(&self, id: &str) -> Result<String, StoreError> {
        let stored =
            sqlx::query_scalar::<_, String>("SELECT client_key FROM pool_hosts WHERE id = $1")
                .bind(id)
                .fetch_optional(&self.pool)
                .await?
                .or_not_found(|| format!("pool host {id:?}"))?;
        Ok(self.secret_key()?.open(&stored, &client_key_context(id))?)
    }

    /// Seals the client keys stored in clear by versions before sealing; returns how
    /// many. Run at start-up by the server.
    pub async fn seal_pool_host_keys(&self) -> Result<usize, StoreError> {
        let key = self.secret_key()?;
        let rows: Vec<(String, String)> = sqlx::query_as("SELECT id, client_key FROM pool_hosts")
            .fetch_all(&self.pool)
            .await?;
        let mut sealed = 0;
        for (id, stored) in rows {
            if SecretKey::is_sealed(&stored) {
                continue;
            }
            let value = key.seal(&stored, &client_key_context(&id))?;
            sqlx::query("UPDATE pool_hosts SET client_key = $2 WHERE id = $1 AND client_key = $3")
                .bind(&id)
                .bind(&value)
                .bind(&stored)
                .execute(&self.pool)
                .await?;
            sealed += 1;
        }
        Ok(sealed)
    }

    /// One window of the pool hosts, by name: the tenant's, or every tenant's (`None`).
    pub async fn pool_hosts_window(
        &self,
        tenant_id: Option<&str>,
        window: Window,
    ) -> Result<(Vec<PoolHost>, u64), StoreError> {
        let listing = match tenant_id {
            Some(tenant_id) => Listing {
                columns: COLUMNS,
                from: "pool_hosts WHERE tenant_id = $1",
                order: "name, id",
                params: &[tenant_id],
            },
            None => Listing {
                columns: COLUMNS,
                from: "pool_hosts",
                order: "tenant_id, name, id",
                params: &[],
            },
        };
        self.windowed(&listing, window).await
    }

    /// Removes the host unless it is lent out; `Ok(false)` when it is (or is gone).
    pub async fn delete_free_pool_host(&self, id: &str) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM pool_hosts WHERE id = $1 AND checked_out_node IS NULL")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// The host lent to `node`, if any.
    pub async fn pool_host_of_node(&self, node: &str) -> Result<Option<PoolHost>, StoreError> {
        sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM pool_hosts WHERE checked_out_node = $1"
        ))
        .bind(node)
        .fetch_optional(&self.pool)
        .await
        .map_err(StoreError::from)
    }

    /// Lends a free host of `tenant_id` to `node`, or returns the one it already holds
    /// (a retried node creation gets the same host). `None` when every host is lent.
    pub async fn check_out_pool_host(
        &self,
        tenant_id: &str,
        node: &str,
        now_ms: i64,
    ) -> Result<Option<PoolHost>, StoreError> {
        // PostgreSQL: concurrent check-outs skip the row another one is lending instead
        // of queueing behind it and then finding it taken. SQLite has one writer anyway.
        let lock = self.backend.lock_clause(RowLock::SkipLocked);
        let lend = format!(
            "UPDATE pool_hosts SET checked_out_node = $1, checked_out_at_ms = $2 \
             WHERE checked_out_node IS NULL AND id = (SELECT id FROM pool_hosts \
             WHERE tenant_id = $3 AND checked_out_node IS NULL ORDER BY name, id LIMIT 1{lock})"
        );
        for _ in 0..CHECK_OUT_ATTEMPTS {
            if let Some(host) = self.pool_host_of_node(node).await? {
                return Ok(Some(host));
            }
            let result = sqlx::query(&lend)
                .bind(node)
                .bind(now_ms)
                .bind(tenant_id)
                .execute(&self.pool)
                .await;
            match result {
                Ok(done) if done.rows_affected() > 0 => continue,
                Ok(_) => {
                    if self.free_pool_hosts(tenant_id).await? == 0 {
                        return Ok(None);
                    }
                }
                // The same node is being checked out concurrently (a retried task while
                // the first attempt still runs): the other attempt's host is this one's.
                Err(sqlx::Error::Database(db)) if db.is_unique_violation() => continue,
                Err(error) => return Err(error.into()),
            }
        }
        Err(StoreError::Conflict(format!(
            "a free pool host for node {node} after {CHECK_OUT_ATTEMPTS} contended attempts"
        )))
    }

    /// Returns whatever host `node` holds; returning twice is fine.
    pub async fn return_pool_host(&self, node: &str) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE pool_hosts SET checked_out_node = NULL, checked_out_at_ms = NULL \
             WHERE checked_out_node = $1",
        )
        .bind(node)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// How many hosts of `tenant_id` are lent to no node.
    pub async fn free_pool_hosts(&self, tenant_id: &str) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar::<_, i64>(
            "SELECT COUNT(*) FROM pool_hosts WHERE tenant_id = $1 AND checked_out_node IS NULL",
        )
        .bind(tenant_id)
        .fetch_one(&self.pool)
        .await?)
    }

    /// How many hosts `tenant_id` has registered.
    pub async fn count_pool_hosts(&self, tenant_id: &str) -> Result<i64, StoreError> {
        Ok(
            sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM pool_hosts WHERE tenant_id = $1")
                .bind(tenant_id)
                .fetch_one(&self.pool)
                .await?,
        )
    }
}
