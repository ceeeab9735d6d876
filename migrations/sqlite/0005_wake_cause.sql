-- The release whose declared-dependency wake began this one (scaling-facts.io/depends-on);
-- null for a wake a caller or Knative began.
ALTER TABLE wakes ADD COLUMN caused_by TEXT;
