ALTER TABLE "alert_channels" ADD COLUMN "tags" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "schedules" ADD COLUMN "owner" text;