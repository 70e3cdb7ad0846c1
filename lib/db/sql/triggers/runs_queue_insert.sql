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
-- copies current. The queue's name is copied too (a worker claims only runs of the queues it
-- serves), and overlap holds the claim rule (sk_claim_rule): 'limited' sends a run of a schedule with
-- a maxConcurrent, or of a handler with a fleet-wide limit (handler_limits), to the limited claim.
-- A never-attempted pending slot gets latest_start_at (sk_latest_start: due + max lateness), past
-- which the claim refuses its first attempt; its run_after is its due time (slot + jitter).
CREATE OR REPLACE FUNCTION run_queue_on_runs_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO run_queue (run_id, schedule_id, scheduled_for, partition, run_after, state, origin, attempts, max_attempts, started_at,
    overlap, schedule_name, lease_seconds, settings_id, handler, queue, latest_start_at)
  SELECT n.id, n.schedule_id, n.scheduled_for, n.partition, n.run_after, n.state, n.origin, n.attempts, n.max_attempts, n.started_at,
    sk_claim_rule(s.overlap, s.max_concurrent, EXISTS (SELECT 1 FROM handler_limits hl WHERE hl.handler = s.handler)),
    s.name, s.lease_seconds,
    -- A manual run with its own payload (run now with a payload) gets the settings row of that
    -- payload with the schedule's handler, retry policy and timeout; every other run the schedule's.
    CASE WHEN n.payload_override IS NULL THEN s.settings_id
      ELSE sk_settings_id(s.handler, n.payload_override, s.retry_max_attempts, s.retry_base_seconds, s.retry_cap_seconds, s.timeout_seconds) END,
    s.handler, s.queue,
    CASE WHEN n.state = 'pending' AND n.attempts = 0 THEN sk_latest_start(n.origin, n.run_after, s.max_lateness_seconds) END
  FROM inserted_runs n JOIN schedules s ON s.id = n.schedule_id
  WHERE n.state IN ('pending', 'dead');
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER runs_queue_insert AFTER INSERT ON runs REFERENCING NEW TABLE AS inserted_runs
  FOR EACH STATEMENT EXECUTE FUNCTION run_queue_on_runs_insert();
