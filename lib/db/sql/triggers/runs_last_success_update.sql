-- runs_last_success_update: every statement that moves runs to done logs its schedules' latest
-- finish for schedule_last_success (functions/runs_last_success.sql, from the updated rows).
CREATE OR REPLACE TRIGGER runs_last_success_update AFTER UPDATE ON runs REFERENCING NEW TABLE AS new_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_last_success();
