-- Why the pods of a wake underway were not serving, as they last showed: a process killed
-- before Knative gave up still names the cause once the pods are gone.
ALTER TABLE open_wakes ADD COLUMN trouble_reason TEXT;
ALTER TABLE open_wakes ADD COLUMN trouble_message TEXT;
