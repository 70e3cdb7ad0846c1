ALTER TABLE "api_tokens" ADD COLUMN "scope" text DEFAULT 'read' NOT NULL;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "schedule_tags" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "schedules" ADD COLUMN "tags" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
CREATE INDEX "schedules_tags_idx" ON "schedules" USING gin ("tags");--> statement-breakpoint
-- Existing tokens keep what they could do: a viewer token reads, an operator token operates.
UPDATE "api_tokens" SET "scope" = CASE "role" WHEN 'operator' THEN 'operate' ELSE 'read' END;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_scope_known" CHECK (scope IN ('read', 'operate', 'admin'));--> statement-breakpoint
ALTER TABLE "api_tokens" DROP COLUMN "role";
