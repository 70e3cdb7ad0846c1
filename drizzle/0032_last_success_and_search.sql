-- pg_trgm in a schema of its own: the app's schema holds only Slotkeeper's objects (lib/db/sql/definitions.test.ts).
CREATE SCHEMA IF NOT EXISTS sk_ext;--> statement-breakpoint
CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA sk_ext;--> statement-breakpoint
ALTER TABLE "schedules" ADD COLUMN "last_success_at" timestamp with time zone;--> statement-breakpoint
-- runs_last_success_update: schedules.last_success_at is the latest finished_at among the
-- schedule's done runs, so the Overview and the list sorted by last success read one indexed
-- column instead of the runs of every schedule. Every statement that moves runs to done (the
-- finish, an operator's SQL) raises it here, once per statement from the transition table: one
-- row per schedule of the batch, not a trigger call per run. It never goes down: an older run
-- finishing late, or one written again, leaves a later success standing (greatest, and no write at
-- all when nothing rises). Rows are locked in id order, so two finishes of overlapping schedules
-- cannot deadlock on each other (lib/runs/finish.ts locks them first, in the same order, so an
-- edit of a schedule and a finish of its run cannot either).
CREATE OR REPLACE FUNCTION runs_last_success_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH n AS (
    SELECT u.schedule_id, max(u.finished_at) AS at FROM updated_runs u
    WHERE u.state = 'done' AND u.finished_at IS NOT NULL GROUP BY u.schedule_id),
  l AS (
    SELECT s.id, n.at FROM schedules s JOIN n ON n.schedule_id = s.id
    WHERE s.last_success_at IS NULL OR s.last_success_at < n.at
    ORDER BY s.id FOR NO KEY UPDATE OF s)
  UPDATE schedules s SET last_success_at = greatest(s.last_success_at, l.at) FROM l WHERE s.id = l.id;
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
    SELECT s.id, n.at FROM schedules s JOIN n ON n.schedule_id = s.id
    WHERE s.last_success_at IS NULL OR s.last_success_at < n.at
    ORDER BY s.id FOR NO KEY UPDATE OF s)
  UPDATE schedules s SET last_success_at = greatest(s.last_success_at, l.at) FROM l WHERE s.id = l.id;
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE OR REPLACE TRIGGER runs_last_success_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS inserted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_last_success_insert();
--> statement-breakpoint
-- The last success of the runs already stored, after the triggers exist: creating them locks runs
-- against writes until this migration commits, so no success falls between this pass and them.
-- One pass over runs, one write per schedule that ever succeeded.
UPDATE schedules s SET last_success_at = m.at
FROM (SELECT r.schedule_id, max(r.finished_at) AS at FROM runs r WHERE r.state = 'done' AND r.finished_at IS NOT NULL GROUP BY r.schedule_id) m
WHERE s.id = m.schedule_id;--> statement-breakpoint
CREATE INDEX "schedules_last_success_idx" ON "schedules" USING btree ((coalesce(last_success_at, '-infinity'::timestamptz)),"id") WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX "schedules_search_trgm_idx" ON "schedules" USING gin ((name || ' ' || handler || ' ' || description) sk_ext.gin_trgm_ops);
