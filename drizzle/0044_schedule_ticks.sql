-- Each schedule's high-water mark gets an indexed copy in schedule_ticks (lib/db/schema.ts says
-- why), and schedules loses its two indexes on next_slot_at, so the tick's advance of a schedule is
-- a HOT update there. The triggers are created before the copy: creating them locks schedules
-- against writes until this migration commits, so no write falls between the copy and them.
CREATE TABLE "schedule_ticks" (
	"schedule_id" bigint PRIMARY KEY NOT NULL,
	"partition" integer NOT NULL,
	"next_slot_at" timestamp with time zone NOT NULL,
	"ticking" boolean NOT NULL,
	"live" boolean NOT NULL
);
--> statement-breakpoint
DROP INDEX "schedules_tick_idx";--> statement-breakpoint
DROP INDEX "schedules_next_slot_idx";--> statement-breakpoint
ALTER TABLE "schedule_ticks" ADD CONSTRAINT "schedule_ticks_schedule_id_schedules_id_fk" FOREIGN KEY ("schedule_id") REFERENCES "public"."schedules"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "schedule_ticks_due_idx" ON "schedule_ticks" USING btree ("partition","next_slot_at") WHERE ticking;--> statement-breakpoint
CREATE INDEX "schedule_ticks_next_slot_idx" ON "schedule_ticks" USING btree ("next_slot_at","schedule_id") WHERE live;
--> statement-breakpoint
-- schedule_ticks: storage settings (the columns are in lib/db/schema.ts). The tick rewrites a due
-- schedule's row each time it advances it (next_slot_at is in both indexes, so never in place), so
-- a minute of a large fleet leaves as many dead versions as schedules it advanced; autovacuum
-- starts early so the tick's index walk does not step over them.
ALTER TABLE schedule_ticks SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02);
--> statement-breakpoint
-- schedules: storage settings (the columns are in lib/db/schema.ts). The tick rewrites every due
-- schedule's next_slot_at as it materialises slots; no index of schedules names that column (the
-- tick and the list walk its copy in schedule_ticks), so where the page has room the rewrite is a
-- HOT update, with no new index entry. Room on each page keeps it so.
ALTER TABLE schedules SET (fillfactor = 80);
--> statement-breakpoint
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
END $$;--> statement-breakpoint
CREATE OR REPLACE TRIGGER schedules_ticks_insert AFTER INSERT ON schedules REFERENCING NEW TABLE AS inserted_schedules
  FOR EACH STATEMENT EXECUTE FUNCTION schedules_ticks_insert();
--> statement-breakpoint
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
END $$;--> statement-breakpoint
CREATE OR REPLACE TRIGGER schedules_ticks_update AFTER UPDATE ON schedules REFERENCING OLD TABLE AS previous_schedules NEW TABLE AS updated_schedules
  FOR EACH STATEMENT EXECUTE FUNCTION schedules_ticks_update();
--> statement-breakpoint
INSERT INTO schedule_ticks (schedule_id, partition, next_slot_at, ticking, live)
SELECT id, partition, next_slot_at, enabled AND deleted_at IS NULL, deleted_at IS NULL FROM schedules
ON CONFLICT (schedule_id) DO NOTHING;
