-- schedules_queue_copies: an edit of what the claim hands out reaches every queued run of the
-- schedule in the same transaction. The queue rows carry copies (claim rule, name, lease, the
-- run_settings number, the handler's name and the queue: see runs_queue_insert), so every attempt that starts
-- after an edit commits sees the edit, whether the edit came from the API or an operator's SQL.
-- A change of max lateness moves the bound of the never-attempted pending runs (latest_start_at,
-- from their due time, run_after): turned on, a slot already past it is refused from then on;
-- turned off, none is.
--
-- UPDATE OF lists the columns, so the tick's own updates (next_slot_at) never fire it, and the WHEN
-- clause skips edits that change none of the copies (handler, payload, retry policy and timeout arrive as
-- settings_id, which schedules_settings, a BEFORE trigger, has already set). One OR arm per state:
-- each arm is a probe of that state's index.
CREATE OR REPLACE FUNCTION run_queue_on_schedule_edit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE run_queue q SET overlap = sk_claim_rule(NEW.overlap, NEW.max_concurrent, EXISTS (SELECT 1 FROM handler_limits hl WHERE hl.handler = NEW.handler)),
    schedule_name = NEW.name, lease_seconds = NEW.lease_seconds, handler = NEW.handler, queue = NEW.queue,
    -- A manual run's own payload survives the edit: it takes the edited handler, retry policy and
    -- timeout with its payload (only manual runs can have one, so only they read their runs row).
    settings_id = CASE WHEN q.origin <> 'manual' THEN NEW.settings_id
      ELSE coalesce((SELECT sk_settings_id(NEW.handler, r.payload_override, NEW.retry_max_attempts, NEW.retry_base_seconds, NEW.retry_cap_seconds, NEW.timeout_seconds)
                     FROM runs r WHERE r.id = q.run_id AND r.payload_override IS NOT NULL), NEW.settings_id) END,
    latest_start_at = CASE WHEN q.state = 'pending' AND q.attempts = 0 THEN sk_latest_start(q.origin, q.run_after, NEW.max_lateness_seconds) ELSE q.latest_start_at END
  WHERE q.schedule_id = NEW.id AND (q.state = 'pending' OR q.state = 'running' OR q.state = 'dead');
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER schedules_queue_copies AFTER UPDATE OF "overlap", "name", "handler", "payload", "lease_seconds", "retry_max_attempts", "retry_base_seconds", "retry_cap_seconds", "timeout_seconds", "settings_id", "queue", "max_concurrent", "max_lateness_seconds" ON schedules
  FOR EACH ROW
  WHEN ((OLD.overlap, OLD.name, OLD.lease_seconds, OLD.settings_id, OLD.queue, OLD.max_concurrent, OLD.max_lateness_seconds) IS DISTINCT FROM (NEW.overlap, NEW.name, NEW.lease_seconds, NEW.settings_id, NEW.queue, NEW.max_concurrent, NEW.max_lateness_seconds))
  EXECUTE FUNCTION run_queue_on_schedule_edit();
