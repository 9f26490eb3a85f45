-- What each node's provider last said of its machine (issue 40: `corral cluster show` and
-- the API give it beside the node's health): present, gone or unknown, and since when it
-- says so. NULL until the monitor first asks; written only when the answer changes.
ALTER TABLE nodes ADD COLUMN presence TEXT;
ALTER TABLE nodes ADD COLUMN presence_since_ms BIGINT;
