CREATE TABLE "last_success_changes" (
	"schedule_ids" bigint[] NOT NULL,
	"finished_ats" timestamp with time zone[] NOT NULL
);
--> statement-breakpoint
-- Successes are logged per statement and applied to schedule_last_success by the alert pass, one
-- trigger function serving both runs triggers; alert_watch's autovacuum starts early. Current
-- definitions: lib/db/sql/functions/runs_last_success.sql,
-- lib/db/sql/triggers/runs_last_success_{insert,update}.sql,
-- lib/db/sql/tables/{last_success_changes,alert_watch}.sql.
ALTER TABLE last_success_changes SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000);
--> statement-breakpoint
ALTER TABLE alert_watch SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION runs_last_success() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO last_success_changes (schedule_ids, finished_ats)
  SELECT array_agg(n.schedule_id), array_agg(n.at) FROM (
    SELECT u.schedule_id, max(u.finished_at) AS at FROM new_runs u
    WHERE u.state = 'done' AND u.finished_at IS NOT NULL GROUP BY u.schedule_id) n
  HAVING count(*) > 0;
  RETURN NULL;
END $$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS runs_last_success_insert ON runs;
--> statement-breakpoint
DROP TRIGGER IF EXISTS runs_last_success_update ON runs;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER runs_last_success_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS new_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_last_success();
--> statement-breakpoint
CREATE OR REPLACE TRIGGER runs_last_success_update AFTER UPDATE ON runs REFERENCING NEW TABLE AS new_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_last_success();
--> statement-breakpoint
DROP FUNCTION IF EXISTS runs_last_success_insert();
--> statement-breakpoint
DROP FUNCTION IF EXISTS runs_last_success_update();
