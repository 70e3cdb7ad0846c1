ALTER TABLE "schedules" ADD COLUMN "managed_by" text;--> statement-breakpoint
ALTER TABLE "schedules" ADD COLUMN "managed_spec" jsonb;--> statement-breakpoint
ALTER TABLE "schedules" ADD COLUMN "paused_note" text;--> statement-breakpoint
ALTER TABLE "schedules" ADD COLUMN "resume_at" timestamp with time zone;