-- schedules_alert_changes_insert: a new schedule is watched from its first alert pass on (it is late
-- once it has existed longer than its late threshold without a success, even if it never runs).
CREATE OR REPLACE FUNCTION schedules_alert_changes_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO alert_changes (schedule_id) SELECT n.id FROM inserted_schedules n;
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER schedules_alert_changes_insert AFTER INSERT ON schedules REFERENCING NEW TABLE AS inserted_schedules
  FOR EACH STATEMENT EXECUTE FUNCTION schedules_alert_changes_insert();
