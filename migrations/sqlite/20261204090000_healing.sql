-- Healing (issue 40): when each checked service went down (cleared when it answers
-- again), which the monitor compares with a template's `heal_after`; and the last thing
-- healing did or declined to do on a cluster, with when, for its page; and the owner's
-- choice for the cluster (1 on, 0 off), NULL when the template's policy decides.
ALTER TABLE service_health ADD COLUMN down_since_ms BIGINT;
ALTER TABLE clusters ADD COLUMN heal_note TEXT;
ALTER TABLE clusters ADD COLUMN heal_note_at_ms BIGINT;
ALTER TABLE clusters ADD COLUMN healing INTEGER;
