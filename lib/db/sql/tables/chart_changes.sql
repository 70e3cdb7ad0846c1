-- chart_changes: storage settings (the columns are in lib/db/schema.ts). Appended by every
-- statement that writes runs and emptied by every roll-up, so autovacuum starts early.
ALTER TABLE chart_changes SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000);
