-- runs_last_success(): schedule_last_success holds the latest finished_at among each schedule's
-- done runs, so the Overview and the list sorted by last success read one indexed column instead
-- of the runs of every schedule. Shared by the two statement triggers that can make a run done:
-- runs_last_success_update (the finish, an operator's SQL) and runs_last_success_insert (a run
-- inserted already done: an import, a test's seed; the tick inserts pending and skipped runs only,
-- so its statements find nothing to raise). Both name their transition table new_runs, so one
-- body serves: one row per schedule of the statement, not a call per run. It never goes down: an
-- older run finishing late, or one written again, leaves a later success standing (no write at all
-- when nothing rises). The rows are locked in schedule id order, so two finishes of overlapping
-- schedules cannot deadlock on each other; they are not the schedules rows, so a finish and an
-- edit of the schedule never wait for each other here.
CREATE OR REPLACE FUNCTION runs_last_success() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH n AS (
    SELECT u.schedule_id, max(u.finished_at) AS at FROM new_runs u
    WHERE u.state = 'done' AND u.finished_at IS NOT NULL GROUP BY u.schedule_id),
  l AS (
    SELECT l.schedule_id, n.at FROM schedule_last_success l JOIN n USING (schedule_id)
    WHERE l.last_success_at IS NULL OR l.last_success_at < n.at
    ORDER BY l.schedule_id FOR UPDATE OF l)
  UPDATE schedule_last_success s SET last_success_at = greatest(s.last_success_at, l.at) FROM l WHERE s.schedule_id = l.schedule_id;
  RETURN NULL;
END $$;
