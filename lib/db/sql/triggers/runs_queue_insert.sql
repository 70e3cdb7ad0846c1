-- runs_queue_insert: every unfinished run has its queue row. A run lives in two tables: `runs`
-- holds its record and `run_queue` its live part (claimable when, running where, the current
-- token), and the claim, heartbeat and finish work on the queue row alone. Any INSERT of a pending
-- or dead run queues it, whoever writes it (the tick, backfill, run now, a test, an operator's
-- SQL), so no writer can forget the queue. A run is never inserted running (runs_state_recorded):
-- only a claim makes a queue row running, with the lease it takes.
--
-- One set-based insert per statement, from the transition table: the tick inserts runs in bulk.
-- The queue row carries what the claim hands a worker, copied from the schedule (overlap policy,
-- name, lease, and the handler, payload and retry policy as the number of their run_settings row,
-- with the handler's name beside it), so the claim reads nothing but the queue row: a worker claims
-- only runs whose handler it serves by a filter on that name. schedules_queue_copies keeps those
-- copies current.
CREATE OR REPLACE FUNCTION run_queue_on_runs_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO run_queue (run_id, schedule_id, scheduled_for, partition, run_after, state, origin, attempts, max_attempts, started_at,
    overlap, schedule_name, lease_seconds, settings_id, handler)
  SELECT n.id, n.schedule_id, n.scheduled_for, n.partition, n.run_after, n.state, n.origin, n.attempts, n.max_attempts, n.started_at,
    s.overlap, s.name, s.lease_seconds, s.settings_id, s.handler
  FROM inserted_runs n JOIN schedules s ON s.id = n.schedule_id
  WHERE n.state IN ('pending', 'dead');
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER runs_queue_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS inserted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION run_queue_on_runs_insert();
