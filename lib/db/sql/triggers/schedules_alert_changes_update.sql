-- schedules_alert_changes_update: an edit of what a schedule's rule verdicts depend on (timing,
-- thresholds, pause, handler, lease, timeout, deletion) marks it for the alert pass. Only those
-- columns fire it: the tick's rewrite of next_slot_at on every due schedule does not.
CREATE OR REPLACE FUNCTION schedules_alert_changes_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO alert_changes (schedule_ids) VALUES (ARRAY[NEW.id]);
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER schedules_alert_changes_update AFTER UPDATE OF "enabled", "cron", "every_seconds", "timezone", "late_after_seconds",
    "late_grace_seconds", "backlog_after_seconds", "jitter_seconds", "lease_seconds", "handler", "timeout_seconds", "deleted_at", "created_at" ON schedules
  FOR EACH ROW EXECUTE FUNCTION schedules_alert_changes_update();
