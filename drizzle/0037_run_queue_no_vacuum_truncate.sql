-- run_queue is never truncated by vacuum (lib/db/sql/tables/run_queue.sql says why).
ALTER TABLE run_queue SET (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02, vacuum_truncate = false);
