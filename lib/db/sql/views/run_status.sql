-- run_status: a run as it stands now. The record in runs, overlaid with the live part of a running
-- run from run_queue (state, token, lease, worker, start): a claim writes only the queue row, so
-- runs.state reads 'pending' for a run that is running. Every read of a run's state (the console,
-- the API, metrics, tests) goes through this view; pending and dead runs read the same in both tables.
--
-- Per row: one primary-key or history probe of runs, then one probe of run_queue_running_idx.
CREATE OR REPLACE VIEW run_status AS
  SELECT r."id", r."schedule_id", r."partition", r."scheduled_for", r."due_at", r."origin", r."slot_seq", r."created_at",
    coalesce(q."state", r."state") AS "state",
    coalesce(q."attempts", r."attempts") AS "attempts",
    r."max_attempts",
    r."run_after",
    q."lease_owner",
    q."lease_expires_at",
    coalesce(q."started_at", r."started_at") AS "started_at",
    CASE WHEN q."state" = 'running' THEN NULL ELSE r."finished_at" END AS "finished_at",
    coalesce(q."lease_owner", r."worker_id") AS "worker_id",
    CASE WHEN q."state" = 'running' THEN NULL ELSE r."duration_ms" END AS "duration_ms",
    r."last_error", r."skip_reason", r."skipped_until", r."skipped_count", r."coalesced_into"
  FROM "runs" r
  LEFT JOIN "run_queue" q ON r."state" IN ('pending', 'running') AND q."state" = 'running'
    AND q."schedule_id" = r."schedule_id" AND q."scheduled_for" = r."scheduled_for" AND q."run_id" = r."id";
