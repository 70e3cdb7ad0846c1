ALTER TYPE "public"."skip_reason" ADD VALUE 'cancelled';--> statement-breakpoint
ALTER TYPE "public"."skip_reason" ADD VALUE 'discarded';