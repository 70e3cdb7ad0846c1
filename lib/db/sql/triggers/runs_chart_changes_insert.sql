-- runs_chart_changes_insert: the slot hours of inserted runs (the tick, backfill, run now) are listed
-- for the chart roll-up (lib/health/chart-hours.ts), which counts them again from runs. One row
-- per statement, its (schedule, hour) pairs as two arrays, no index: on the finish path this is the
-- whole cost of the pre-aggregated charts, one small row per batch.
CREATE OR REPLACE FUNCTION runs_chart_changes_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO chart_changes (schedule_ids, hours)
  SELECT array_agg(k.schedule_id), array_agg(k.hour) FROM (
    SELECT DISTINCT x.schedule_id, date_bin('1 hour', x.scheduled_for, timestamptz 'epoch') AS hour FROM inserted_runs x WHERE x.scheduled_for IS NOT NULL) k
  HAVING count(*) > 0;
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER runs_chart_changes_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS inserted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_chart_changes_insert();
