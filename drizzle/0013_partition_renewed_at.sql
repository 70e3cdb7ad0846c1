-- When each partition's holder last renewed (or took) its lease, on sk_now(): a holder silent for
-- a few renewal passes is presumed dead and its partition is orphaned, so every live worker ticks
-- and claims there until someone holds it again (lib/partitions/leases.ts). A dead worker's
-- pending runs then start within the schedule's stated lateness bound instead of waiting for its
-- partition lease (15 s) and its workers row (30 s) to run out.
ALTER TABLE "partition_leases" ADD COLUMN "renewed_at" timestamp with time zone;
--> statement-breakpoint
-- Leases held at upgrade count as renewed now; their holders renew them within a second anyway.
UPDATE "partition_leases" SET "renewed_at" = sk_now() WHERE "owner" IS NOT NULL;
