-- Monitor: the last health check of each service on each node of a live cluster.
-- `health` is up, down or unknown; a worker owns a check while `claimed_until_ms` is in
-- the future, so processes sharing the database never run one check twice at once.
CREATE TABLE service_health (
    cluster_id       TEXT NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    node_number      BIGINT NOT NULL,
    service          TEXT NOT NULL,
    health           TEXT NOT NULL,
    detail           TEXT,
    checked_at_ms    BIGINT,
    next_check_ms    BIGINT NOT NULL,
    claimed_until_ms BIGINT,
    PRIMARY KEY (cluster_id, node_number, service)
);
CREATE INDEX service_health_due ON service_health (next_check_ms);
