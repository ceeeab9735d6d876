-- Wakes underway, at most one per revision: a restarted service continues them.
CREATE TABLE open_wakes (
    revision_uid TEXT PRIMARY KEY NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('initial', 'wake')),
    start_second BIGINT NOT NULL,
    requested_ms BIGINT NOT NULL
);
