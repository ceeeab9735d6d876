-- The end of a wake underway whose streams fell, while the abort's grace runs: a process
-- killed in the grace continues the wake knowing when it ended.
ALTER TABLE open_wakes ADD COLUMN ended_ms INTEGER;
