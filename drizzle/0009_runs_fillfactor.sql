-- A runs row is rewritten once per attempt, when it ends (claims and heartbeats write run_queue),
-- and the rewrite is a HOT update only if the new version fits on the row's page. At fillfactor
-- 80, 18 % of the 400,000-run spike's finishes did not fit: each of those wrote the row on
-- another page plus an entry in both of runs' indexes, and a full-page image of every index page
-- it touched first after a checkpoint. At 65 the share of HOT finishes was 99.6 % and the spike's
-- WAL fell from ~825 to ~740 bytes per run, and the table ended no larger (79 MB against 77 MB:
-- the updates that did not fit had grown it by as much). At 50 it was 100 % and 101 MB.
-- Measured with npm run bench (pg_stat_user_tables and walBytesPerRun). Only pages filled from
-- now on keep the room; existing ones are left as they are.
ALTER TABLE "runs" SET (fillfactor = 65);
