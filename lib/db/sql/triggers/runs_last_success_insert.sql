-- runs_last_success_insert: a run inserted already done (an import, a test's seed, an operator's
-- SQL) is a success like a finished one: the same rule as runs_last_success_update, from the
-- inserted rows. The tick inserts pending and skipped runs only, so its statements find nothing to
-- raise and write nothing.
CREATE OR REPLACE FUNCTION runs_last_success_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH n AS (
    SELECT u.schedule_id, max(u.finished_at) AS at FROM inserted_runs u
    WHERE u.state = 'done' AND u.finished_at IS NOT NULL GROUP BY u.schedule_id),
  l AS (
    SELECT l.schedule_id, n.at FROM schedule_last_success l JOIN n USING (schedule_id)
    WHERE l.last_success_at IS NULL OR l.last_success_at < n.at
    ORDER BY l.schedule_id FOR UPDATE OF l)
  UPDATE schedule_last_success s SET last_success_at = greatest(s.last_success_at, l.at) FROM l WHERE s.schedule_id = l.schedule_id;
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER runs_last_success_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS inserted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_last_success_insert();
