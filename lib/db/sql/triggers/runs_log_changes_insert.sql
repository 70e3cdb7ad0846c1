-- runs_log_changes_insert: a statement that inserts runs (the tick, backfill, run now, a test's or
-- an operator's SQL) logs them for the alert pass, the chart roll-up and the stored last success
-- (functions/runs_log_changes.sql), once for the statement.
CREATE OR REPLACE TRIGGER runs_log_changes_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS changed_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_log_changes();
