-- 0020 (timeouts) redefined run_queue_on_schedule_edit and its trigger from the definition before 0019
-- (queues), so after both the function lost the queue, the claim rule and maxConcurrent. This puts
-- back the current definition (lib/db/sql/triggers/schedules_queue_copies.sql): every copy, and
-- the trigger firing on the timeout, the queue and maxConcurrent alike.
CREATE OR REPLACE FUNCTION run_queue_on_schedule_edit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE run_queue q SET overlap = sk_claim_rule(NEW.overlap, NEW.max_concurrent, EXISTS (SELECT 1 FROM handler_limits hl WHERE hl.handler = NEW.handler)),
    schedule_name = NEW.name, lease_seconds = NEW.lease_seconds, settings_id = NEW.settings_id, handler = NEW.handler, queue = NEW.queue
  WHERE q.schedule_id = NEW.id AND (q.state = 'pending' OR q.state = 'running' OR q.state = 'dead');
  RETURN NULL;
END $$;--> statement-breakpoint

CREATE OR REPLACE TRIGGER schedules_queue_copies AFTER UPDATE OF "overlap", "name", "handler", "payload", "lease_seconds", "retry_max_attempts", "retry_base_seconds", "retry_cap_seconds", "timeout_seconds", "settings_id", "queue", "max_concurrent" ON schedules
  FOR EACH ROW
  WHEN ((OLD.overlap, OLD.name, OLD.lease_seconds, OLD.settings_id, OLD.queue, OLD.max_concurrent) IS DISTINCT FROM (NEW.overlap, NEW.name, NEW.lease_seconds, NEW.settings_id, NEW.queue, NEW.max_concurrent))
  EXECUTE FUNCTION run_queue_on_schedule_edit();
