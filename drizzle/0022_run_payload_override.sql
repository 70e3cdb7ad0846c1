-- Run now with a payload: a manual run may carry its own payload (runs.payload_override), which
-- the claim hands out in place of the schedule's, through the run_settings row of that payload.
-- The queue's insert and copy triggers learn it (current definitions in lib/db/sql/triggers/).
ALTER TABLE "runs" ADD COLUMN "payload_override" jsonb;--> statement-breakpoint
CREATE OR REPLACE FUNCTION run_queue_on_runs_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO run_queue (run_id, schedule_id, scheduled_for, partition, run_after, state, origin, attempts, max_attempts, started_at,
    overlap, schedule_name, lease_seconds, settings_id, handler, queue)
  SELECT n.id, n.schedule_id, n.scheduled_for, n.partition, n.run_after, n.state, n.origin, n.attempts, n.max_attempts, n.started_at,
    sk_claim_rule(s.overlap, s.max_concurrent, EXISTS (SELECT 1 FROM handler_limits hl WHERE hl.handler = s.handler)),
    s.name, s.lease_seconds,
    -- A manual run with its own payload (run now with a payload) gets the settings row of that
    -- payload with the schedule's handler, retry policy and timeout; every other run the schedule's.
    CASE WHEN n.payload_override IS NULL THEN s.settings_id
      ELSE sk_settings_id(s.handler, n.payload_override, s.retry_max_attempts, s.retry_base_seconds, s.retry_cap_seconds, s.timeout_seconds) END,
    s.handler, s.queue
  FROM inserted_runs n JOIN schedules s ON s.id = n.schedule_id
  WHERE n.state IN ('pending', 'dead');
  RETURN NULL;
END $$;--> statement-breakpoint

CREATE OR REPLACE TRIGGER runs_queue_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS inserted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION run_queue_on_runs_insert();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION run_queue_on_schedule_edit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE run_queue q SET overlap = sk_claim_rule(NEW.overlap, NEW.max_concurrent, EXISTS (SELECT 1 FROM handler_limits hl WHERE hl.handler = NEW.handler)),
    schedule_name = NEW.name, lease_seconds = NEW.lease_seconds, handler = NEW.handler, queue = NEW.queue,
    -- A manual run's own payload survives the edit: it takes the edited handler, retry policy and
    -- timeout with its payload (only manual runs can have one, so only they read their runs row).
    settings_id = CASE WHEN q.origin <> 'manual' THEN NEW.settings_id
      ELSE coalesce((SELECT sk_settings_id(NEW.handler, r.payload_override, NEW.retry_max_attempts, NEW.retry_base_seconds, NEW.retry_cap_seconds, NEW.timeout_seconds)
                     FROM runs r WHERE r.id = q.run_id AND r.payload_override IS NOT NULL), NEW.settings_id) END
  WHERE q.schedule_id = NEW.id AND (q.state = 'pending' OR q.state = 'running' OR q.state = 'dead');
  RETURN NULL;
END $$;--> statement-breakpoint

CREATE OR REPLACE TRIGGER schedules_queue_copies AFTER UPDATE OF "overlap", "name", "handler", "payload", "lease_seconds", "retry_max_attempts", "retry_base_seconds", "retry_cap_seconds", "timeout_seconds", "settings_id", "queue", "max_concurrent" ON schedules
  FOR EACH ROW
  WHEN ((OLD.overlap, OLD.name, OLD.lease_seconds, OLD.settings_id, OLD.queue, OLD.max_concurrent) IS DISTINCT FROM (NEW.overlap, NEW.name, NEW.lease_seconds, NEW.settings_id, NEW.queue, NEW.max_concurrent))
  EXECUTE FUNCTION run_queue_on_schedule_edit();
