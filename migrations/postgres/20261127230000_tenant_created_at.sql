-- The first migration seeded the `default` tenant with created_at_ms = 0, which pages
-- showed as 1970. Give such rows a real time: when the first user was made (the
-- superadmin created on the first start, right after the seed), or now on a database
-- with no users yet (a new one, migrating for the first time).
UPDATE tenants
SET created_at_ms = COALESCE(
    (SELECT MIN(created_at_ms) FROM users WHERE created_at_ms > 0),
    CAST(FLOOR(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP)) AS BIGINT) * 1000
)
WHERE created_at_ms = 0;
