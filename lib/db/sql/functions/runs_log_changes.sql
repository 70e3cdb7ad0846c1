-- runs_log_changes(): what every statement that inserts or updates runs (the tick, a finish, a
-- retry, the rescue of an expired lease, a requeue, skips, cancel, backfill, run now, an operator's
-- SQL) owes the passes that read runs after the fact, logged from one scan of its transition table
-- into the three logs they drain:
--
-- - alert_changes: its schedules, for the alert pass to look at again (lib/alerts/watch.ts): a new
--   pending run moves a schedule's "would be backlogged / unserved / stuck at" instants, a success
--   resolves late, a dead run makes it failing;
-- - chart_changes: its runs' (schedule, slot hour) pairs, which the chart roll-up counts again from
--   runs (lib/health/chart-hours.ts); no writer moves a run's schedule or slot, so the new rows name
--   every hour touched;
-- - last_success_changes: its done runs' schedules and finishes, which the alert pass applies to
--   schedule_last_success (lib/schedules/last-success.ts).
--
-- One row per log per statement, each list as arrays, no index: at the top of the hour a finish of
-- 500 runs adds three rows, not 1,500. The lists keep duplicates (a schedule with two runs in one
-- statement is named twice): every reader already folds them (DISTINCT, max), and folding here
-- would sort on the path of every run. The tick's runs are pending or skipped, so it logs no success.
-- Shared by runs_log_changes_insert and runs_log_changes_update, whose transition tables are both
-- named changed_runs.
CREATE OR REPLACE FUNCTION runs_log_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH a AS (
    SELECT array_agg(u.schedule_id) AS ids, array_agg(date_bin('1 hour', u.scheduled_for, timestamptz 'epoch')) AS hours,
      array_agg(u.schedule_id) FILTER (WHERE u.state = 'done' AND u.finished_at IS NOT NULL) AS done_ids,
      array_agg(u.finished_at) FILTER (WHERE u.state = 'done' AND u.finished_at IS NOT NULL) AS done_ats
    FROM changed_runs u
  ),
  alerts AS (INSERT INTO alert_changes (schedule_ids) SELECT a.ids FROM a WHERE a.ids IS NOT NULL),
  charts AS (INSERT INTO chart_changes (schedule_ids, hours) SELECT a.ids, a.hours FROM a WHERE a.ids IS NOT NULL)
  INSERT INTO last_success_changes (schedule_ids, finished_ats) SELECT a.done_ids, a.done_ats FROM a WHERE a.done_ids IS NOT NULL;
  RETURN NULL;
END $$;
