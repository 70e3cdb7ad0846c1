-- run_queue: storage settings (the columns are in lib/db/schema.ts). Every run passes through here
-- (queued, claimed, finished: a row written, rewritten and deleted), so autovacuum and analyze start
-- early. Heartbeats touch only lease_expires_at, an unindexed column, and the room fillfactor
-- leaves on each page keeps them HOT updates. Vacuum never truncates it: the table empties and
-- fills again every hour, so the pages at its end are soon needed again, and cutting them off takes
-- an ACCESS EXCLUSIVE lock that holds up every claim, heartbeat and finish while it lasts.
ALTER TABLE run_queue SET (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02, vacuum_truncate = false);
--
-- The planner is told a handler holds about a hundredth of the queue (n_distinct 100), whatever
-- ANALYZE finds. A worker's claim reads one lateral per handler it serves, each through
-- run_queue_claim_handler_idx (lib/runs/claim/plain.ts). Where every queued run has one handler (a
-- fleet of one handler, the common case), the statistics say any handler holds them all; the
-- generic plan then walked run_queue_claim_idx in due order and read each row's handler from the
-- heap, so the lateral of every other handler the worker serves walked all the partition's due
-- runs, finding none, on every claim of the spike.
ALTER TABLE run_queue ALTER COLUMN handler SET (n_distinct = 100);
