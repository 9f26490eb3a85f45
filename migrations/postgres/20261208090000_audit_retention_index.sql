-- The audit log's retention (issue 45): the janitor deletes entries older than the
-- cutoff across every tenant, a range of this index, not a scan of the whole log.
CREATE INDEX audit_log_at ON audit_log (at_ms);
