-- A revision may have several wakes underway: the older ended while a watch was down and
-- wait for their verdicts. Each row is one of them, numbered oldest first.
ALTER TABLE open_wakes ADD COLUMN ordinal INTEGER NOT NULL DEFAULT 0;
ALTER TABLE open_wakes DROP CONSTRAINT open_wakes_pkey;
ALTER TABLE open_wakes ADD PRIMARY KEY (revision_uid, ordinal);
