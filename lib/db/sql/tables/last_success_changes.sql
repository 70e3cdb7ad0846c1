-- last_success_changes: storage settings (the columns are in lib/db/schema.ts). Rows are appended
-- by every statement that makes runs done and deleted by every alert pass, so the table is all
-- churn: autovacuum starts early to keep it a few pages.
ALTER TABLE last_success_changes SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000);
