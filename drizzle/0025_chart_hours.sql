CREATE TABLE "chart_changes" (
	"schedule_id" bigint NOT NULL,
	"hour" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "chart_hours" (
	"schedule_id" bigint NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"done" integer DEFAULT 0 NOT NULL,
	"dead" integer DEFAULT 0 NOT NULL,
	"skipped" integer DEFAULT 0 NOT NULL,
	"waiting" integer DEFAULT 0 NOT NULL,
	"last_done_at" timestamp with time zone,
	CONSTRAINT "chart_hours_schedule_id_hour_pk" PRIMARY KEY("schedule_id","hour")
);
--> statement-breakpoint
CREATE TABLE "chart_waits" (
	"schedule_id" bigint NOT NULL,
	"hour" timestamp with time zone NOT NULL,
	"sample_at" timestamp with time zone NOT NULL,
	"seconds" double precision NOT NULL,
	CONSTRAINT "chart_waits_schedule_id_hour_sample_at_pk" PRIMARY KEY("schedule_id","hour","sample_at")
);
--> statement-breakpoint
ALTER TABLE chart_changes SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000);--> statement-breakpoint
CREATE OR REPLACE FUNCTION runs_chart_changes_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO chart_changes (schedule_id, hour)
  SELECT DISTINCT x.schedule_id, date_bin('1 hour', x.scheduled_for, timestamptz 'epoch') FROM inserted_runs x WHERE x.scheduled_for IS NOT NULL;
  RETURN NULL;
END $$;--> statement-breakpoint

CREATE OR REPLACE TRIGGER runs_chart_changes_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS inserted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_chart_changes_insert();--> statement-breakpoint
CREATE OR REPLACE FUNCTION runs_chart_changes_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO chart_changes (schedule_id, hour)
  SELECT DISTINCT x.schedule_id, date_bin('1 hour', x.scheduled_for, timestamptz 'epoch') FROM updated_runs x WHERE x.scheduled_for IS NOT NULL;
  RETURN NULL;
END $$;--> statement-breakpoint

CREATE OR REPLACE TRIGGER runs_chart_changes_update AFTER UPDATE ON runs REFERENCING NEW TABLE AS updated_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_chart_changes_update();--> statement-breakpoint
CREATE OR REPLACE FUNCTION runs_chart_changes_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO chart_changes (schedule_id, hour)
  SELECT DISTINCT x.schedule_id, date_bin('1 hour', x.scheduled_for, timestamptz 'epoch') FROM deleted_runs x WHERE x.scheduled_for IS NOT NULL;
  RETURN NULL;
END $$;--> statement-breakpoint

CREATE OR REPLACE TRIGGER runs_chart_changes_delete AFTER DELETE ON runs REFERENCING OLD TABLE AS deleted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_chart_changes_delete();--> statement-breakpoint
CREATE OR REPLACE FUNCTION runs_chart_hours_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE chart_hours, chart_waits, chart_changes;
  RETURN NULL;
END $$;--> statement-breakpoint

CREATE OR REPLACE TRIGGER runs_chart_hours_truncate AFTER TRUNCATE ON runs FOR EACH STATEMENT EXECUTE FUNCTION runs_chart_hours_truncate();--> statement-breakpoint
-- Every hour that has runs is counted by the first roll-up.
INSERT INTO chart_changes (schedule_id, hour)
SELECT DISTINCT r.schedule_id, date_bin('1 hour', r.scheduled_for, timestamptz 'epoch') FROM runs r WHERE r.scheduled_for IS NOT NULL;
