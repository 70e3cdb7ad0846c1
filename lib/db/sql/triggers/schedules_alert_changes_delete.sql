-- schedules_alert_changes_delete: a schedule deleted with its history (the row itself) is logged
-- for the alert pass like an edit, so the next pass stops watching it and it leaves the counts by
-- status; otherwise its alert_watch row would stand until the daily look.
CREATE OR REPLACE FUNCTION schedules_alert_changes_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO alert_changes (schedule_ids) SELECT array_agg(n.id) FROM deleted_schedules n HAVING count(*) > 0;
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER schedules_alert_changes_delete AFTER DELETE ON schedules REFERENCING OLD TABLE AS deleted_schedules
  FOR EACH STATEMENT EXECUTE FUNCTION schedules_alert_changes_delete();
