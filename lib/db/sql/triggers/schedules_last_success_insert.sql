-- schedules_last_success_insert: every schedule has its schedule_last_success row from the
-- statement that made it (null: never succeeded), so the runs triggers only ever update a row
-- that exists, and the walk in last-success order (schedule_last_success_order_idx) meets every
-- schedule, never-succeeded ones first. Once per statement from the transition table: an apply
-- of many schedules is one insert here.
CREATE OR REPLACE FUNCTION schedules_last_success_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO schedule_last_success (schedule_id) SELECT n.id FROM inserted_schedules n ON CONFLICT (schedule_id) DO NOTHING;
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER schedules_last_success_insert AFTER INSERT ON schedules REFERENCING NEW TABLE AS inserted_schedules
  FOR EACH STATEMENT EXECUTE FUNCTION schedules_last_success_insert();
