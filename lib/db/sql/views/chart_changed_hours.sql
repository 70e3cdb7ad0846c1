-- chart_changed_hours: chart_changes one (schedule, slot hour) pair a row. The triggers on runs log
-- a statement's pairs as two arrays in one row (functions/runs_log_changes.sql, triggers/runs_chart_changes_delete.sql); the
-- charts read which hours the roll-up has not counted yet through this view (lib/health/charts.ts).
CREATE OR REPLACE VIEW chart_changed_hours AS
  SELECT u.schedule_id, u.hour FROM chart_changes c, unnest(c.schedule_ids, c.hours) AS u(schedule_id, hour);
