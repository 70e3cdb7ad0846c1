-- Every schedule's runs newest first, for the Runs page (lib/runs/history.ts): one index walk
-- that stops after a page, where the list read a page of every schedule's history and merged them
-- (minutes at 2,000,000 schedules). Built inside the migration's transaction, not CONCURRENTLY:
-- on a large runs table it holds writes to runs while it builds.
CREATE INDEX "runs_time_idx" ON "runs" USING btree ("scheduled_for" DESC NULLS LAST,"slot_seq" DESC NULLS LAST,"id" DESC NULLS LAST);
