-- Whether a wake underway's end is only an upper bound (a replayed fall carries no date):
-- a process killed then must not read such an end past Knative's deadline as a give-up.
ALTER TABLE open_wakes ADD COLUMN ended_undated INTEGER;
