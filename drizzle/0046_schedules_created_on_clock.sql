-- A schedule's created_at and updated_at default to the database clock (sk_now()), the clock every
-- judgement reads: a schedule without a success is judged late by its age, and one inserted without
-- the columns on a moved clock was born on the wall clock instead.
ALTER TABLE "schedules" ALTER COLUMN "created_at" SET DEFAULT sk_now();--> statement-breakpoint
ALTER TABLE "schedules" ALTER COLUMN "updated_at" SET DEFAULT sk_now();
