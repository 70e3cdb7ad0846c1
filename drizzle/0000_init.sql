CREATE TYPE "public"."attempt_outcome" AS ENUM('succeeded', 'failed', 'timed_out', 'lease_expired', 'aborted');--> statement-breakpoint
CREATE TYPE "public"."catch_up_policy" AS ENUM('skip', 'latest', 'all');--> statement-breakpoint
CREATE TYPE "public"."overlap_policy" AS ENUM('allow', 'forbid', 'skip');--> statement-breakpoint
CREATE TYPE "public"."run_origin" AS ENUM('schedule', 'catch_up', 'manual', 'backfill');--> statement-breakpoint
CREATE TYPE "public"."run_state" AS ENUM('pending', 'running', 'done', 'dead', 'skipped');--> statement-breakpoint
CREATE TYPE "public"."skip_reason" AS ENUM('missed', 'coalesced', 'too_late', 'overlap', 'paused', 'deleted');--> statement-breakpoint
CREATE TABLE "alert_channels" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "alert_channels_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"config" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "alert_channels_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "alert_deliveries" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "alert_deliveries_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"event_id" bigint NOT NULL,
	"channel_id" bigint NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_error" text,
	"delivered_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "alert_events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "alert_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"schedule_id" bigint,
	"schedule_name" text NOT NULL,
	"rule" text NOT NULL,
	"kind" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "alert_states" (
	"schedule_id" bigint NOT NULL,
	"rule" text NOT NULL,
	"firing" boolean DEFAULT false NOT NULL,
	"since" timestamp with time zone DEFAULT now() NOT NULL,
	"last_notified_at" timestamp with time zone,
	CONSTRAINT "alert_states_schedule_id_rule_pk" PRIMARY KEY("schedule_id","rule")
);
--> statement-breakpoint
CREATE TABLE "api_tokens" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "api_tokens_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"name" text NOT NULL,
	"role" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "attempts" (
	"run_id" bigint NOT NULL,
	"attempt" integer NOT NULL,
	"worker_id" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone,
	"outcome" "attempt_outcome" NOT NULL,
	"error" text,
	"duration_ms" integer,
	CONSTRAINT "attempts_run_id_attempt_pk" PRIMARY KEY("run_id","attempt")
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "audit_log_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"actor" text NOT NULL,
	"actor_kind" text NOT NULL,
	"action" text NOT NULL,
	"target_type" text NOT NULL,
	"target_id" text,
	"schedule_id" bigint,
	"before" jsonb,
	"after" jsonb
);
--> statement-breakpoint
CREATE TABLE "sk_clock" (
	"id" integer PRIMARY KEY DEFAULT 1 NOT NULL,
	"shift" interval DEFAULT '0' NOT NULL,
	"frozen_at" timestamp with time zone,
	CONSTRAINT "sk_clock_single_row" CHECK (id = 1)
);
--> statement-breakpoint
CREATE TABLE "cluster" (
	"id" integer PRIMARY KEY DEFAULT 1 NOT NULL,
	"partitions" integer DEFAULT 16 NOT NULL,
	CONSTRAINT "cluster_single_row" CHECK (id = 1),
	CONSTRAINT "cluster_partitions_positive" CHECK (partitions >= 1)
);
--> statement-breakpoint
CREATE TABLE "ledger" (
	"idempotency_key" text PRIMARY KEY NOT NULL,
	"schedule_id" bigint NOT NULL,
	"scheduled_for" timestamp with time zone NOT NULL,
	"fencing_token" integer NOT NULL,
	"worker_id" text NOT NULL,
	"writes" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "partition_leases" (
	"partition" integer PRIMARY KEY NOT NULL,
	"owner" text,
	"lease_expires_at" timestamp with time zone,
	"token" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "runs_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"schedule_id" bigint NOT NULL,
	"partition" integer NOT NULL,
	"scheduled_for" timestamp with time zone NOT NULL,
	"due_at" timestamp with time zone NOT NULL,
	"run_after" timestamp with time zone NOT NULL,
	"state" "run_state" DEFAULT 'pending' NOT NULL,
	"origin" "run_origin" DEFAULT 'schedule' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"max_attempts" integer NOT NULL,
	"lease_owner" text,
	"lease_expires_at" timestamp with time zone,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"last_error" text,
	"skip_reason" "skip_reason",
	"skipped_until" timestamp with time zone,
	"skipped_count" integer,
	"coalesced_into" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "runs_attempts_nonneg" CHECK (attempts >= 0)
);
--> statement-breakpoint
CREATE TABLE "schedules" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "schedules_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"handler" text NOT NULL,
	"payload" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"cron" text,
	"every_seconds" integer,
	"timezone" text DEFAULT 'UTC' NOT NULL,
	"catch_up" "catch_up_policy" DEFAULT 'latest' NOT NULL,
	"max_lateness_seconds" integer,
	"jitter_seconds" integer DEFAULT 0 NOT NULL,
	"overlap" "overlap_policy" DEFAULT 'allow' NOT NULL,
	"retry_max_attempts" integer DEFAULT 6 NOT NULL,
	"retry_base_seconds" integer DEFAULT 30 NOT NULL,
	"retry_cap_seconds" integer DEFAULT 900 NOT NULL,
	"lease_seconds" integer DEFAULT 60 NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"next_slot_at" timestamp with time zone NOT NULL,
	"partition" integer NOT NULL,
	"late_after_seconds" integer,
	"late_grace_seconds" integer,
	"backlog_after_seconds" integer,
	"retention_days" integer,
	"retention_max_runs" integer,
	"deleted_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	CONSTRAINT "schedules_timing_one_of" CHECK ((cron IS NULL) <> (every_seconds IS NULL)),
	CONSTRAINT "schedules_every_positive" CHECK (every_seconds IS NULL OR every_seconds >= 1),
	CONSTRAINT "schedules_lease_positive" CHECK (lease_seconds >= 1),
	CONSTRAINT "schedules_jitter_nonneg" CHECK (jitter_seconds >= 0),
	CONSTRAINT "schedules_retry_sane" CHECK (retry_max_attempts >= 1 AND retry_base_seconds >= 0 AND retry_cap_seconds >= retry_base_seconds)
);
--> statement-breakpoint
CREATE TABLE "workers" (
	"id" text PRIMARY KEY NOT NULL,
	"hostname" text NOT NULL,
	"pid" integer NOT NULL,
	"concurrency" integer NOT NULL,
	"handlers" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_heartbeat_at" timestamp with time zone DEFAULT now() NOT NULL,
	"stopped_at" timestamp with time zone,
	"in_flight" integer DEFAULT 0 NOT NULL,
	"version" text DEFAULT '' NOT NULL
);
--> statement-breakpoint
ALTER TABLE "alert_deliveries" ADD CONSTRAINT "alert_deliveries_event_id_alert_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."alert_events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_deliveries" ADD CONSTRAINT "alert_deliveries_channel_id_alert_channels_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."alert_channels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_states" ADD CONSTRAINT "alert_states_schedule_id_schedules_id_fk" FOREIGN KEY ("schedule_id") REFERENCES "public"."schedules"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "attempts" ADD CONSTRAINT "attempts_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "runs" ADD CONSTRAINT "runs_schedule_id_schedules_id_fk" FOREIGN KEY ("schedule_id") REFERENCES "public"."schedules"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "alert_deliveries_due_idx" ON "alert_deliveries" USING btree ("next_attempt_at") WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX "alert_events_at_idx" ON "alert_events" USING btree ("at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "audit_log_at_idx" ON "audit_log" USING btree ("at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "audit_log_schedule_idx" ON "audit_log" USING btree ("schedule_id","at" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "runs_slot_key" ON "runs" USING btree ("schedule_id","scheduled_for") WHERE origin <> 'manual';--> statement-breakpoint
CREATE INDEX "runs_claimable_idx" ON "runs" USING btree ("partition","run_after") WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX "runs_running_idx" ON "runs" USING btree ("partition") WHERE state = 'running';--> statement-breakpoint
CREATE INDEX "runs_history_idx" ON "runs" USING btree ("schedule_id","scheduled_for" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "runs_unfinished_idx" ON "runs" USING btree ("schedule_id","scheduled_for") WHERE state IN ('pending', 'running');--> statement-breakpoint
CREATE INDEX "runs_dead_idx" ON "runs" USING btree ("schedule_id","id") WHERE state = 'dead';--> statement-breakpoint
CREATE UNIQUE INDEX "schedules_name_live_key" ON "schedules" USING btree ("name") WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX "schedules_tick_idx" ON "schedules" USING btree ("partition","next_slot_at") WHERE enabled AND deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX "workers_heartbeat_idx" ON "workers" USING btree ("last_heartbeat_at");