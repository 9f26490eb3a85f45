-- Issue 41: whether the tenant's users may open SSH sessions to their nodes through
-- Corral (`corral cluster ssh`, the node shell WebSocket). On unless an admin turns it off.
ALTER TABLE tenants ADD COLUMN node_shell BIGINT NOT NULL DEFAULT 1;
