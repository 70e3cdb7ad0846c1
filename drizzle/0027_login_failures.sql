CREATE TABLE "login_failures" (
	"kind" text NOT NULL,
	"subject" text NOT NULL,
	"failures" integer NOT NULL,
	"last_failure_at" timestamp with time zone NOT NULL,
	CONSTRAINT "login_failures_kind_subject_pk" PRIMARY KEY("kind","subject"),
	CONSTRAINT "login_failures_kind_known" CHECK (kind IN ('address', 'account')),
	CONSTRAINT "login_failures_failures_positive" CHECK (failures > 0)
);
--> statement-breakpoint
CREATE INDEX "login_failures_last_failure_idx" ON "login_failures" USING btree ("last_failure_at");