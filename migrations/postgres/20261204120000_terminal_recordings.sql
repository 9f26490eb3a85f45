-- Issue 41 point 5: a tenant may have its browser terminal sessions recorded (off
-- unless an admin turns it on), as asciicast v2 kept with the session's closing audit
-- entry (`node.terminal.end`, whose id names the recording) and bounded in size.
ALTER TABLE tenants ADD COLUMN terminal_recording BIGINT NOT NULL DEFAULT 0;

CREATE TABLE terminal_recordings (
    audit_id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    cast_text TEXT NOT NULL,
    truncated BIGINT NOT NULL,
    recorded_at_ms BIGINT NOT NULL
);

CREATE INDEX terminal_recordings_tenant ON terminal_recordings (tenant_id);
