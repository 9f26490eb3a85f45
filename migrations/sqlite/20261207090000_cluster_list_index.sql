-- Thousands of clusters (issue 42): what is read per request or every few seconds
-- reads an index, never every cluster's row (whose JSON columns, the layout, template
-- and catalog snapshot, are large).
--
-- A tenant's live clusters in list order (the lease's deadline: a lease stop's
-- deletion, else the lease's end, else last; then name and id), so a page, a cursor's
-- next page and the list's count (state: covered) read only their part of the index.
CREATE INDEX clusters_tenant_list ON clusters (tenant_id, (COALESCE(lease_deletes_at_ms, lease_expires_ms, 9223372036854775807)), name, id, state) WHERE state <> 'deleted';
-- What the monitor and healing list every few seconds: id, state, when it last
-- changed, whose, and whether its lease stopped it.
CREATE INDEX clusters_live_versions ON clusters (id, state, updated_at_ms, tenant_id, lease_deletes_at_ms) WHERE state <> 'deleted';
-- The janitor's leases due: a range of lease ends, the rest of its conditions read
-- from the index.
CREATE INDEX clusters_lease_due ON clusters (lease_expires_ms, lease_deletes_at_ms, lease_warned, state) WHERE lease_expires_ms IS NOT NULL;
