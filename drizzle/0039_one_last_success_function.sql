-- One trigger function for both last-success triggers (their bodies were the same but for the
-- transition table's name), and alert_watch's autovacuum started early.
-- Current definitions: lib/db/sql/functions/runs_last_success.sql,
-- lib/db/sql/triggers/runs_last_success_{insert,update}.sql, lib/db/sql/tables/alert_watch.sql.
CREATE OR REPLACE FUNCTION runs_last_success() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH n AS (
    SELECT u.schedule_id, max(u.finished_at) AS at FROM new_runs u
    WHERE u.state = 'done' AND u.finished_at IS NOT NULL GROUP BY u.schedule_id),
  l AS (
    SELECT l.schedule_id, n.at FROM schedule_last_success l JOIN n USING (schedule_id)
    WHERE l.last_success_at IS NULL OR l.last_success_at < n.at
    ORDER BY l.schedule_id FOR UPDATE OF l)
  UPDATE schedule_last_success s SET last_success_at = greatest(s.last_success_at, l.at) FROM l WHERE s.schedule_id = l.schedule_id;
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
--> statement-breakpoint
ALTER TABLE alert_watch SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
