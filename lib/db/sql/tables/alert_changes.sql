-- alert_changes: storage settings (the columns are in lib/db/schema.ts). Rows are appended by the
-- run and schedule writers' triggers and deleted by every alert pass, so the table is all churn:
-- autovacuum starts early to keep it a few pages.
ALTER TABLE alert_changes SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000);
