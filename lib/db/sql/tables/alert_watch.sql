-- alert_watch: storage settings (the columns are in lib/db/schema.ts). Every alert pass rewrites the
-- rows it judged (their next instant and what it found), so a pass over the whole fleet (the first,
-- or a migration that made every schedule due) leaves as many dead versions as there are schedules;
-- autovacuum starts early so the index-only reads of the counts and the watch list stay index-only.
ALTER TABLE alert_watch SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
