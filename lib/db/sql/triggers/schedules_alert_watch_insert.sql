-- schedules_alert_watch_insert: a new schedule is watched from the statement that makes it, due at
-- once and not evaluated yet (status null), so the first alert pass judges it (it is late once it
-- has existed longer than its late threshold without a success, even if it never runs) and until
-- then the Overview and the metrics count it as not evaluated. Once per statement from the
-- transition table: an apply of many schedules is one insert here. A row left by a schedule of the
-- same id is made due again.
CREATE OR REPLACE FUNCTION schedules_alert_watch_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO alert_watch AS w (schedule_id, check_at)
  SELECT n.id, '-infinity'::timestamptz FROM inserted_schedules n ORDER BY n.id
  ON CONFLICT (schedule_id) DO UPDATE SET check_at = excluded.check_at;
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER schedules_alert_watch_insert AFTER INSERT ON schedules REFERENCING NEW TABLE AS inserted_schedules
  FOR EACH STATEMENT EXECUTE FUNCTION schedules_alert_watch_insert();
