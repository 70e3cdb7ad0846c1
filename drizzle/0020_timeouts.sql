DROP INDEX "run_settings_key";--> statement-breakpoint
ALTER TABLE "run_settings" ADD COLUMN "timeout_seconds" integer;--> statement-breakpoint
ALTER TABLE "schedules" ADD COLUMN "timeout_seconds" integer;--> statement-breakpoint
CREATE UNIQUE INDEX "run_settings_key" ON "run_settings" USING btree ("handler","retry_max_attempts","retry_base_seconds","retry_cap_seconds",sk_payload_digest("payload"),coalesce("timeout_seconds", 0));--> statement-breakpoint
ALTER TABLE "schedules" ADD CONSTRAINT "schedules_timeout_positive" CHECK (timeout_seconds IS NULL OR timeout_seconds >= 1);--> statement-breakpoint
-- Timeouts (schedules.timeout_seconds): the timeout is one of the settings a claim hands a worker,
-- so run_settings carries it (the key above counts no timeout as 0) and the functions and triggers
-- that pick a schedule's run_settings row take it into account. Existing rows have no timeout.
-- sk_settings_id(handler, payload, max, base, cap, timeout): the run_settings row for these settings,
-- made if there is none. Called by the schedules_settings trigger on every insert and relevant edit
-- of a schedule, so every schedule (and through it every queued run) names exactly one row of shared
-- settings, whoever writes the schedule. The timeout (null: none) is one of them: the claim hands it
-- to the worker with the handler, payload and retry policy.
--
-- Read first, so the common case (settings some schedule already has) writes nothing; the insert
-- then the second read cover a concurrent writer of the same settings (its insert commits first:
-- ours conflicts and does nothing, the read sees it). The read compares the payload itself too:
-- two payloads with one digest make the write fail rather than hand one schedule the other's
-- payload. run_settings rows are never changed or deleted, so a worker may hold on to one.
CREATE OR REPLACE FUNCTION sk_settings_id(p_handler text, p_payload jsonb, p_max int, p_base int, p_cap int, p_timeout int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  found bigint;
BEGIN
  FOR i IN 1..2 LOOP
    SELECT id INTO found FROM run_settings
      WHERE handler = p_handler AND retry_max_attempts = p_max AND retry_base_seconds = p_base AND retry_cap_seconds = p_cap
        AND sk_payload_digest(payload) = sk_payload_digest(p_payload) AND coalesce(timeout_seconds, 0) = coalesce(p_timeout, 0) AND payload = p_payload;
    IF found IS NOT NULL THEN
      RETURN found;
    END IF;
    INSERT INTO run_settings (handler, payload, retry_max_attempts, retry_base_seconds, retry_cap_seconds, timeout_seconds)
      VALUES (p_handler, p_payload, p_max, p_base, p_cap, p_timeout)
      ON CONFLICT DO NOTHING
      RETURNING id INTO found;
    IF found IS NOT NULL THEN
      RETURN found;
    END IF;
  END LOOP;
  RAISE EXCEPTION 'run_settings: no row for handler % after inserting one (is this transaction REPEATABLE READ?)', p_handler;
END $$;
--> statement-breakpoint
-- schedules_settings: every schedule names the run_settings row of its handler, payload, retry
-- policy and timeout. On every insert, and on every edit of those columns, the row's settings_id is
-- set from sk_settings_id, whoever writes the schedule (the API, a test, an operator's SQL), so no
-- writer supplies it and none can get it wrong; a settings_id written by hand is put right too. The
-- queued runs follow through schedules_queue_copies, which runs after this.
CREATE OR REPLACE FUNCTION schedules_settings() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- A settings_id written by hand is put right too.
  IF TG_OP = 'INSERT' OR NEW.settings_id IS NULL OR NEW.settings_id IS DISTINCT FROM OLD.settings_id
     OR (OLD.handler, OLD.payload, OLD.retry_max_attempts, OLD.retry_base_seconds, OLD.retry_cap_seconds, OLD.timeout_seconds)
        IS DISTINCT FROM (NEW.handler, NEW.payload, NEW.retry_max_attempts, NEW.retry_base_seconds, NEW.retry_cap_seconds, NEW.timeout_seconds) THEN
    NEW.settings_id := sk_settings_id(NEW.handler, NEW.payload, NEW.retry_max_attempts, NEW.retry_base_seconds, NEW.retry_cap_seconds, NEW.timeout_seconds);
  END IF;
  RETURN NEW;
END $$;

CREATE OR REPLACE TRIGGER schedules_settings BEFORE INSERT OR UPDATE OF "handler", "payload", "retry_max_attempts", "retry_base_seconds", "retry_cap_seconds", "timeout_seconds", "settings_id" ON schedules
  FOR EACH ROW EXECUTE FUNCTION schedules_settings();
--> statement-breakpoint
DROP FUNCTION sk_settings_id(text, jsonb, int, int, int);--> statement-breakpoint
-- schedules_queue_copies: an edit of what the claim hands out reaches every queued run of the
-- schedule in the same transaction. The queue rows carry copies (overlap policy, name, lease, the
-- run_settings number and the handler's name: see runs_queue_insert), so every attempt that starts
-- after an edit commits sees the edit, whether the edit came from the API or an operator's SQL.
--
-- UPDATE OF lists the columns, so the tick's own updates (next_slot_at) never fire it, and the WHEN
-- clause skips edits that change none of the copies (handler, payload, retry policy and timeout arrive as
-- settings_id, which schedules_settings, a BEFORE trigger, has already set). One OR arm per state:
-- each arm is a probe of that state's index.
CREATE OR REPLACE FUNCTION run_queue_on_schedule_edit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE run_queue q SET overlap = NEW.overlap, schedule_name = NEW.name, lease_seconds = NEW.lease_seconds, settings_id = NEW.settings_id, handler = NEW.handler
  WHERE q.schedule_id = NEW.id AND (q.state = 'pending' OR q.state = 'running' OR q.state = 'dead');
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER schedules_queue_copies AFTER UPDATE OF "overlap", "name", "handler", "payload", "lease_seconds", "retry_max_attempts", "retry_base_seconds", "retry_cap_seconds", "timeout_seconds", "settings_id" ON schedules
  FOR EACH ROW
  WHEN ((OLD.overlap, OLD.name, OLD.lease_seconds, OLD.settings_id) IS DISTINCT FROM (NEW.overlap, NEW.name, NEW.lease_seconds, NEW.settings_id))
  EXECUTE FUNCTION run_queue_on_schedule_edit();
