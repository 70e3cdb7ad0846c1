-- alert_watch_counts_update: the pass's evaluation moves a schedule between counts
-- (functions/alert_watch_counts.sql). Once per statement: a page of 2,000 evaluations is one call.
-- No column list: a trigger with transition tables cannot have one; an update of check_at alone
-- sums to no change and writes nothing.
CREATE OR REPLACE TRIGGER alert_watch_counts_update AFTER UPDATE ON alert_watch REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION alert_watch_counts();
