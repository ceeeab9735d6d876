-- A revision may have several wakes underway: the older ended while a watch was down and
-- wait for their verdicts. Each row is one of them, numbered oldest first.
CREATE TABLE open_wakes_several (
    revision_uid    TEXT NOT NULL,
    ordinal         INTEGER NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('initial', 'wake')),
    start_second    INTEGER NOT NULL,
    requested_ms    INTEGER NOT NULL,
    ended_ms        INTEGER,
    trouble_reason  TEXT,
    trouble_message TEXT,
    ended_undated   INTEGER,
    PRIMARY KEY (revision_uid, ordinal)
);
INSERT INTO open_wakes_several
    SELECT revision_uid, 0, kind, start_second, requested_ms, ended_ms, trouble_reason,
           trouble_message, ended_undated
    FROM open_wakes;
DROP TABLE open_wakes;
ALTER TABLE open_wakes_several RENAME TO open_wakes;
