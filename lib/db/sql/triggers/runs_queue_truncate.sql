-- runs_queue_truncate: emptying runs empties run_queue with it. TRUNCATE fires no delete trigger,
-- and a queue row without its record would be claimed and then finish against nothing.
CREATE OR REPLACE FUNCTION run_queue_on_runs_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE run_queue;
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER runs_queue_truncate AFTER TRUNCATE ON runs FOR EACH STATEMENT EXECUTE FUNCTION run_queue_on_runs_truncate();
