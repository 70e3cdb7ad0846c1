-- Queues and concurrency limits (#23). A schedule names its queue (default 'default'), copied to
-- run_queue like its handler, so a worker claims only runs of the queues it serves, each with a
-- concurrency of its own (SLOTKEEPER_QUEUES). A schedule may cap how many of its runs run at once
-- (max_concurrent), and a handler may have a fleet-wide cap (handler_limits). The queue row's
-- overlap column becomes the claim rule (claim_rule: the overlap policies plus 'limited'), so the
-- plain claim keeps its one filter, overlap = 'allow', and every limited run goes to the claim that
-- counts (lib/runs/claim/exclusive.ts).
ALTER TABLE "schedules" ADD COLUMN "queue" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "schedules" ADD COLUMN "max_concurrent" integer;--> statement-breakpoint
ALTER TABLE "schedules" ADD CONSTRAINT "schedules_max_concurrent_positive" CHECK (max_concurrent IS NULL OR max_concurrent >= 1);--> statement-breakpoint
ALTER TABLE "run_queue" ADD COLUMN "queue" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "workers" ADD COLUMN "queues" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
CREATE TABLE "handler_limits" (
	"handler" text PRIMARY KEY NOT NULL,
	"max_concurrent" integer NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "handler_limits_positive" CHECK (max_concurrent >= 1)
);--> statement-breakpoint
CREATE TYPE "public"."claim_rule" AS ENUM('allow', 'forbid', 'skip', 'limited');--> statement-breakpoint
DROP INDEX "run_queue_exclusive_idx";--> statement-breakpoint
ALTER TABLE "run_queue" ALTER COLUMN "overlap" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "run_queue" ALTER COLUMN "overlap" SET DATA TYPE "public"."claim_rule" USING "overlap"::text::"public"."claim_rule";--> statement-breakpoint
ALTER TABLE "run_queue" ALTER COLUMN "overlap" SET DEFAULT 'allow';--> statement-breakpoint
CREATE INDEX "run_queue_exclusive_idx" ON "run_queue" USING btree ("partition","run_after") WHERE state = 'pending' AND overlap <> 'allow';--> statement-breakpoint
-- sk_claim_rule(overlap, max_concurrent, handler_limited): which claim statement takes a queued run,
-- as run_queue.overlap (a claim_rule). 'allow' runs go to the plain claim of the top of the hour,
-- which looks at nothing but the row; every other value goes to the limited claim
-- (lib/runs/claim/exclusive.ts), which counts the schedule's and the handler's running runs first.
-- A schedule's own overlap policy wins (forbid and skip are a limit of one); an overlap-allowing
-- schedule is 'limited' when it has a maxConcurrent or its handler has a fleet-wide limit
-- (handler_limits). The one statement of the rule: the queue triggers (runs_queue_insert,
-- schedules_queue_copies), a change of a handler's limit (lib/handlers/limits.ts) and the queue's
-- consistency check call it.
CREATE OR REPLACE FUNCTION sk_claim_rule(overlap overlap_policy, max_concurrent int, handler_limited boolean) RETURNS claim_rule LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT CASE WHEN overlap <> 'allow' THEN overlap::text::claim_rule
    WHEN max_concurrent IS NOT NULL OR coalesce(handler_limited, false) THEN 'limited'::claim_rule
    ELSE 'allow'::claim_rule END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION run_queue_on_runs_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO run_queue (run_id, schedule_id, scheduled_for, partition, run_after, state, origin, attempts, max_attempts, started_at,
    overlap, schedule_name, lease_seconds, settings_id, handler, queue)
  SELECT n.id, n.schedule_id, n.scheduled_for, n.partition, n.run_after, n.state, n.origin, n.attempts, n.max_attempts, n.started_at,
    sk_claim_rule(s.overlap, s.max_concurrent, EXISTS (SELECT 1 FROM handler_limits hl WHERE hl.handler = s.handler)),
    s.name, s.lease_seconds, s.settings_id, s.handler, s.queue
  FROM inserted_runs n JOIN schedules s ON s.id = n.schedule_id
  WHERE n.state IN ('pending', 'dead');
  RETURN NULL;
END $$;

--> statement-breakpoint
CREATE OR REPLACE TRIGGER runs_queue_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS inserted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION run_queue_on_runs_insert();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION run_queue_on_schedule_edit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE run_queue q SET overlap = sk_claim_rule(NEW.overlap, NEW.max_concurrent, EXISTS (SELECT 1 FROM handler_limits hl WHERE hl.handler = NEW.handler)),
    schedule_name = NEW.name, lease_seconds = NEW.lease_seconds, settings_id = NEW.settings_id, handler = NEW.handler, queue = NEW.queue
  WHERE q.schedule_id = NEW.id AND (q.state = 'pending' OR q.state = 'running' OR q.state = 'dead');
  RETURN NULL;
END $$;

--> statement-breakpoint
CREATE OR REPLACE TRIGGER schedules_queue_copies AFTER UPDATE OF "overlap", "name", "handler", "payload", "lease_seconds", "retry_max_attempts", "retry_base_seconds", "retry_cap_seconds", "settings_id", "queue", "max_concurrent" ON schedules
  FOR EACH ROW
  WHEN ((OLD.overlap, OLD.name, OLD.lease_seconds, OLD.settings_id, OLD.queue, OLD.max_concurrent) IS DISTINCT FROM (NEW.overlap, NEW.name, NEW.lease_seconds, NEW.settings_id, NEW.queue, NEW.max_concurrent))
  EXECUTE FUNCTION run_queue_on_schedule_edit();
