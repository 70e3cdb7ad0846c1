-- schedules_queue_copies: an edit of what the claim hands out reaches every queued run of the
-- schedule in the same transaction. The queue rows carry copies (overlap policy, name, lease, the
-- run_settings number and the handler's name: see runs_queue_insert), so every attempt that starts
-- after an edit commits sees the edit, whether the edit came from the API or an operator's SQL.
--
-- UPDATE OF lists the columns, so the tick's own updates (next_slot_at) never fire it, and the WHEN
-- clause skips edits that change none of the copies (handler, payload and retry policy arrive as
-- settings_id, which schedules_settings, a BEFORE trigger, has already set). One OR arm per state:
-- each arm is a probe of that state's index.
CREATE OR REPLACE FUNCTION run_queue_on_schedule_edit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE run_queue q SET overlap = NEW.overlap, schedule_name = NEW.name, lease_seconds = NEW.lease_seconds, settings_id = NEW.settings_id, handler = NEW.handler
  WHERE q.schedule_id = NEW.id AND (q.state = 'pending' OR q.state = 'running' OR q.state = 'dead');
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER schedules_queue_copies AFTER UPDATE OF "overlap", "name", "handler", "payload", "lease_seconds", "retry_max_attempts", "retry_base_seconds", "retry_cap_seconds", "settings_id" ON schedules
  FOR EACH ROW
  WHEN ((OLD.overlap, OLD.name, OLD.lease_seconds, OLD.settings_id) IS DISTINCT FROM (NEW.overlap, NEW.name, NEW.lease_seconds, NEW.settings_id))
  EXECUTE FUNCTION run_queue_on_schedule_edit();
