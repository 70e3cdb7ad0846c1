-- runs.lease_owner and runs.lease_expires_at have held nothing since 0006 moved the lease to
-- run_queue, and nothing reads them: dropped. A runs row never says 'running' (that state lives on
-- the queue row, with its lease); the check says so for every row written from now on (NOT VALID:
-- no scan of the table under its lock, and 0006 already moved every running record to pending).
ALTER TABLE "runs" DROP COLUMN "lease_owner";--> statement-breakpoint
ALTER TABLE "runs" DROP COLUMN "lease_expires_at";--> statement-breakpoint
ALTER TABLE "runs" ADD CONSTRAINT "runs_state_recorded" CHECK (state <> 'running') NOT VALID;--> statement-breakpoint
-- The insert trigger no longer reads the dropped columns: a run is queued pending or dead, and only
-- a claim makes a queue row running (lib/db/sql/triggers/runs_queue_insert.sql).
CREATE OR REPLACE FUNCTION run_queue_on_runs_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO run_queue (run_id, schedule_id, scheduled_for, partition, run_after, state, origin, attempts, max_attempts, started_at,
    overlap, schedule_name, lease_seconds, settings_id)
  SELECT n.id, n.schedule_id, n.scheduled_for, n.partition, n.run_after, n.state, n.origin, n.attempts, n.max_attempts, n.started_at,
    s.overlap, s.name, s.lease_seconds, s.settings_id
  FROM inserted_runs n JOIN schedules s ON s.id = n.schedule_id
  WHERE n.state IN ('pending', 'dead');
  RETURN NULL;
END $$;
