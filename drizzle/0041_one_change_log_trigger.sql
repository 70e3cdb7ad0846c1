-- The three statement triggers every insert and update of runs fired (the alert pass's, the chart
-- roll-up's and the stored last success's logs), each scanning the transition table and two of them
-- sorting it, become one: one call and one scan per statement, writing the same three logs, with
-- duplicates left to their readers. Current definitions: lib/db/sql/functions/runs_log_changes.sql,
-- lib/db/sql/triggers/runs_log_changes_*.sql.
DROP TRIGGER IF EXISTS runs_alert_changes_insert ON runs;
--> statement-breakpoint
DROP TRIGGER IF EXISTS runs_alert_changes_update ON runs;
--> statement-breakpoint
DROP TRIGGER IF EXISTS runs_chart_changes_insert ON runs;
--> statement-breakpoint
DROP TRIGGER IF EXISTS runs_chart_changes_update ON runs;
--> statement-breakpoint
DROP TRIGGER IF EXISTS runs_last_success_insert ON runs;
--> statement-breakpoint
DROP TRIGGER IF EXISTS runs_last_success_update ON runs;
--> statement-breakpoint
DROP FUNCTION IF EXISTS runs_alert_changes_insert();
--> statement-breakpoint
DROP FUNCTION IF EXISTS runs_alert_changes_update();
--> statement-breakpoint
DROP FUNCTION IF EXISTS runs_chart_changes_insert();
--> statement-breakpoint
DROP FUNCTION IF EXISTS runs_chart_changes_update();
--> statement-breakpoint
DROP FUNCTION IF EXISTS runs_last_success();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION runs_log_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH a AS (
    SELECT array_agg(u.schedule_id) AS ids, array_agg(date_bin('1 hour', u.scheduled_for, timestamptz 'epoch')) AS hours,
      array_agg(u.schedule_id) FILTER (WHERE u.state = 'done' AND u.finished_at IS NOT NULL) AS done_ids,
      array_agg(u.finished_at) FILTER (WHERE u.state = 'done' AND u.finished_at IS NOT NULL) AS done_ats
    FROM changed_runs u
  ),
  alerts AS (INSERT INTO alert_changes (schedule_ids) SELECT a.ids FROM a WHERE a.ids IS NOT NULL),
  charts AS (INSERT INTO chart_changes (schedule_ids, hours) SELECT a.ids, a.hours FROM a WHERE a.ids IS NOT NULL)
  INSERT INTO last_success_changes (schedule_ids, finished_ats) SELECT a.done_ids, a.done_ats FROM a WHERE a.done_ids IS NOT NULL;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER runs_log_changes_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS changed_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_log_changes();
--> statement-breakpoint
CREATE OR REPLACE TRIGGER runs_log_changes_update AFTER UPDATE ON runs REFERENCING NEW TABLE AS changed_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_log_changes();
