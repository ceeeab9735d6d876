-- Histograms are derived from the wakes rows (the one source of truth) whenever history
-- is loaded, so a stored copy could only ever disagree with them.
DROP TABLE histograms;
