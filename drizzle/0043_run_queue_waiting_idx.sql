-- The fleet's pending runs by slot, for the Overview (lib/health/fleet-summary.ts): its oldest
-- waiting schedules are a walk of this index that stops, and its wait histogram an index-only
-- range of it, where both sorted every due pending run, which at the top of the hour is hundreds
-- of thousands.
CREATE INDEX "run_queue_waiting_idx" ON "run_queue" USING btree ("scheduled_for","schedule_id") WHERE state = 'pending';
