-- runs_last_success(): logs the successes of a statement for schedule_last_success, which holds
-- the latest finished_at among each schedule's done runs so the Overview and the list sorted by
-- last success read one indexed column instead of the runs of every schedule. Shared by the two
-- statement triggers that can make a run done: runs_last_success_update (the finish, an
-- operator's SQL) and runs_last_success_insert (a run inserted already done: an import, a test's
-- seed; the tick inserts pending and skipped runs only, so its statements log nothing). Both name
-- their transition table new_runs, so one body serves.
--
-- It appends one row to last_success_changes per statement (each schedule of the statement with
-- its latest finish, as two arrays) and raises nothing itself: the alert pass drains the log into
-- schedule_last_success (lib/schedules/last-success.ts). Raising it here wrote a row and an index
-- entry per schedule of every finish, on the path of every run at the top of the hour, where
-- 400,000 schedules finish in seconds; one array row per batch costs next to nothing there.
CREATE OR REPLACE FUNCTION runs_last_success() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO last_success_changes (schedule_ids, finished_ats)
  SELECT array_agg(n.schedule_id), array_agg(n.at) FROM (
    SELECT u.schedule_id, max(u.finished_at) AS at FROM new_runs u
    WHERE u.state = 'done' AND u.finished_at IS NOT NULL GROUP BY u.schedule_id) n
  HAVING count(*) > 0;
  RETURN NULL;
END $$;
