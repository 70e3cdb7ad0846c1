-- schedule_ticks: storage settings (the columns are in lib/db/schema.ts). The tick rewrites a due
-- schedule's row each time it advances it (next_slot_at is in both indexes, so never in place), so
-- a minute of a large fleet leaves as many dead versions as schedules it advanced; autovacuum
-- starts early so the tick's index walk does not step over them.
ALTER TABLE schedule_ticks SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
