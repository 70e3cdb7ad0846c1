-- runs_chart_changes_delete: the slot hours of deleted runs (retention, a schedule's future runs on an edit) are listed
-- for the chart roll-up (lib/health/chart-hours.ts), which counts them again from runs. One
-- set-based insert per statement, one small heap row per (schedule, hour) it touched and no index:
-- on the finish path this is the whole cost of the pre-aggregated charts.
CREATE OR REPLACE FUNCTION runs_chart_changes_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO chart_changes (schedule_id, hour)
  SELECT DISTINCT x.schedule_id, date_bin('1 hour', x.scheduled_for, timestamptz 'epoch') FROM deleted_runs x WHERE x.scheduled_for IS NOT NULL;
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER runs_chart_changes_delete AFTER DELETE ON runs REFERENCING OLD TABLE AS deleted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_chart_changes_delete();
