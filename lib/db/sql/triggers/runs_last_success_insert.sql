-- runs_last_success_insert: a run inserted already done is a success like a finished one: logged
-- for schedule_last_success (functions/runs_last_success.sql, from the inserted rows).
CREATE OR REPLACE TRIGGER runs_last_success_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS new_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_last_success();
