-- run_attempts: the complete attempt history of every run. A run that succeeded on its first
-- attempt, the common case, writes no attempts row (its finish stays one bulk UPDATE of runs); its
-- one attempt is on the run row (worker_id, started_at, finished_at, duration_ms), and this view
-- adds it back. Read it with run_id = … (both branches are primary-key probes).
CREATE OR REPLACE VIEW run_attempts AS
  SELECT a."run_id", a."attempt", a."worker_id", a."started_at", a."finished_at", a."outcome", a."error", a."duration_ms"
  FROM "attempts" a
  UNION ALL
  SELECT r."id", r."attempts", coalesce(r."worker_id", 'unknown'), coalesce(r."started_at", r."finished_at"), r."finished_at",
    'succeeded'::attempt_outcome, NULL::text, r."duration_ms"
  FROM "runs" r
  WHERE r."state" = 'done' AND r."attempts" > 0
    AND NOT EXISTS (SELECT 1 FROM "attempts" x WHERE x."run_id" = r."id" AND x."attempt" = r."attempts");
