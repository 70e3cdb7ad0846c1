-- The change logs of the alert pass and the chart roll-up hold one row per writing statement, the
-- statement's schedules (and slot hours) as arrays, instead of a row per schedule: at the top of the
-- hour a finish of 500 runs of 500 schedules appended 500 rows to each. Rows already logged are kept,
-- each as a one-element row. Current definitions: lib/db/sql/triggers/*_alert_changes_*.sql,
-- lib/db/sql/triggers/runs_chart_changes_*.sql, lib/db/sql/views/chart_changed_hours.sql.
ALTER TABLE "alert_changes" ADD COLUMN "schedule_ids" bigint[];
--> statement-breakpoint
UPDATE alert_changes SET schedule_ids = ARRAY[schedule_id];
--> statement-breakpoint
ALTER TABLE "alert_changes" ALTER COLUMN "schedule_ids" SET NOT NULL;
--> statement-breakpoint
ALTER TABLE "chart_changes" ADD COLUMN "schedule_ids" bigint[];
--> statement-breakpoint
ALTER TABLE "chart_changes" ADD COLUMN "hours" timestamp with time zone[];
--> statement-breakpoint
UPDATE chart_changes SET schedule_ids = ARRAY[schedule_id], hours = ARRAY[hour];
--> statement-breakpoint
ALTER TABLE "chart_changes" ALTER COLUMN "schedule_ids" SET NOT NULL;
--> statement-breakpoint
ALTER TABLE "chart_changes" ALTER COLUMN "hours" SET NOT NULL;
--> statement-breakpoint
ALTER TABLE "alert_changes" DROP COLUMN "schedule_id";
--> statement-breakpoint
ALTER TABLE "chart_changes" DROP COLUMN "schedule_id";
--> statement-breakpoint
ALTER TABLE "chart_changes" DROP COLUMN "hour";
--> statement-breakpoint
CREATE OR REPLACE FUNCTION runs_alert_changes_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO alert_changes (schedule_ids) SELECT array_agg(DISTINCT n.schedule_id) FROM inserted_runs n HAVING count(*) > 0;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER runs_alert_changes_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS inserted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_alert_changes_insert();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION runs_alert_changes_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO alert_changes (schedule_ids) SELECT array_agg(DISTINCT n.schedule_id) FROM updated_runs n HAVING count(*) > 0;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER runs_alert_changes_update AFTER UPDATE ON runs REFERENCING NEW TABLE AS updated_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_alert_changes_update();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION schedules_alert_changes_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO alert_changes (schedule_ids) VALUES (ARRAY[NEW.id]);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER schedules_alert_changes_update AFTER UPDATE OF "enabled", "cron", "every_seconds", "timezone", "late_after_seconds",
    "late_grace_seconds", "backlog_after_seconds", "jitter_seconds", "lease_seconds", "handler", "timeout_seconds", "deleted_at", "created_at" ON schedules
  FOR EACH ROW EXECUTE FUNCTION schedules_alert_changes_update();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION schedules_alert_changes_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO alert_changes (schedule_ids) SELECT array_agg(n.id) FROM deleted_schedules n HAVING count(*) > 0;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER schedules_alert_changes_delete AFTER DELETE ON schedules REFERENCING OLD TABLE AS deleted_schedules
  FOR EACH STATEMENT EXECUTE FUNCTION schedules_alert_changes_delete();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION runs_chart_changes_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO chart_changes (schedule_ids, hours)
  SELECT array_agg(k.schedule_id), array_agg(k.hour) FROM (
    SELECT DISTINCT x.schedule_id, date_bin('1 hour', x.scheduled_for, timestamptz 'epoch') AS hour FROM inserted_runs x WHERE x.scheduled_for IS NOT NULL) k
  HAVING count(*) > 0;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER runs_chart_changes_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS inserted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_chart_changes_insert();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION runs_chart_changes_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO chart_changes (schedule_ids, hours)
  SELECT array_agg(k.schedule_id), array_agg(k.hour) FROM (
    SELECT DISTINCT x.schedule_id, date_bin('1 hour', x.scheduled_for, timestamptz 'epoch') AS hour FROM updated_runs x WHERE x.scheduled_for IS NOT NULL) k
  HAVING count(*) > 0;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER runs_chart_changes_update AFTER UPDATE ON runs REFERENCING NEW TABLE AS updated_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_chart_changes_update();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION runs_chart_changes_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO chart_changes (schedule_ids, hours)
  SELECT array_agg(k.schedule_id), array_agg(k.hour) FROM (
    SELECT DISTINCT x.schedule_id, date_bin('1 hour', x.scheduled_for, timestamptz 'epoch') AS hour FROM deleted_runs x WHERE x.scheduled_for IS NOT NULL) k
  HAVING count(*) > 0;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER runs_chart_changes_delete AFTER DELETE ON runs REFERENCING OLD TABLE AS deleted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_chart_changes_delete();
--> statement-breakpoint
CREATE OR REPLACE VIEW chart_changed_hours AS
  SELECT u.schedule_id, u.hour FROM chart_changes c, unnest(c.schedule_ids, c.hours) AS u(schedule_id, hour);
