-- A queue row named its settings by copying them (handler, payload, retry policy), and a claim
-- rewrote those copies with every row it took and then grouped its runs by them (a jsonb and three
-- texts hashed per run). Now every distinct handler + payload + retry policy is one run_settings
-- row, a schedule points at its row, and a queue row carries that number: the claim rewrites a
-- narrower row, groups by numbers, and reads one run_settings row per group. Claim statement time
-- per run (one connection, 150 interleaved 500-run batches each, with the slot also read through
-- date_part, lib/runs/claim.ts): 14.7–15.9 → 12.1–13.3 µs.
CREATE TABLE "run_settings" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "run_settings_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"handler" text NOT NULL,
	"payload" jsonb NOT NULL,
	"retry_max_attempts" integer NOT NULL,
	"retry_base_seconds" integer NOT NULL,
	"retry_cap_seconds" integer NOT NULL
);
--> statement-breakpoint
-- The payload by its digest: jsonb prints one way for one value, and a large payload would not fit
-- an index entry. Through convert_to, not a cast to bytea: text::bytea reads the text as bytea's
-- escape syntax, and a payload holding a backslash (any JSON string with a quote in it) failed.
-- convert_to is only STABLE (it depends on the database's encoding, which a database never
-- changes), so this wrapper says IMMUTABLE for the index to accept it.
CREATE FUNCTION "sk_payload_digest"(payload jsonb) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT sha256(convert_to(payload::text, 'UTF8')) $$;
--> statement-breakpoint
CREATE UNIQUE INDEX "run_settings_key" ON "run_settings" USING btree ("handler","retry_max_attempts","retry_base_seconds","retry_cap_seconds",sk_payload_digest("payload"));--> statement-breakpoint
-- The row for these settings, made if there is none. Read first, so the common case (settings some
-- schedule already has) writes nothing; the insert then the second read cover a concurrent writer
-- of the same settings (its insert commits first: ours conflicts and does nothing, the read sees it).
-- The read compares the payload itself too: two payloads with one digest would make the write fail
-- rather than hand one schedule the other's payload.
CREATE FUNCTION "sk_settings_id"(p_handler text, p_payload jsonb, p_max int, p_base int, p_cap int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  found bigint;
BEGIN
  FOR i IN 1..2 LOOP
    SELECT id INTO found FROM run_settings
      WHERE handler = p_handler AND retry_max_attempts = p_max AND retry_base_seconds = p_base AND retry_cap_seconds = p_cap
        AND sk_payload_digest(payload) = sk_payload_digest(p_payload) AND payload = p_payload;
    IF found IS NOT NULL THEN
      RETURN found;
    END IF;
    INSERT INTO run_settings (handler, payload, retry_max_attempts, retry_base_seconds, retry_cap_seconds)
      VALUES (p_handler, p_payload, p_max, p_base, p_cap)
      ON CONFLICT DO NOTHING
      RETURNING id INTO found;
    IF found IS NOT NULL THEN
      RETURN found;
    END IF;
  END LOOP;
  RAISE EXCEPTION 'run_settings: no row for handler % after inserting one (is this transaction REPEATABLE READ?)', p_handler;
END $$;
--> statement-breakpoint
INSERT INTO "run_settings" ("handler", "payload", "retry_max_attempts", "retry_base_seconds", "retry_cap_seconds")
  SELECT "handler", "payload", "retry_max_attempts", "retry_base_seconds", "retry_cap_seconds" FROM "schedules"
  UNION
  SELECT "handler", "payload", "retry_max_attempts", "retry_base_seconds", "retry_cap_seconds" FROM "run_queue";
--> statement-breakpoint
ALTER TABLE "schedules" ADD COLUMN "settings_id" bigint;--> statement-breakpoint
UPDATE "schedules" s SET "settings_id" = rs."id" FROM "run_settings" rs
  WHERE (rs."handler", rs."payload", rs."retry_max_attempts", rs."retry_base_seconds", rs."retry_cap_seconds") = (s."handler", s."payload", s."retry_max_attempts", s."retry_base_seconds", s."retry_cap_seconds");
--> statement-breakpoint
ALTER TABLE "run_queue" ADD COLUMN "settings_id" bigint;--> statement-breakpoint
UPDATE "run_queue" q SET "settings_id" = rs."id" FROM "run_settings" rs
  WHERE (rs."handler", rs."payload", rs."retry_max_attempts", rs."retry_base_seconds", rs."retry_cap_seconds") = (q."handler", q."payload", q."retry_max_attempts", q."retry_base_seconds", q."retry_cap_seconds");
--> statement-breakpoint
ALTER TABLE "run_queue" ALTER COLUMN "settings_id" SET NOT NULL;--> statement-breakpoint
-- Every insert of a schedule, and every edit of its handler, payload or retry policy, points it at
-- its settings' row, whoever writes it (the API, a test, an operator's SQL).
CREATE FUNCTION "schedules_settings"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- A settings_id written by hand is put right too.
  IF TG_OP = 'INSERT' OR NEW.settings_id IS NULL OR NEW.settings_id IS DISTINCT FROM OLD.settings_id
     OR (OLD.handler, OLD.payload, OLD.retry_max_attempts, OLD.retry_base_seconds, OLD.retry_cap_seconds)
        IS DISTINCT FROM (NEW.handler, NEW.payload, NEW.retry_max_attempts, NEW.retry_base_seconds, NEW.retry_cap_seconds) THEN
    NEW.settings_id := sk_settings_id(NEW.handler, NEW.payload, NEW.retry_max_attempts, NEW.retry_base_seconds, NEW.retry_cap_seconds);
  END IF;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "schedules_settings" BEFORE INSERT OR UPDATE OF "handler", "payload", "retry_max_attempts", "retry_base_seconds", "retry_cap_seconds", "settings_id" ON "schedules"
  FOR EACH ROW EXECUTE FUNCTION "schedules_settings"();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "run_queue_on_runs_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO run_queue (run_id, schedule_id, scheduled_for, partition, run_after, state, origin, attempts, max_attempts, lease_owner, lease_expires_at, started_at,
    overlap, schedule_name, lease_seconds, settings_id)
  SELECT n.id, n.schedule_id, n.scheduled_for, n.partition, coalesce(CASE WHEN n.state = 'running' THEN n.lease_expires_at END, n.run_after),
    n.state, n.origin, n.attempts, n.max_attempts, n.lease_owner, n.lease_expires_at, n.started_at,
    s.overlap, s.name, s.lease_seconds, s.settings_id
  FROM inserted_runs n JOIN schedules s ON s.id = n.schedule_id
  WHERE n.state IN ('pending', 'running', 'dead');
  RETURN NULL;
