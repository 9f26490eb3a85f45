-- A job's large documents (the planner's DAG, the layouts before and after) in a row
-- of their own. In `jobs` they made its row megabytes long at 1,000 nodes (the DAG
-- alone was 12 MB), and every completion's counter update rewrote or re-read all of it
-- (SQLite stores a long row as a chain of overflow pages): 40 ms a completion instead
-- of well under one. They are written once at submit and read rarely.
CREATE TABLE job_documents (
    job_id           TEXT PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
    from_layout_json TEXT,
    to_layout_json   TEXT,
    -- Last: the layouts are read far more often, and reading a column means reading
    -- the row up to it.
    plan_json        TEXT NOT NULL
);

INSERT INTO job_documents (job_id, from_layout_json, to_layout_json, plan_json)
SELECT id, from_layout_json, to_layout_json, plan_json FROM jobs;

ALTER TABLE jobs DROP COLUMN plan_json;
ALTER TABLE jobs DROP COLUMN from_layout_json;
ALTER TABLE jobs DROP COLUMN to_layout_json;
