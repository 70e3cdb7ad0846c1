ALTER TABLE "runs" ADD COLUMN "worker_id" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "duration_ms" integer;