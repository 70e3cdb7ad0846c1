-- schedules_search_insert: every schedule has its schedule_search row from the statement that made
-- it, so the list's search (lib/schedules/list.ts) finds it at once. Once per statement from the
-- transition table: an apply or a seed of many schedules is one insert here.
CREATE OR REPLACE FUNCTION schedules_search_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO schedule_search (schedule_id, text)
    SELECT n.id, n.name || ' ' || n.handler || ' ' || n.description FROM inserted_schedules n;
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER schedules_search_insert AFTER INSERT ON schedules REFERENCING NEW TABLE AS inserted_schedules
  FOR EACH STATEMENT EXECUTE FUNCTION schedules_search_insert();
