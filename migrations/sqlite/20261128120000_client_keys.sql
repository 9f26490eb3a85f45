-- Client key pairs providers make to reach their nodes (a docker node's key, an EC2
-- cluster's key pair, the exec provider's key), shared by every process on the
-- database so a `corral worker` on another machine reaches nodes made elsewhere. The
-- private half is sealed with the server's secret key, like every stored secret.
CREATE TABLE client_keys (
    name          TEXT PRIMARY KEY,
    public_key    TEXT NOT NULL,
    private_key   TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL
);
