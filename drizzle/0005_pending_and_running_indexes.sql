-- A claim moves a run from pending to running. Every index whose condition the new row version
-- meets gets an entry (a state change is never a HOT update), and runs_unfinished_idx (pending OR
-- running) was one of them. Now pending runs and running runs each have their own index per
-- schedule, and the overlap checks ask each; a claim adds three index entries instead of four.
DROP INDEX "runs_unfinished_idx";--> statement-breakpoint
DROP INDEX "runs_running_idx";--> statement-breakpoint
CREATE INDEX "runs_pending_idx" ON "runs" USING btree ("schedule_id","scheduled_for") WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX "runs_running_idx" ON "runs" USING btree ("schedule_id","scheduled_for") WHERE state = 'running';