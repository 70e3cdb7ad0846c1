-- The live part of unfinished runs moves to run_queue; runs keeps the record. A claim now rewrites a
-- narrow queue row (one index entry) and never touches runs; a finish deletes that row and updates
-- runs in place, a HOT update: runs has no index that mentions the state any more. Before, a claim
-- and a finish each rewrote the wide runs row into five indexes between them.
CREATE TABLE "run_queue" (
	"run_id" bigint NOT NULL,
	"schedule_id" bigint NOT NULL,
	"scheduled_for" timestamp with time zone NOT NULL,
	"partition" integer NOT NULL,
	"run_after" timestamp with time zone NOT NULL,
	"state" "run_state" NOT NULL,
	"origin" "run_origin" NOT NULL,
	"attempts" integer NOT NULL,
	"max_attempts" integer NOT NULL,
	"lease_owner" text,
	"lease_expires_at" timestamp with time zone,
	"started_at" timestamp with time zone,
	"overlap" "overlap_policy" DEFAULT 'allow' NOT NULL,
	"schedule_name" text NOT NULL,
	"handler" text NOT NULL,
	"payload" jsonb NOT NULL,
	"lease_seconds" integer NOT NULL,
	"retry_max_attempts" integer NOT NULL,
	"retry_base_seconds" integer NOT NULL,
	"retry_cap_seconds" integer NOT NULL,
	CONSTRAINT "run_queue_unfinished" CHECK (state IN ('pending', 'running', 'dead'))
);
--> statement-breakpoint
-- Every unfinished run gets its queue row; a running one keeps its lease there, and its runs row
-- goes back to the record of the attempts that ended (the running attempt is the queue's).
INSERT INTO "run_queue" ("run_id", "schedule_id", "scheduled_for", "partition", "run_after", "state", "origin", "attempts", "max_attempts", "lease_owner", "lease_expires_at", "started_at",
  "overlap", "schedule_name", "handler", "payload", "lease_seconds", "retry_max_attempts", "retry_base_seconds", "retry_cap_seconds")
SELECT r."id", r."schedule_id", r."scheduled_for", r."partition",
  CASE WHEN r."state" = 'running' THEN coalesce(r."lease_expires_at", r."run_after") ELSE r."run_after" END,
  r."state", r."origin", r."attempts", r."max_attempts",
  CASE WHEN r."state" = 'running' THEN r."lease_owner" END,
  CASE WHEN r."state" = 'running' THEN r."lease_expires_at" END,
  CASE WHEN r."state" = 'running' THEN r."started_at" END,
  s."overlap", s."name", s."handler", s."payload", s."lease_seconds", s."retry_max_attempts", s."retry_base_seconds", s."retry_cap_seconds"
FROM "runs" r JOIN "schedules" s ON s."id" = r."schedule_id" WHERE r."state" IN ('pending', 'running', 'dead');
--> statement-breakpoint
UPDATE "runs" SET "state" = 'pending', "attempts" = greatest("attempts" - 1, 0), "lease_owner" = NULL, "lease_expires_at" = NULL
WHERE "state" = 'running';
--> statement-breakpoint
DROP INDEX "runs_claimable_idx";--> statement-breakpoint
DROP INDEX "runs_running_idx";--> statement-breakpoint
DROP INDEX "runs_pending_idx";--> statement-breakpoint
DROP INDEX "runs_dead_idx";--> statement-breakpoint
CREATE INDEX "run_queue_claim_idx" ON "run_queue" USING btree ("partition","run_after") WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX "run_queue_pending_idx" ON "run_queue" USING btree ("schedule_id","scheduled_for") WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX "run_queue_running_idx" ON "run_queue" USING btree ("schedule_id","scheduled_for") WHERE state = 'running';--> statement-breakpoint
CREATE INDEX "run_queue_dead_idx" ON "run_queue" USING btree ("schedule_id","scheduled_for") WHERE state = 'dead';--> statement-breakpoint
CREATE INDEX "run_queue_exclusive_idx" ON "run_queue" USING btree ("partition","run_after") WHERE state = 'pending' AND overlap <> 'allow';--> statement-breakpoint
-- The queue churns (a claim and a finish per run): vacuum it early. Heartbeats touch only
-- lease_expires_at, so room on each page keeps them HOT updates.
ALTER TABLE "run_queue" SET (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
--> statement-breakpoint
-- Any insert of an unfinished run queues it, whoever writes it (the tick, backfill, run now, an
-- operator's SQL): one set-based insert per statement from the transition table, with the
-- schedule's settings the claim hands out copied in.
CREATE FUNCTION "run_queue_on_runs_insert"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO run_queue (run_id, schedule_id, scheduled_for, partition, run_after, state, origin, attempts, max_attempts, lease_owner, lease_expires_at, started_at,
    overlap, schedule_name, handler, payload, lease_seconds, retry_max_attempts, retry_base_seconds, retry_cap_seconds)
  SELECT n.id, n.schedule_id, n.scheduled_for, n.partition, coalesce(CASE WHEN n.state = 'running' THEN n.lease_expires_at END, n.run_after),
    n.state, n.origin, n.attempts, n.max_attempts, n.lease_owner, n.lease_expires_at, n.started_at,
    s.overlap, s.name, s.handler, s.payload, s.lease_seconds, s.retry_max_attempts, s.retry_base_seconds, s.retry_cap_seconds
  FROM inserted_runs n JOIN schedules s ON s.id = n.schedule_id
  WHERE n.state IN ('pending', 'running', 'dead');
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "runs_queue_insert" AFTER INSERT ON "runs" REFERENCING NEW TABLE AS inserted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION "run_queue_on_runs_insert"();
--> statement-breakpoint
-- Deleting a run (directly, or by deleting its schedule) drops its queue row. Retention deletes
-- only settled runs, which have none: the EXISTS over the transition table is all it costs. One
-- statement per state, so each look-up is an index probe of that state's partial index.
CREATE FUNCTION "run_queue_on_runs_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM deleted_runs WHERE state IN ('pending', 'running', 'dead')) THEN
    DELETE FROM run_queue q USING deleted_runs o
      WHERE o.state IN ('pending', 'running') AND q.state = 'pending' AND q.schedule_id = o.schedule_id AND q.scheduled_for = o.scheduled_for AND q.run_id = o.id;
    DELETE FROM run_queue q USING deleted_runs o
      WHERE o.state IN ('pending', 'running') AND q.state = 'running' AND q.schedule_id = o.schedule_id AND q.scheduled_for = o.scheduled_for AND q.run_id = o.id;
    DELETE FROM run_queue q USING deleted_runs o
      WHERE o.state = 'dead' AND q.state = 'dead' AND q.schedule_id = o.schedule_id AND q.scheduled_for = o.scheduled_for AND q.run_id = o.id;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "runs_queue_delete" AFTER DELETE ON "runs" REFERENCING OLD TABLE AS deleted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION "run_queue_on_runs_delete"();
--> statement-breakpoint
-- An edit of what the claim hands out, by the API or by hand, rewrites the queued runs' copies in
-- the same transaction: every attempt that starts after it commits sees the edit. UPDATE OF lists
-- the columns, so the tick's own updates (next_slot_at) never fire it. One OR arm per state: each
-- arm is a probe of that state's index.
CREATE FUNCTION "run_queue_on_schedule_edit"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE run_queue q SET overlap = NEW.overlap, schedule_name = NEW.name, handler = NEW.handler, payload = NEW.payload,
    lease_seconds = NEW.lease_seconds, retry_max_attempts = NEW.retry_max_attempts, retry_base_seconds = NEW.retry_base_seconds,
    retry_cap_seconds = NEW.retry_cap_seconds
  WHERE q.schedule_id = NEW.id AND (q.state = 'pending' OR q.state = 'running' OR q.state = 'dead');
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "schedules_queue_copies" AFTER UPDATE OF "overlap", "name", "handler", "payload", "lease_seconds", "retry_max_attempts", "retry_base_seconds", "retry_cap_seconds" ON "schedules"
  FOR EACH ROW
  WHEN ((OLD.overlap, OLD.name, OLD.handler, OLD.payload, OLD.lease_seconds, OLD.retry_max_attempts, OLD.retry_base_seconds, OLD.retry_cap_seconds)
    IS DISTINCT FROM (NEW.overlap, NEW.name, NEW.handler, NEW.payload, NEW.lease_seconds, NEW.retry_max_attempts, NEW.retry_base_seconds, NEW.retry_cap_seconds))
  EXECUTE FUNCTION "run_queue_on_schedule_edit"();
--> statement-breakpoint
-- TRUNCATE fires no delete trigger: emptying runs empties the queue with it.
CREATE FUNCTION "run_queue_on_runs_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE run_queue;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "runs_queue_truncate" AFTER TRUNCATE ON "runs" FOR EACH STATEMENT EXECUTE FUNCTION "run_queue_on_runs_truncate"();
--> statement-breakpoint
-- A run as it stands now: the record in runs, with the live part of a running run from the queue
-- (state, token, lease, worker, start). Pending and dead runs read the same in both tables. One
-- primary-key or history probe of runs, then one probe of run_queue_running_idx, per row.
CREATE VIEW "run_status" AS
  SELECT r."id", r."schedule_id", r."partition", r."scheduled_for", r."due_at", r."origin", r."slot_seq", r."created_at",
    coalesce(q."state", r."state") AS "state",
    coalesce(q."attempts", r."attempts") AS "attempts",
    r."max_attempts",
    r."run_after",
    q."lease_owner",
    q."lease_expires_at",
    coalesce(q."started_at", r."started_at") AS "started_at",
    CASE WHEN q."state" = 'running' THEN NULL ELSE r."finished_at" END AS "finished_at",
    coalesce(q."lease_owner", r."worker_id") AS "worker_id",
    CASE WHEN q."state" = 'running' THEN NULL ELSE r."duration_ms" END AS "duration_ms",
    r."last_error", r."skip_reason", r."skipped_until", r."skipped_count", r."coalesced_into"
  FROM "runs" r
  LEFT JOIN "run_queue" q ON r."state" IN ('pending', 'running') AND q."state" = 'running'
    AND q."schedule_id" = r."schedule_id" AND q."scheduled_for" = r."scheduled_for" AND q."run_id" = r."id";
