-- The list's search moves from a trigram index on schedules to a table of its own, written only when
-- a schedule is made or its name, handler or description changes (lib/db/schema.ts says why).
CREATE TABLE "schedule_search" (
	"schedule_id" bigint PRIMARY KEY NOT NULL,
	"text" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "schedule_search" ADD CONSTRAINT "schedule_search_schedule_id_schedules_id_fk" FOREIGN KEY ("schedule_id") REFERENCES "public"."schedules"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
INSERT INTO schedule_search (schedule_id, text) SELECT id, name || ' ' || handler || ' ' || description FROM schedules;--> statement-breakpoint
CREATE INDEX "schedule_search_trgm_idx" ON "schedule_search" USING gin ("text" sk_ext.gin_trgm_ops);--> statement-breakpoint
DROP INDEX "schedules_search_trgm_idx";--> statement-breakpoint
CREATE OR REPLACE FUNCTION schedules_search_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO schedule_search (schedule_id, text)
    SELECT n.id, n.name || ' ' || n.handler || ' ' || n.description FROM inserted_schedules n;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER schedules_search_insert AFTER INSERT ON schedules REFERENCING NEW TABLE AS inserted_schedules
  FOR EACH STATEMENT EXECUTE FUNCTION schedules_search_insert();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION schedules_search_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE schedule_search SET text = NEW.name || ' ' || NEW.handler || ' ' || NEW.description WHERE schedule_id = NEW.id;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER schedules_search_update AFTER UPDATE OF "name", "handler", "description" ON schedules
  FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.handler IS DISTINCT FROM NEW.handler OR OLD.description IS DISTINCT FROM NEW.description)
  EXECUTE FUNCTION schedules_search_update();
