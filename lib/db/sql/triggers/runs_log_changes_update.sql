-- runs_log_changes_update: a statement that moves runs' records (finish, retry, rescue of an
-- expired lease, requeue, skips, cancel) logs them for the alert pass, the chart roll-up and the
-- stored last success (functions/runs_log_changes.sql), once for the statement. The claim and the
-- heartbeat write run_queue alone, so they pay nothing here; a finish pays one trigger call for
-- its whole batch.
CREATE OR REPLACE TRIGGER runs_log_changes_update AFTER UPDATE ON runs REFERENCING NEW TABLE AS changed_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_log_changes();
