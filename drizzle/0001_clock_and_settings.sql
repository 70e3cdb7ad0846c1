-- One clock decides: every due / expired / late comparison calls sk_now(). Tests stand the clock
-- at an instant (frozen_at) or shift it; production leaves sk_clock at (shift 0, frozen_at null).
INSERT INTO "sk_clock" ("id", "shift", "frozen_at") VALUES (1, interval '0', NULL) ON CONFLICT DO NOTHING;
--> statement-breakpoint
INSERT INTO "cluster" ("id", "partitions") VALUES (1, 16) ON CONFLICT DO NOTHING;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION sk_now() RETURNS timestamptz
  LANGUAGE sql STABLE PARALLEL SAFE
AS $$
  SELECT coalesce(c.frozen_at, now() + c.shift) FROM sk_clock c WHERE c.id = 1
  UNION ALL SELECT now()
  LIMIT 1
$$;
--> statement-breakpoint
-- Runs churn: every claim, heartbeat and finish rewrites a row. Free space in each page lets the
-- heartbeat (which touches only lease_expires_at, an unindexed column) stay a HOT update, and a
-- lower autovacuum threshold keeps dead tuples out of the claim index's way.
ALTER TABLE "runs" SET (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
--> statement-breakpoint
ALTER TABLE "schedules" SET (fillfactor = 80);
