//! Recorded browser terminal sessions (asciicast v2 text), each kept under the id of
//! its session's closing audit entry (the tenant's switch that turns recording on is
//! [`super::tenants::TenantSwitch::TerminalRecording`]).

use super::{IntFlag, Store, StoreError};
use crate::found::OrNotFound;

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
        .or_not_found(|| format!("recording of audit entry {audit_id:?}"))
    }
}
