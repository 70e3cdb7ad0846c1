-- The last success moves from a column of schedules to a table of its own (lib/db/schema.ts says
-- why). The runs triggers are replaced first: creating them locks runs against writes until this
-- migration commits, so no success falls between the copy below and them.
CREATE TABLE "schedule_last_success" (
	"schedule_id" bigint PRIMARY KEY NOT NULL,
	"last_success_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "schedule_last_success" ADD CONSTRAINT "schedule_last_success_schedule_id_schedules_id_fk" FOREIGN KEY ("schedule_id") REFERENCES "public"."schedules"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
-- runs_last_success_update: schedule_last_success holds the latest finished_at among each
-- schedule's done runs, so the Overview and the list sorted by last success read one indexed
-- column instead of the runs of every schedule. Every statement that moves runs to done (the
-- finish, an operator's SQL) raises it here, once per statement from the transition table: one
-- row per schedule of the batch, not a trigger call per run. It never goes down: an older run
-- finishing late, or one written again, leaves a later success standing (no write at all when
-- nothing rises). The rows are locked in schedule id order, so two finishes of overlapping
-- schedules cannot deadlock on each other; they are not the schedules rows, so a finish and an
-- edit of the schedule never wait for each other here.
CREATE OR REPLACE FUNCTION runs_last_success_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH n AS (
    SELECT u.schedule_id, max(u.finished_at) AS at FROM updated_runs u
    WHERE u.state = 'done' AND u.finished_at IS NOT NULL GROUP BY u.schedule_id),
  l AS (
    SELECT l.schedule_id, n.at FROM schedule_last_success l JOIN n USING (schedule_id)
    WHERE l.last_success_at IS NULL OR l.last_success_at < n.at
    ORDER BY l.schedule_id FOR UPDATE OF l)
  UPDATE schedule_last_success s SET last_success_at = greatest(s.last_success_at, l.at) FROM l WHERE s.schedule_id = l.schedule_id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE OR REPLACE TRIGGER runs_last_success_update AFTER UPDATE ON runs REFERENCING NEW TABLE AS updated_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_last_success_update();
--> statement-breakpoint
-- runs_last_success_insert: a run inserted already done (an import, a test's seed, an operator's
-- SQL) is a success like a finished one: the same rule as runs_last_success_update, from the
-- inserted rows. The tick inserts pending and skipped runs only, so its statements find nothing to
-- raise and write nothing.
CREATE OR REPLACE FUNCTION runs_last_success_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH n AS (
    SELECT u.schedule_id, max(u.finished_at) AS at FROM inserted_runs u
    WHERE u.state = 'done' AND u.finished_at IS NOT NULL GROUP BY u.schedule_id),
  l AS (
    SELECT l.schedule_id, n.at FROM schedule_last_success l JOIN n USING (schedule_id)
    WHERE l.last_success_at IS NULL OR l.last_success_at < n.at
    ORDER BY l.schedule_id FOR UPDATE OF l)
  UPDATE schedule_last_success s SET last_success_at = greatest(s.last_success_at, l.at) FROM l WHERE s.schedule_id = l.schedule_id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE OR REPLACE TRIGGER runs_last_success_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS inserted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_last_success_insert();
--> statement-breakpoint
-- schedules_last_success_insert: every schedule has its schedule_last_success row from the
-- statement that made it (null: never succeeded), so the runs triggers only ever update a row
-- that exists, and the walk in last-success order (schedule_last_success_order_idx) meets every
-- schedule, never-succeeded ones first. Once per statement from the transition table: an apply
-- of many schedules is one insert here.
CREATE OR REPLACE FUNCTION schedules_last_success_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO schedule_last_success (schedule_id) SELECT n.id FROM inserted_schedules n ON CONFLICT (schedule_id) DO NOTHING;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE OR REPLACE TRIGGER schedules_last_success_insert AFTER INSERT ON schedules REFERENCING NEW TABLE AS inserted_schedules
  FOR EACH STATEMENT EXECUTE FUNCTION schedules_last_success_insert();
--> statement-breakpoint
-- One row per schedule, deleted ones included (their history still has a last success).
INSERT INTO schedule_last_success (schedule_id, last_success_at) SELECT id, last_success_at FROM schedules;
--> statement-breakpoint
CREATE INDEX "schedule_last_success_order_idx" ON "schedule_last_success" USING btree ((coalesce(last_success_at, '-infinity'::timestamptz)),"schedule_id");
--> statement-breakpoint
DROP INDEX "schedules_last_success_idx";
--> statement-breakpoint
ALTER TABLE "schedules" DROP COLUMN "last_success_at";
