-- The planner is told a handler holds about a hundredth of run_queue, so a worker's claim reads each
-- handler's due runs through run_queue_claim_handler_idx whatever the fleet
-- (lib/db/sql/tables/run_queue.sql says why). ANALYZE applies the estimate now rather than at the
-- next autoanalyze.
ALTER TABLE run_queue ALTER COLUMN handler SET (n_distinct = 100);
--> statement-breakpoint
ANALYZE run_queue;
