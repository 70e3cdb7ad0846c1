CREATE TABLE "alert_changes" (
	"schedule_id" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "alert_watch" (
	"schedule_id" bigint PRIMARY KEY NOT NULL,
	"check_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "alert_watch_check_idx" ON "alert_watch" USING btree ("check_at");--> statement-breakpoint
ALTER TABLE alert_changes SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000);--> statement-breakpoint
CREATE OR REPLACE FUNCTION runs_alert_changes_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO alert_changes (schedule_id) SELECT DISTINCT n.schedule_id FROM inserted_runs n;
  RETURN NULL;
END $$;--> statement-breakpoint

CREATE OR REPLACE TRIGGER runs_alert_changes_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS inserted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_alert_changes_insert();--> statement-breakpoint
CREATE OR REPLACE FUNCTION runs_alert_changes_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO alert_changes (schedule_id) SELECT DISTINCT n.schedule_id FROM updated_runs n;
  RETURN NULL;
END $$;--> statement-breakpoint

CREATE OR REPLACE TRIGGER runs_alert_changes_update AFTER UPDATE ON runs REFERENCING NEW TABLE AS updated_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_alert_changes_update();--> statement-breakpoint
CREATE OR REPLACE FUNCTION schedules_alert_changes_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO alert_changes (schedule_id) SELECT n.id FROM inserted_schedules n;
  RETURN NULL;
END $$;--> statement-breakpoint

CREATE OR REPLACE TRIGGER schedules_alert_changes_insert AFTER INSERT ON schedules REFERENCING NEW TABLE AS inserted_schedules
  FOR EACH STATEMENT EXECUTE FUNCTION schedules_alert_changes_insert();--> statement-breakpoint
CREATE OR REPLACE FUNCTION schedules_alert_changes_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO alert_changes (schedule_id) VALUES (NEW.id);
  RETURN NULL;
END $$;--> statement-breakpoint

CREATE OR REPLACE TRIGGER schedules_alert_changes_update AFTER UPDATE OF "enabled", "cron", "every_seconds", "timezone", "late_after_seconds",
    "late_grace_seconds", "backlog_after_seconds", "jitter_seconds", "lease_seconds", "handler", "timeout_seconds", "deleted_at", "created_at" ON schedules
  FOR EACH ROW EXECUTE FUNCTION schedules_alert_changes_update();--> statement-breakpoint
-- Every schedule an alert pass still has to judge is watched from the first pass on.
INSERT INTO alert_watch (schedule_id, check_at)
SELECT s.id, '-infinity' FROM schedules s
WHERE s.deleted_at IS NULL OR EXISTS (SELECT 1 FROM alert_states a WHERE a.schedule_id = s.id AND a.firing);
