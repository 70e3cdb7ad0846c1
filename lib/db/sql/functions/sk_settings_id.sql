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
