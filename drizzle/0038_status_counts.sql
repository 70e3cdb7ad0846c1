CREATE TYPE "public"."health_status" AS ENUM('failing', 'late', 'backlogged', 'healthy', 'paused');--> statement-breakpoint
CREATE TABLE "alert_pass" (
	"id" integer PRIMARY KEY DEFAULT 1 NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	CONSTRAINT "alert_pass_single_row" CHECK (id = 1)
);
--> statement-breakpoint
CREATE TABLE "rule_counts" (
	"rule" text PRIMARY KEY NOT NULL,
	"n" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "schedule_counts" (
	"status" "health_status" NOT NULL,
	"handler" text NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "schedule_counts_status_handler_pk" PRIMARY KEY("status","handler")
);
--> statement-breakpoint
ALTER TABLE "alert_watch" ADD COLUMN "status" "health_status";--> statement-breakpoint
ALTER TABLE "alert_watch" ADD COLUMN "handler" text;--> statement-breakpoint
ALTER TABLE "alert_watch" ADD COLUMN "rules" text[];--> statement-breakpoint
ALTER TABLE "alert_watch" ADD COLUMN "overdue_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "alert_watch_worst_idx" ON "alert_watch" USING btree ("status","overdue_at","schedule_id") WHERE status IS NOT NULL;--> statement-breakpoint
CREATE INDEX "alert_watch_unevaluated_idx" ON "alert_watch" USING btree ("schedule_id") WHERE status IS NULL;--> statement-breakpoint
-- A new schedule is watched from the statement that makes it (schedules_alert_watch_insert), not
-- through the log of changes. The new trigger is made in this transaction, before the old one is
-- dropped, so no schedule made meanwhile goes unwatched.
-- schedules_alert_watch_insert: a new schedule is watched from the statement that makes it, due at
-- once and not evaluated yet (status null), so the first alert pass judges it (it is late once it
-- has existed longer than its late threshold without a success, even if it never runs) and until
-- then the Overview and the metrics count it as not evaluated. Once per statement from the
-- transition table: an apply of many schedules is one insert here. A row left by a schedule of the
-- same id is made due again.
CREATE OR REPLACE FUNCTION schedules_alert_watch_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO alert_watch AS w (schedule_id, check_at)
  SELECT n.id, '-infinity'::timestamptz FROM inserted_schedules n ORDER BY n.id
  ON CONFLICT (schedule_id) DO UPDATE SET check_at = excluded.check_at;
  RETURN NULL;
END $$;--> statement-breakpoint

CREATE OR REPLACE TRIGGER schedules_alert_watch_insert AFTER INSERT ON schedules REFERENCING NEW TABLE AS inserted_schedules
  FOR EACH STATEMENT EXECUTE FUNCTION schedules_alert_watch_insert();
--> statement-breakpoint
DROP TRIGGER schedules_alert_changes_insert ON schedules;--> statement-breakpoint
DROP FUNCTION schedules_alert_changes_insert();
--> statement-breakpoint
-- schedules_alert_changes_delete: a schedule deleted with its history (the row itself) is logged
-- for the alert pass like an edit, so the next pass stops watching it and it leaves the counts by
-- status; otherwise its alert_watch row would stand until the daily look.
CREATE OR REPLACE FUNCTION schedules_alert_changes_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO alert_changes (schedule_id) SELECT o.id FROM deleted_schedules o;
  RETURN NULL;
END $$;--> statement-breakpoint

CREATE OR REPLACE TRIGGER schedules_alert_changes_delete AFTER DELETE ON schedules REFERENCING OLD TABLE AS deleted_schedules
  FOR EACH STATEMENT EXECUTE FUNCTION schedules_alert_changes_delete();
--> statement-breakpoint
-- alert_watch_counts: keeps schedule_counts and rule_counts equal to what alert_watch holds, so the
-- Overview's counts by status and the metrics' schedules by status and rules holding read a handful
-- of rows instead of judging every schedule. The triggers alert_watch_counts_insert, _update and
-- _delete run it once per statement with that statement's transition tables (new_rows, old_rows).
-- A row counts once the alert pass has evaluated it (status not null): under its status and handler,
-- and for each rule it holds. A statement's change is the rows it added less the rows it removed,
-- summed by key, so an update that moves check_at alone changes no sum and writes nothing. Only the
-- keys whose sum is not 0 are written, each in key order, so two statements counting the same keys
-- lock their rows in the same order and cannot deadlock. A count that falls to 0 keeps its row.
CREATE OR REPLACE FUNCTION alert_watch_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  added alert_watch[] := '{}';
  removed alert_watch[] := '{}';
BEGIN
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    added := ARRAY(SELECT n FROM new_rows n WHERE n.status IS NOT NULL);
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    removed := ARRAY(SELECT o FROM old_rows o WHERE o.status IS NOT NULL);
  END IF;
  IF cardinality(added) = 0 AND cardinality(removed) = 0 THEN
    RETURN NULL;
  END IF;
  WITH d AS (
    SELECT a.status, a.handler, a.rules, 1 AS n FROM unnest(added) a
    UNION ALL
    SELECT r.status, r.handler, r.rules, -1 AS n FROM unnest(removed) r
  ),
  by_status AS (
    INSERT INTO schedule_counts AS c (status, handler, n)
    SELECT d.status, d.handler, sum(d.n) FROM d GROUP BY d.status, d.handler HAVING sum(d.n) <> 0 ORDER BY d.status, d.handler
    ON CONFLICT (status, handler) DO UPDATE SET n = c.n + excluded.n
  )
  INSERT INTO rule_counts AS c (rule, n)
  SELECT h.rule, sum(d.n) FROM d CROSS JOIN unnest(d.rules) AS h(rule) GROUP BY h.rule HAVING sum(d.n) <> 0 ORDER BY h.rule
  ON CONFLICT (rule) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- alert_watch_counts_insert: a row inserted already evaluated adds to the counts (functions/alert_watch_counts.sql).
-- The rows a new schedule and the drain insert are not evaluated yet and count nothing.
CREATE OR REPLACE TRIGGER alert_watch_counts_insert AFTER INSERT ON alert_watch REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION alert_watch_counts();
--> statement-breakpoint
-- alert_watch_counts_update: the pass's evaluation moves a schedule between counts
-- (functions/alert_watch_counts.sql). Once per statement: a page of 2,000 evaluations is one call.
-- No column list: a trigger with transition tables cannot have one; an update of check_at alone
-- sums to no change and writes nothing.
CREATE OR REPLACE TRIGGER alert_watch_counts_update AFTER UPDATE ON alert_watch REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION alert_watch_counts();
--> statement-breakpoint
-- alert_watch_counts_delete: a schedule the pass stops watching (deleted, or gone) leaves the counts
-- (functions/alert_watch_counts.sql).
CREATE OR REPLACE TRIGGER alert_watch_counts_delete AFTER DELETE ON alert_watch REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION alert_watch_counts();
--> statement-breakpoint
-- Existing installs: no row is evaluated yet, so every count is 0, and every live schedule is made
-- due: the first pass after the upgrade judges each one and fills the counts; until then the
-- Overview and the metrics report them as not evaluated.
INSERT INTO alert_watch AS w (schedule_id, check_at)
SELECT s.id, '-infinity'::timestamptz FROM schedules s WHERE s.deleted_at IS NULL ORDER BY s.id
ON CONFLICT (schedule_id) DO UPDATE SET check_at = excluded.check_at;
