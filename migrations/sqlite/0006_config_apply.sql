-- Applying the editor's values to the Knative Service (server-side apply): where each
-- release's apply stands, the two annotations last applied (what drift is measured
-- against), and the audit row the current desired values came from.
ALTER TABLE release_config ADD COLUMN audit_id INTEGER;
ALTER TABLE release_config ADD COLUMN apply_state TEXT NOT NULL DEFAULT 'not_applied';
ALTER TABLE release_config ADD COLUMN apply_message TEXT;
ALTER TABLE release_config ADD COLUMN apply_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE release_config ADD COLUMN apply_tried_ms INTEGER;
ALTER TABLE release_config ADD COLUMN applied_min_scale TEXT;
ALTER TABLE release_config ADD COLUMN applied_retention TEXT;
ALTER TABLE release_config ADD COLUMN applied_ms INTEGER;
-- What became of applying each audited change.
ALTER TABLE release_config_audit ADD COLUMN apply_state TEXT NOT NULL DEFAULT 'not_applied';
ALTER TABLE release_config_audit ADD COLUMN apply_message TEXT;
