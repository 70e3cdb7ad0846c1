-- schedules: storage settings (the columns are in lib/db/schema.ts). The tick rewrites every due
-- schedule's next_slot_at as it materialises slots. That column is in two indexes (the tick's and
-- the list's by next slot), so the rewrite is never HOT: each is a new entry in every index of
-- schedules. Room on each page lets the new version stay on its page, next to its neighbours.
ALTER TABLE schedules SET (fillfactor = 80);
