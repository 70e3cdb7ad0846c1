-- schedules_search_update: an edit of a schedule's name, handler or description rewrites its
-- schedule_search row. Only an UPDATE naming one of the three fires it, and only a changed value
-- writes: the tick's rewrite of next_slot_at on every due schedule never reaches the trigram index.
CREATE OR REPLACE FUNCTION schedules_search_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE schedule_search SET text = NEW.name || ' ' || NEW.handler || ' ' || NEW.description WHERE schedule_id = NEW.id;
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER schedules_search_update AFTER UPDATE OF "name", "handler", "description" ON schedules
  FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.handler IS DISTINCT FROM NEW.handler OR OLD.description IS DISTINCT FROM NEW.description)
  EXECUTE FUNCTION schedules_search_update();
