//! Recorded browser terminal sessions (asciicast v2 text), each kept under the id of
//! its session's closing audit entry, and the tenant setting that turns recording on.

use super::{IntFlag, Store, StoreError};

/// One recorded session.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct TerminalRecording {
    /// The id of the session's `node.terminal.end` audit entry.
    pub audit_id: String,
    pub tenant_id: String,
    /// The asciicast v2 file: a header line, then one event per line.
    pub cast_text: String,
    /// Whether the session outgrew the recording's bound and its end is missing.
    #[sqlx(try_from = "IntFlag")]
    pub truncated: bool,
    pub recorded_at_ms: i64,
}

impl Store {
    /// Whether the tenant's browser terminal sessions are recorded.
    pub async fn tenant_terminal_recording(&self, tenant_id: &str) -> Result<bool, StoreError> {
        let on: Option<i64> =
            sqlx::query_scalar("SELECT terminal_recording FROM tenants WHERE id = $1")
                .bind(tenant_id)
                .fetch_optional(&self.pool)
                .await?;
        match on {
            Some(on) => Ok(on != 0),
            None => Err(StoreError::NotFound(format!("tenant {tenant_id:?}"))),
        }
    }

    /// Turns recording the tenant's browser terminal sessions on or off.
    pub async fn set_tenant_terminal_recording(
        &self,
        tenant_id: &str,
        on: bool,
    ) -> Result<(), StoreError> {
        let done = sqlx::query("UPDATE tenants SET terminal_recording = $2 WHERE id = $1")
            .bind(tenant_id)
            .bind(i64::from(on))
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("tenant {tenant_id:?}")));
        }
        Ok(())
    }

    pub async fn save_terminal_recording(
        &self,
        recording: &TerminalRecording,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO terminal_recordings \
             (audit_id, tenant_id, cast_text, truncated, recorded_at_ms) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&recording.audit_id)
        .bind(&recording.tenant_id)
        .bind(&recording.cast_text)
        .bind(i64::from(recording.truncated))
        .bind(recording.recorded_at_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The recording kept with audit entry `audit_id`.
    pub async fn terminal_recording(
        &self,
        audit_id: &str,
    ) -> Result<TerminalRecording, StoreError> {
        sqlx::query_as(
            "SELECT audit_id, tenant_id, cast_text, truncated, recorded_at_ms \
             FROM terminal_recordings WHERE audit_id = $1",
        )
        .bind(audit_id)
        .fetch_optional(&self.pool)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("recording of audit entry {audit_id:?}")))
    }
}
