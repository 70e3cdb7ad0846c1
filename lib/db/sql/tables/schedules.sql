-- schedules: storage settings (the columns are in lib/db/schema.ts). The tick rewrites every due
-- schedule's next_slot_at as it materialises slots; no index of schedules names that column (the
-- tick and the list walk its copy in schedule_ticks), so where the page has room the rewrite is a
-- HOT update, with no new index entry. Room on each page keeps it so.
ALTER TABLE schedules SET (fillfactor = 80);
