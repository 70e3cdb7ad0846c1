-- schedules: storage settings (the columns are in lib/db/schema.ts). The tick rewrites every due
-- schedule's next_slot_at as it materialises slots; room on each page keeps those updates HOT.
ALTER TABLE schedules SET (fillfactor = 80);