END $$;
--> statement-breakpoint
-- An edit of what the claim hands out rewrites the queued runs' copies in the same transaction, as
-- before; the settings arrive as their row's number (set by schedules_settings, which runs first).
CREATE OR REPLACE FUNCTION "run_queue_on_schedule_edit"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE run_queue q SET overlap = NEW.overlap, schedule_name = NEW.name, lease_seconds = NEW.lease_seconds, settings_id = NEW.settings_id
  WHERE q.schedule_id = NEW.id AND (q.state = 'pending' OR q.state = 'running' OR q.state = 'dead');
  RETURN NULL;
END $$;
--> statement-breakpoint
DROP TRIGGER "schedules_queue_copies" ON "schedules";--> statement-breakpoint
CREATE TRIGGER "schedules_queue_copies" AFTER UPDATE OF "overlap", "name", "handler", "payload", "lease_seconds", "retry_max_attempts", "retry_base_seconds", "retry_cap_seconds", "settings_id" ON "schedules"
  FOR EACH ROW
  WHEN ((OLD.overlap, OLD.name, OLD.lease_seconds, OLD.settings_id) IS DISTINCT FROM (NEW.overlap, NEW.name, NEW.lease_seconds, NEW.settings_id))
  EXECUTE FUNCTION "run_queue_on_schedule_edit"();
--> statement-breakpoint
ALTER TABLE "run_queue" DROP COLUMN "handler";--> statement-breakpoint
ALTER TABLE "run_queue" DROP COLUMN "payload";--> statement-breakpoint
ALTER TABLE "run_queue" DROP COLUMN "retry_max_attempts";--> statement-breakpoint
ALTER TABLE "run_queue" DROP COLUMN "retry_base_seconds";--> statement-breakpoint
ALTER TABLE "run_queue" DROP COLUMN "retry_cap_seconds";
