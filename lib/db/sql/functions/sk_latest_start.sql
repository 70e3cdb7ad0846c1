-- sk_latest_start(origin, due, max_lateness_seconds): the latest instant a slot's first attempt may
-- start, as run_queue.latest_start_at; NULL when nothing bounds it. Max lateness is a promise about
-- slots: a slot (origin schedule or catch_up) due at `due` whose first attempt has not started by
-- due + max lateness never runs and is skipped `too_late`. Manual runs and backfills were asked for
-- explicitly (a backfill is late by design) and have no bound, nor has a schedule without a max
-- lateness. The claim refuses a never-attempted run once latest_start_at < sk_now()
-- (lib/runs/claim/too-late.ts); retries are exempt, their first attempt started in time.
--
-- The same rule as isTooLate in lib/schedules/missed.ts (a slot is too late when due < now − max
-- lateness, i.e. now > due + max lateness; exactly at the bound it may still start), which the tick
-- and the lateness pass decide with; lib/runs/claim/too-late.test.ts runs one table of worked cases
-- against both. Called where a queue row gets or changes its bound: runs_queue_insert,
-- schedules_queue_copies, the queue's consistency check and migration 0031's backfill.
CREATE OR REPLACE FUNCTION sk_latest_start(origin run_origin, due timestamptz, max_lateness_seconds int) RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT CASE WHEN origin IN ('schedule', 'catch_up') THEN due + make_interval(secs => max_lateness_seconds) END $$;
