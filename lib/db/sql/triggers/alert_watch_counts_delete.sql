-- alert_watch_counts_delete: a schedule the pass stops watching (deleted, or gone) leaves the counts
-- (functions/alert_watch_counts.sql).
CREATE OR REPLACE TRIGGER alert_watch_counts_delete AFTER DELETE ON alert_watch REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION alert_watch_counts();
