-- alert_watch_counts_insert: a row inserted already evaluated adds to the counts (functions/alert_watch_counts.sql).
-- The rows a new schedule and the drain insert are not evaluated yet and count nothing.
CREATE OR REPLACE TRIGGER alert_watch_counts_insert AFTER INSERT ON alert_watch REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION alert_watch_counts();
