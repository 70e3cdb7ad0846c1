-- runs_queue_delete: a deleted run leaves no queue row behind. Deleting a run directly, or by
-- deleting its schedule (ON DELETE CASCADE), drops its run_queue row in the same statement, so the
-- queue never holds a row whose record is gone (run_queue has no foreign key: a key checked on
-- every claim would cost the hot path).
--
-- Retention deletes only settled runs, which have no queue row: the EXISTS over the transition
-- table is all it costs them. One DELETE per state, so each look-up is a probe of that state's
-- partial index (run_queue has no index on run_id alone).
CREATE OR REPLACE FUNCTION run_queue_on_runs_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM deleted_runs WHERE state IN ('pending', 'running', 'dead')) THEN
    DELETE FROM run_queue q USING deleted_runs o
      WHERE o.state IN ('pending', 'running') AND q.state = 'pending' AND q.schedule_id = o.schedule_id AND q.scheduled_for = o.scheduled_for AND q.run_id = o.id;
    DELETE FROM run_queue q USING deleted_runs o
      WHERE o.state IN ('pending', 'running') AND q.state = 'running' AND q.schedule_id = o.schedule_id AND q.scheduled_for = o.scheduled_for AND q.run_id = o.id;
    DELETE FROM run_queue q USING deleted_runs o
      WHERE o.state = 'dead' AND q.state = 'dead' AND q.schedule_id = o.schedule_id AND q.scheduled_for = o.scheduled_for AND q.run_id = o.id;
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER runs_queue_delete AFTER DELETE ON runs REFERENCING OLD TABLE AS deleted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION run_queue_on_runs_delete();
