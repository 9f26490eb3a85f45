-- A tenant whose tasks only workers started for it (`corral worker --tenant NAME`) may
-- run: its steps never share a process with another tenant's. 0/1 like every flag.
ALTER TABLE tenants ADD COLUMN dedicated_workers BIGINT NOT NULL DEFAULT 0;
