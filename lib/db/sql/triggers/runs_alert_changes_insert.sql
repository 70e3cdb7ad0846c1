-- runs_alert_changes_insert: a schedule that gains runs (the tick, backfill, run now, a test or an
-- operator's SQL) is one the alert pass must look at again: a new pending run moves its "would be
-- backlogged / unserved / stuck at" instants, a run inserted dead makes it failing. One row per
-- statement from the transition table, its schedules as an array: the tick inserts in bulk, and
-- this adds one small heap row (no index) to that statement.
CREATE OR REPLACE FUNCTION runs_alert_changes_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO alert_changes (schedule_ids) SELECT array_agg(DISTINCT n.schedule_id) FROM inserted_runs n HAVING count(*) > 0;
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER runs_alert_changes_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS inserted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_alert_changes_insert();
