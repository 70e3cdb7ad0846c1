-- Routing: run_queue carries the handler's name, so a worker claims only the runs whose handler it
-- serves (lib/runs/claim/). Added nullable, filled from run_settings for the rows already queued,
-- then made NOT NULL; the triggers that keep the queue's copies now copy it too.
ALTER TABLE "run_queue" ADD COLUMN "handler" text;--> statement-breakpoint
UPDATE "run_queue" q SET "handler" = rs."handler" FROM "run_settings" rs WHERE rs."id" = q."settings_id";--> statement-breakpoint
ALTER TABLE "run_queue" ALTER COLUMN "handler" SET NOT NULL;--> statement-breakpoint
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
--> statement-breakpoint
-- schedules_queue_copies: an edit of what the claim hands out reaches every queued run of the
-- schedule in the same transaction. The queue rows carry copies (overlap policy, name, lease, the
-- run_settings number and the handler's name: see runs_queue_insert), so every attempt that starts
-- after an edit commits sees the edit, whether the edit came from the API or an operator's SQL.
--
-- UPDATE OF lists the columns, so the tick's own updates (next_slot_at) never fire it, and the WHEN
-- clause skips edits that change none of the copies (handler, payload and retry policy arrive as
-- settings_id, which schedules_settings, a BEFORE trigger, has already set). One OR arm per state:
-- each arm is a probe of that state's index.
CREATE OR REPLACE FUNCTION run_queue_on_schedule_edit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE run_queue q SET overlap = NEW.overlap, schedule_name = NEW.name, lease_seconds = NEW.lease_seconds, settings_id = NEW.settings_id, handler = NEW.handler
  WHERE q.schedule_id = NEW.id AND (q.state = 'pending' OR q.state = 'running' OR q.state = 'dead');
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER schedules_queue_copies AFTER UPDATE OF "overlap", "name", "handler", "payload", "lease_seconds", "retry_max_attempts", "retry_base_seconds", "retry_cap_seconds", "settings_id" ON schedules
  FOR EACH ROW
  WHEN ((OLD.overlap, OLD.name, OLD.lease_seconds, OLD.settings_id) IS DISTINCT FROM (NEW.overlap, NEW.name, NEW.lease_seconds, NEW.settings_id))
  EXECUTE FUNCTION run_queue_on_schedule_edit();
