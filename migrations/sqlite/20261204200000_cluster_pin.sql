-- Pinned clusters (issue 40): the owner keeps the cluster on its catalog revision; a
-- rollout of its template's new revision lists it and passes it over. 0/1 like every flag.
ALTER TABLE clusters ADD COLUMN pinned BIGINT NOT NULL DEFAULT 0;
