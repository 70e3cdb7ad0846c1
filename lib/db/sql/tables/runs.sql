-- runs: storage settings (the columns are in lib/db/schema.ts). A runs row is rewritten once per
-- attempt, when the attempt ends (claims and heartbeats write run_queue instead), and that rewrite
-- is a HOT update only if the new version fits on the row's page. Room left free on every page
-- (fillfactor) keeps the finish of the top of the hour a HOT update: no index entry, no row moved to
-- another page. Rows churn, so autovacuum and analyze start early on this table.
ALTER TABLE runs SET (fillfactor = 65, autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
