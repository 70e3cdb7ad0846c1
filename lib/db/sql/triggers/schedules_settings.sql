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
