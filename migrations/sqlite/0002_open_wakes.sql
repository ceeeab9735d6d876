-- Wakes underway, at most one per revision: a restarted service continues them.
CREATE TABLE open_wakes (
    revision_uid TEXT PRIMARY KEY NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('initial', 'wake')),
    start_second INTEGER NOT NULL,
    requested_ms INTEGER NOT NULL
);
