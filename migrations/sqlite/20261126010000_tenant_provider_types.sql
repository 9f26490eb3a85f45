-- Which provider types each tenant may build on, set by superadmins: a JSON list of
-- provider type names. Before, only `local` was gated (`local_nodes`); every tenant
-- keeps what it could use, and `local` stays off unless it was allowed.
ALTER TABLE tenants ADD COLUMN provider_types TEXT NOT NULL DEFAULT '["ssh-pool","docker","ec2","exec"]';
UPDATE tenants SET provider_types = '["local","ssh-pool","docker","ec2","exec"]' WHERE local_nodes = 1;
ALTER TABLE tenants DROP COLUMN local_nodes;
