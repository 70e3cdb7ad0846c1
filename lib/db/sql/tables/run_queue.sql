-- run_queue: storage settings (the columns are in lib/db/schema.ts). Every run passes through here
-- (queued, claimed, finished: a row written, rewritten and deleted), so autovacuum and analyze start
-- early. Heartbeats touch only lease_expires_at, an unindexed column, and the room fillfactor
-- leaves on each page keeps them HOT updates. Vacuum never truncates it: the table empties and
-- fills again every hour, so the pages at its end are soon needed again, and cutting them off takes
-- an ACCESS EXCLUSIVE lock that holds up every claim, heartbeat and finish while it lasts.
ALTER TABLE run_queue SET (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02, vacuum_truncate = false);
