-- Since when the service has watched the cluster: its first process's first sync. A
-- revision created later started while the service existed, so its initial start is the
-- service's to record, even one that went by wholly while no process watched. One row;
-- the earliest time told wins.
CREATE TABLE watching (
    id       INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
    since_ms BIGINT NOT NULL
);
