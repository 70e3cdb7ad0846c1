-- schedules_ticks_update: any statement that changes a schedule's partition, high-water mark,
-- pause or deletion (the tick's advance, an edit of its timing, a pause, a delete, a repartition,
-- an operator's SQL) changes its schedule_ticks row in the same statement, so the tick's and the
-- list's walks of that table see what schedules holds. Once per statement from the transition
-- tables: the tick's batch of advances is one update here. Only rows whose copy differs are
-- written, so an edit that changes none of the four columns writes nothing. A row here is written
-- only by a statement that already holds its schedules row's lock, so two writers of one row wait
-- on schedules first and never deadlock here. A transition table rules out a column list, so every
-- update of schedules runs it; the rest of schedules' updates are edits, rare beside the tick's.
CREATE OR REPLACE FUNCTION schedules_ticks_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE schedule_ticks t SET partition = c.partition, next_slot_at = c.next_slot_at, ticking = c.ticking, live = c.live
  FROM (
    SELECT n.id, n.partition, n.next_slot_at, n.enabled AND n.deleted_at IS NULL AS ticking, n.deleted_at IS NULL AS live
    FROM updated_schedules n JOIN previous_schedules o ON o.id = n.id
    WHERE (n.partition, n.next_slot_at, n.enabled, n.deleted_at IS NULL) IS DISTINCT FROM (o.partition, o.next_slot_at, o.enabled, o.deleted_at IS NULL)
  ) c
  WHERE t.schedule_id = c.id;
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER schedules_ticks_update AFTER UPDATE ON schedules REFERENCING OLD TABLE AS previous_schedules NEW TABLE AS updated_schedules
  FOR EACH STATEMENT EXECUTE FUNCTION schedules_ticks_update();
