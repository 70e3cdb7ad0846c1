-- schedules_ticks_insert: every schedule has its schedule_ticks row from the statement that made
-- it, a copy of its partition and high-water mark (lib/db/schema.ts says why the copy exists), so
-- the tick finds a new schedule and the list sorted by next slot meets it. Once per statement from
-- the transition table: an apply of many schedules is one insert here. A row left by a schedule of
-- the same id is overwritten.
CREATE OR REPLACE FUNCTION schedules_ticks_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO schedule_ticks AS t (schedule_id, partition, next_slot_at, ticking, live)
  SELECT n.id, n.partition, n.next_slot_at, n.enabled AND n.deleted_at IS NULL, n.deleted_at IS NULL
  FROM inserted_schedules n ORDER BY n.id
  ON CONFLICT (schedule_id) DO UPDATE
    SET partition = excluded.partition, next_slot_at = excluded.next_slot_at, ticking = excluded.ticking, live = excluded.live;
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER schedules_ticks_insert AFTER INSERT ON schedules REFERENCING NEW TABLE AS inserted_schedules
  FOR EACH STATEMENT EXECUTE FUNCTION schedules_ticks_insert();
