-- A first-attempt success, the common case, writes no attempts row: the run row holds that attempt
-- (worker_id, started_at, finished_at, duration_ms). The finish stays one UPDATE per batch instead
-- of an UPDATE plus an INSERT with a foreign-key check per run (measured: scripts/bench/profile.ts).
-- Runs finished before this migration get the worker of their latest attempt.
UPDATE "runs" r SET "worker_id" = coalesce(r."lease_owner", a."worker_id"), "duration_ms" = a."duration_ms"
FROM (SELECT DISTINCT ON ("run_id") "run_id", "worker_id", "duration_ms" FROM "attempts" ORDER BY "run_id", "attempt" DESC) a
WHERE a."run_id" = r."id";
--> statement-breakpoint
UPDATE "runs" SET "worker_id" = "lease_owner" WHERE "worker_id" IS NULL AND "lease_owner" IS NOT NULL;
--> statement-breakpoint
-- The complete attempt history: every attempts row, plus the one attempt of each run that
-- succeeded without leaving a row. Read it with run_id = … (both branches are primary-key probes).
CREATE VIEW "run_attempts" AS
  SELECT a."run_id", a."attempt", a."worker_id", a."started_at", a."finished_at", a."outcome", a."error", a."duration_ms"
  FROM "attempts" a
  UNION ALL
  SELECT r."id", r."attempts", coalesce(r."worker_id", 'unknown'), coalesce(r."started_at", r."finished_at"), r."finished_at",
    'succeeded'::attempt_outcome, NULL::text, r."duration_ms"
  FROM "runs" r
  WHERE r."state" = 'done' AND r."attempts" > 0
    AND NOT EXISTS (SELECT 1 FROM "attempts" x WHERE x."run_id" = r."id" AND x."attempt" = r."attempts");
