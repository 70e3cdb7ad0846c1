CREATE TABLE "attempt_output" (
	"run_id" bigint NOT NULL,
	"attempt" integer NOT NULL,
	"result" jsonb,
	"log" jsonb,
	"stdout" text,
	"stderr" text,
	CONSTRAINT "attempt_output_run_id_attempt_pk" PRIMARY KEY("run_id","attempt")
);
--> statement-breakpoint
ALTER TABLE "workers" ADD COLUMN "commands" jsonb;--> statement-breakpoint
ALTER TABLE "attempt_output" ADD CONSTRAINT "attempt_output_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;