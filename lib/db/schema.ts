import { sql, type InferInsertModel, type InferSelectModel } from "drizzle-orm";
import {
  bigint,
  boolean,
  check,
  doublePrecision,
  index,
  integer,
  interval,
  jsonb,
  pgEnum,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { SCHEDULE_DEFAULTS } from "../schedules/defaults";

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

export const catchUpPolicy = pgEnum("catch_up_policy", ["skip", "latest", "all"]);
export const overlapPolicy = pgEnum("overlap_policy", ["allow", "forbid", "skip"]);
/**
 * Which claim statement takes a queued run (run_queue.overlap, set by sk_claim_rule): 'allow' the
 * plain claim; the rest the limited claim, which counts running runs ('limited': an overlap-allowing
 * schedule with a maxConcurrent, or whose handler has a fleet-wide limit).
 */
export const claimRule = pgEnum("claim_rule", ["allow", "forbid", "skip", "limited"]);
/** pending → running → done | pending (retry) | dead; skipped never ran (policy, lateness, overlap). 'running' is stored in run_queue only. */
export const runState = pgEnum("run_state", ["pending", "running", "done", "dead", "skipped"]);
/** Why a run exists. */
export const runOrigin = pgEnum("run_origin", ["schedule", "catch_up", "manual", "backfill"]);
/** Why a slot did not run. */
// `cancelled` and `discarded`: an operator settled the run by hand (lib/runs/operator-skip.ts).
export const skipReason = pgEnum("skip_reason", ["missed", "coalesced", "too_late", "overlap", "paused", "deleted", "cancelled", "discarded"]);
export const attemptOutcome = pgEnum("attempt_outcome", ["succeeded", "failed", "timed_out", "lease_expired", "aborted"]);
/**
 * A schedule's status as the alert pass last judged it (lib/health/schedule-health.ts, deriveStatus),
 * declared worst first: `ORDER BY status` lists failing, late, backlogged, healthy, paused, the
 * order of the Schedules page's status sort and of the metrics' `worst:N`.
 */
export const healthStatus = pgEnum("health_status", ["failing", "late", "backlogged", "healthy", "paused"]);

/**
 * A schedule says WHEN and WHAT. Column defaults are the schedule defaults (lib/schedules/defaults.ts). `next_slot_at` is the high-water mark: the next slot the tick
 * has not materialised yet. It lives here, not in a worker, so restarts never lose slots.
 */
export const schedules = pgTable(
  "schedules",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    name: text("name").notNull(),
    description: text("description").notNull().default(SCHEDULE_DEFAULTS.description),
    handler: text("handler").notNull(),
    payload: jsonb("payload").notNull().default(SCHEDULE_DEFAULTS.payload),
    cron: text("cron"),
    everySeconds: integer("every_seconds"),
    timezone: text("timezone").notNull().default(SCHEDULE_DEFAULTS.timezone),
    catchUp: catchUpPolicy("catch_up").notNull().default(SCHEDULE_DEFAULTS.catchUp),
    maxLatenessSeconds: integer("max_lateness_seconds"),
    jitterSeconds: integer("jitter_seconds").notNull().default(SCHEDULE_DEFAULTS.jitterSeconds),
    overlap: overlapPolicy("overlap").notNull().default(SCHEDULE_DEFAULTS.overlap),
    retryMaxAttempts: integer("retry_max_attempts").notNull().default(SCHEDULE_DEFAULTS.retry.maxAttempts),
    retryBaseSeconds: integer("retry_base_seconds").notNull().default(SCHEDULE_DEFAULTS.retry.baseSeconds),
    retryCapSeconds: integer("retry_cap_seconds").notNull().default(SCHEDULE_DEFAULTS.retry.capSeconds),
    leaseSeconds: integer("lease_seconds").notNull().default(SCHEDULE_DEFAULTS.leaseSeconds),
    enabled: boolean("enabled").notNull().default(SCHEDULE_DEFAULTS.enabled),
    nextSlotAt: ts("next_slot_at").notNull(),
    partition: integer("partition").notNull(),
    /** Health overrides; null means the default rule. */
    lateAfterSeconds: integer("late_after_seconds"),
    lateGraceSeconds: integer("late_grace_seconds"),
    backlogAfterSeconds: integer("backlog_after_seconds"),
    /** Retention overrides; null means the global setting. */
    retentionDays: integer("retention_days"),
    retentionMaxRuns: integer("retention_max_runs"),
    /** Soft delete: set when deleted with "keep history"; the name is free again. */
    deletedAt: ts("deleted_at"),
    /**
     * On the database clock (sk_now()), as every judgement reads it: a schedule without a success is
     * judged late by its age, so one inserted without these columns on a moved clock must not be
     * born years old or in the future.
     */
    createdAt: ts("created_at").notNull().default(sql`sk_now()`),
    updatedAt: ts("updated_at").notNull().default(sql`sk_now()`),
    /** Optimistic concurrency: an edit names the version it read. */
    version: integer("version").notNull().default(1),
    /**
     * The run_settings row holding this schedule's handler, payload and retry policy. Set by a
     * trigger on every insert and on every edit of those columns (lib/db/sql/triggers/schedules_settings.sql),
     * so no writer supplies it and none can get it wrong; it is never null once a row is stored.
     */
    settingsId: bigint("settings_id", { mode: "number" }),
    /** Labels for grouping and for API tokens restricted to schedules with given tags. */
    tags: text("tags").array().notNull().default(sql`'{}'::text[]`),
    /** Who answers for this job (a team or a person, free text); null when nobody said. */
    owner: text("owner"),
    /** Schedules as code: the `source` of the file that last created or changed it; null for console-made. */
    managedBy: text("managed_by"),
    /** The normalized body (defaults applied) last applied from that file; drift is the stored settings differing from it. */
    managedSpec: jsonb("managed_spec"),
    /** Why it was paused by hand; a schedule paused with a note is not resumed by an apply. Cleared on resume. */
    pausedNote: text("paused_note"),
    /** When the auto-resume loop resumes a paused schedule (worker/loops/auto-resume.ts); cleared on resume. */
    resumeAt: ts("resume_at"),
    /** How long one attempt may run before the worker aborts it (recorded `timed_out`, retried); null: no limit but the lease. */
    timeoutSeconds: integer("timeout_seconds"),
    /** The queue its runs wait in: only workers serving it claim them (SLOTKEEPER_QUEUES). */
    queue: text("queue").notNull().default(SCHEDULE_DEFAULTS.queue),
    /** At most this many of its runs at once, fleet-wide; null = no limit (overlap forbid/skip is 1). */
    maxConcurrent: integer("max_concurrent"),
  },
  (t) => [
    uniqueIndex("schedules_name_live_key").on(t.name).where(sql`deleted_at IS NULL`),
    // A tag-restricted token's lists: schedules whose tags overlap the token's (tags && $1).
    index("schedules_tags_idx").using("gin", t.tags),
    // The tick's query: due schedules of one partition, oldest high-water first.
    index("schedules_tick_idx").on(t.partition, t.nextSlotAt).where(sql`enabled AND deleted_at IS NULL`),
    // The auto-resume pass's query (lib/schedules/auto-resume.ts): paused schedules whose resume time
    // passed, earliest first. Few schedules have one, so the index stays small with any fleet.
    index("schedules_resume_at_idx").on(t.resumeAt).where(sql`resume_at IS NOT NULL AND NOT enabled AND deleted_at IS NULL`),
    // The schedule list sorted by next slot (lib/schedules/list.ts): keyset pages on (next_slot_at, id).
    index("schedules_next_slot_idx").on(t.nextSlotAt, t.id).where(sql`deleted_at IS NULL`),
    check("schedules_timing_one_of", sql`(cron IS NULL) <> (every_seconds IS NULL)`),
    check("schedules_every_positive", sql`every_seconds IS NULL OR every_seconds >= 1`),
    check("schedules_lease_positive", sql`lease_seconds >= 1`),
    check("schedules_jitter_nonneg", sql`jitter_seconds >= 0`),
    check("schedules_retry_sane", sql`retry_max_attempts >= 1 AND retry_base_seconds >= 0 AND retry_cap_seconds >= retry_base_seconds`),
    check("schedules_timeout_positive", sql`timeout_seconds IS NULL OR timeout_seconds >= 1`),
    check("schedules_max_concurrent_positive", sql`max_concurrent IS NULL OR max_concurrent >= 1`),
  ],
);

/**
 * What the schedule list's search matches (lib/schedules/list.ts): a schedule's name, handler and
 * description as one text, with its trigram index. One row per schedule, written by triggers
 * (lib/db/sql/triggers/schedules_search_*.sql) when a schedule is made or one of the three changes.
 * It is a table of its own, not an index on schedules: the tick rewrites every due schedule's
 * next_slot_at, which is in two of schedules' indexes, so each rewrite is a new entry in every index
 * of schedules, and a trigram index there took two dozen entries per rewrite (one per trigram).
 */
export const scheduleSearch = pgTable(
  "schedule_search",
  {
    scheduleId: bigint("schedule_id", { mode: "number" })
      .primaryKey()
      .references(() => schedules.id, { onDelete: "cascade" }),
    /** name || ' ' || handler || ' ' || description */
    text: text("text").notNull(),
  },
  (t) => [
    // ILIKE '%term%' through trigrams (pg_trgm lives in schema sk_ext).
    index("schedule_search_trgm_idx").using("gin", sql`${t.text} sk_ext.gin_trgm_ops`),
  ],
);

/**
 * When a run of each schedule last finished done: the latest finished_at of its done runs, never
 * lowered; null when none ever succeeded. One row per schedule, made with it
 * (triggers/schedules_last_success_insert.sql); it outlives the runs rows retention removes. Raised
 * by the alert pass from last_success_changes (below), so it is as of the last pass: the health of
 * a schedule adds the changes not applied yet (lib/schedules/last-success.ts). It is a table of its
 * own, not a column of schedules: a narrow row with two indexes, where a schedules row would be
 * rewritten whole, with an entry in each of its indexes, and locked against the schedule's edits.
 */
export const scheduleLastSuccess = pgTable(
  "schedule_last_success",
  {
    scheduleId: bigint("schedule_id", { mode: "number" })
      .primaryKey()
      .references(() => schedules.id, { onDelete: "cascade" }),
    lastSuccessAt: ts("last_success_at"),
  },
  (t) => [
    // The list sorted by last success and the Overview's worst 50 (lib/schedules/last-success.ts):
    // keyset pages on (last success, schedule id), never succeeded (-infinity) first.
    index("schedule_last_success_order_idx").on(sql`(coalesce(last_success_at, '-infinity'::timestamptz))`, t.scheduleId),
  ],
);

/**
 * The successes not yet applied to schedule_last_success: one row per statement that made runs
 * done (the finish of a batch, an import), with each schedule's latest finish in it, appended by
 * lib/db/sql/functions/runs_log_changes.sql and drained by the alert pass. The finish of a batch of 500 runs
 * of 500 schedules writes one row here, where raising schedule_last_success itself wrote 500 rows
 * and 500 index entries, on the path of every run at the top of the hour. Insert-only for writers:
 * no key, no index.
 */
export const lastSuccessChanges = pgTable("last_success_changes", {
  scheduleIds: bigint("schedule_ids", { mode: "number" }).array().notNull(),
  finishedAts: ts("finished_ats").array().notNull(),
});

/**
 * One row per slot: the run's identity and its record. `(schedule_id, scheduled_for, slot_seq)` is
 * unique: that key is the whole "each slot exists once" promise. `attempts` is the fencing token: it
 * rises on every claim.
 *
 * Where a run lives: here (the record) and, while it is unfinished, in `run_queue` (its live part:
 * claimable when, running where, the current token). This row is written only when the run settles
 * or waits again: at materialisation, at the end of each attempt (done, retry, dead) and by operator
 * actions. A claim never touches it, so `state` here reads 'pending' for a run that is running; read
 * a run's state through the `run_status` view. Why two tables: no index of runs mentions the state,
 * so the finish, the one write of the top of the hour, is a HOT update with no index entry, and the
 * claim rewrites a narrow queue row instead of this wide one.
 *
 * What keeps the two tables together (each file under lib/db/sql/ says why it exists):
 * - triggers/runs_queue_insert.sql: inserting a pending or dead run queues it;
 * - triggers/runs_queue_delete.sql, triggers/runs_queue_truncate.sql: deleting runs drops their queue rows;
 * - triggers/schedules_queue_copies.sql, triggers/schedules_settings.sql: schedule edits reach the queued copies;
 * - views/run_status.sql (a run as it stands now), views/run_attempts.sql (its attempt history).
 * Which statement claims it: lib/runs/claim/plain.ts (the top of the hour, one partition per
 * statement), lib/runs/claim/exclusive.ts (overlap forbid/skip), lib/runs/claim/rescue.ts (expired
 * leases); lib/runs/finish.ts ends an attempt in both tables in one statement.
 */
export const runs = pgTable(
  "runs",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    scheduleId: bigint("schedule_id", { mode: "number" })
      .notNull()
      .references(() => schedules.id, { onDelete: "cascade" }),
    partition: integer("partition").notNull(),
    /** The slot: the identity of this run and half of its idempotency key. */
    scheduledFor: ts("scheduled_for").notNull(),
    /** Slot + deterministic jitter. */
    dueAt: ts("due_at").notNull(),
    /** When the run may next be claimed: due_at at first, then backoff (mirrored in run_queue). */
    runAfter: ts("run_after").notNull(),
    /** pending (unfinished: run_queue says whether it waits or runs), done, dead or skipped. */
    state: runState("state").notNull().default("pending"),
    origin: runOrigin("origin").notNull().default("schedule"),
    /**
     * 0 for a schedule's own slot (scheduled, catch-up, backfill), the run's id for a manual run:
     * the third column of runs_slot_key, so one index both keeps each slot unique and orders the
     * history, while manual runs of one instant never collide. Computed, so no insert can get it wrong.
     */
    slotSeq: bigint("slot_seq", { mode: "number" })
      .notNull()
      .generatedAlwaysAs(sql`CASE WHEN origin = 'manual' THEN id ELSE 0 END`),
    /** A manual run's own payload (run now with a payload), used in place of the schedule's; null for every other run. */
    payloadOverride: jsonb("payload_override"),
    /** Attempts made, as of the last one that ended (the running attempt's token is in run_queue). */
    attempts: integer("attempts").notNull().default(0),
    /** Claims allowed before the run goes dead; re-queue raises it. */
    maxAttempts: integer("max_attempts").notNull(),
    startedAt: ts("started_at"),
    finishedAt: ts("finished_at"),
    /**
     * The worker of the latest attempt that ended. With duration_ms it is that attempt's record when
     * it has no `attempts` row: a run that succeeded on its first attempt writes none (see `run_attempts`).
     */
    workerId: text("worker_id"),
    durationMs: integer("duration_ms"),
    lastError: text("last_error"),
    skipReason: skipReason("skip_reason"),
    /** A skipped row may stand for a range of slots [scheduled_for, skipped_until]; this many. */
    skippedUntil: ts("skipped_until"),
    skippedCount: integer("skipped_count"),
    /** For coalesced slots: the slot that ran in their place. */
    coalescedInto: ts("coalesced_into"),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [
    // Each slot exists once (slot_seq is 0 for every run but a manual one), and the history,
    // newest first, keyset-paginated on (scheduled_for, slot_seq). No index of runs names the
    // state: see the table comment.
    uniqueIndex("runs_slot_key").on(t.scheduleId, t.scheduledFor.desc(), t.slotSeq.desc()),
    // Every schedule's runs newest first, for the Runs page (lib/runs/history.ts): a walk that
    // stops after a page, whatever the number of schedules. Written once per run, at its insert;
    // none of its columns ever changes, so the finish stays a HOT update.
    index("runs_time_idx").on(t.scheduledFor.desc(), t.slotSeq.desc(), t.id.desc()),
    check("runs_attempts_nonneg", sql`attempts >= 0`),
    // 'running' lives on the queue row (with its lease), which a claim writes; the record never says it.
    check("runs_state_recorded", sql`state <> 'running'`),
  ],
);

/**
 * A handler, payload, retry policy and timeout, stored once for every schedule and queued run that shares
 * them: at the top of the hour hundreds of thousands of runs name one row. Rows are never changed
 * (an edit of a schedule points it at another row, made if need be) and never deleted, so a worker
 * may hold on to what it read, and queue rows need no foreign key (no check per queued run).
 * Unique on the settings themselves, the payload by its SHA-256 (a jsonb can outgrow an index
 * entry): lib/db/sql/functions/sk_payload_digest.sql, and sk_settings_id.sql finds or makes a row.
 */
export const runSettings = pgTable(
  "run_settings",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    handler: text("handler").notNull(),
    payload: jsonb("payload").notNull(),
    retryMaxAttempts: integer("retry_max_attempts").notNull(),
    retryBaseSeconds: integer("retry_base_seconds").notNull(),
    retryCapSeconds: integer("retry_cap_seconds").notNull(),
    /**
     * The schedule's timeoutSeconds (null: none): the claim hands it to the worker with the rest of
     * the group's settings, so the queue row stays as narrow as it was.
     */
    timeoutSeconds: integer("timeout_seconds"),
  },
  // coalesce: no timeout is 0 in the key (a timeout is at least 1 s), so NULLs do not make duplicates.
  (t) => [uniqueIndex("run_settings_key").on(t.handler, t.retryMaxAttempts, t.retryBaseSeconds, t.retryCapSeconds, sql`sk_payload_digest(${t.payload})`, sql`coalesce(${t.timeoutSeconds}, 0)`)],
);

/**
 * The live part of every unfinished run: one row per run that is pending, running or dead, none for
 * a settled one (done, skipped). The claim, the heartbeat and the finish work here; `runs` keeps the
 * record (see its comment for what keeps the two together). Kept in step with `runs` in the same
 * statement by the code that moves a run, and by the triggers on runs for inserts and deletes
 * (lib/db/sql/triggers/runs_queue_*.sql). Narrow on purpose: a claim rewrites this row (a new
 * version, one index entry, in run_queue_running_idx) and nothing else.
 *
 * No primary key: every index here is partial on the state, so a claim (pending → running) adds one
 * entry, to run_queue_running_idx; a key on run_id would be a second entry per claim. Rows are found
 * by (schedule_id, scheduled_for) through the index of their state, then checked on run_id.
 * Storage settings: lib/db/sql/tables/run_queue.sql.
 */
export const runQueue = pgTable(
  "run_queue",
  {
    runId: bigint("run_id", { mode: "number" }).notNull(),
    scheduleId: bigint("schedule_id", { mode: "number" }).notNull(),
    scheduledFor: ts("scheduled_for").notNull(),
    partition: integer("partition").notNull(),
    /** Pending: claimable from then. Running: the lease deadline as claimed (lease_expires_at moves on). */
    runAfter: ts("run_after").notNull(),
    state: runState("state").notNull(),
    origin: runOrigin("origin").notNull(),
    /** The fencing token: attempts claimed so far, the running one included. */
    attempts: integer("attempts").notNull(),
    maxAttempts: integer("max_attempts").notNull(),
    leaseOwner: text("lease_owner"),
    /** Not indexed on purpose: heartbeats touch only this column and so stay HOT updates. */
    leaseExpiresAt: ts("lease_expires_at"),
    startedAt: ts("started_at"),
    // What the claim hands a worker, copied from the schedule when the run is queued and rewritten
    // in the same transaction as any edit of the schedule (lib/db/sql/triggers/runs_queue_insert.sql,
    // schedules_queue_copies.sql): the claim of the top of the hour then reads nothing but this row,
    // and one run_settings row per group of runs it claims, never the schedule.
    /**
     * The claim rule (sk_claim_rule): 'allow' runs are claimed without looking at their
     * predecessors; forbid, skip and limited ones by the limited claim, which counts running runs.
     */
    overlap: claimRule("overlap").notNull().default("allow"),
    scheduleName: text("schedule_name").notNull(),
    /** Read per row by the claim (the lease it takes), so kept here rather than in run_settings. */
    leaseSeconds: integer("lease_seconds").notNull(),
    /**
     * Handler, payload and retry policy, shared by every schedule with the same ones (run_settings).
     * Why a number rather than copies of them: a claim rewrites this row, which copies would make a
     * fifth wider, and the claim groups its runs by their settings, where a number hashes for less
     * than a jsonb and three texts.
     */
    settingsId: bigint("settings_id", { mode: "number" }).notNull(),
    /**
     * The handler's name, copied from run_settings: a worker claims only the runs whose handler it
     * serves (`handler = ANY($served)`), a filter on the row the claim already reads. Duplicated on
     * purpose: reading run_settings per row would cost the claim a join.
     */
    handler: text("handler").notNull(),
    /** The schedule's queue, copied: a worker claims only runs of the queues it serves (`queue = ANY($queues)`). */
    queue: text("queue").notNull().default("default"),
    /**
     * Max lateness as a bound the claim reads on the row: the latest instant the run's first attempt
     * may start (its due time + the schedule's max lateness, sk_latest_start), set while it is a
     * never-attempted pending slot; null for manual runs, backfills and schedules without one. A
     * claim refuses attempts = 0 rows past it and records them skipped `too_late`
     * (lib/runs/claim/too-late.ts). Not indexed: the claim reads it on rows it reads anyway.
     */
    latestStartAt: ts("latest_start_at"),
  },
  (t) => [
    // Claim: pending runs of a partition in due order.
    index("run_queue_claim_idx").on(t.partition, t.runAfter).where(sql`state = 'pending'`),
    // Claim by a worker that names its handlers: one handler's pending runs of a partition in due
    // order, so runs of handlers it does not serve are never walked over (lib/runs/claim/plain.ts).
    index("run_queue_claim_handler_idx").on(t.partition, t.handler, t.runAfter).where(sql`state = 'pending'`),
    // The few pending runs whose claim checks overlap, so the claim can ask for them apart.
    index("run_queue_exclusive_idx").on(t.partition, t.runAfter).where(sql`state = 'pending' AND overlap <> 'allow'`),
    // Per schedule, one index per state: overlap checks, the oldest pending run, finish and
    // heartbeat look-ups (running), dead runs; all running runs (expired leases, the workers page).
    index("run_queue_pending_idx").on(t.scheduleId, t.scheduledFor).where(sql`state = 'pending'`),
    index("run_queue_running_idx").on(t.scheduleId, t.scheduledFor).where(sql`state = 'running'`),
    index("run_queue_dead_idx").on(t.scheduleId, t.scheduledFor).where(sql`state = 'dead'`),
    // Across the fleet, the pending runs by slot: the Overview's oldest waiting schedules (a walk
    // that stops) and its wait histogram (an index-only range of the due ones), so a read costs the
    // runs waiting, not a sort of them (lib/health/fleet-summary.ts). Written by the tick's insert
    // only: a claim's update leaves pending, so the new tuple gets no entry here.
    index("run_queue_waiting_idx").on(t.scheduledFor, t.scheduleId).where(sql`state = 'pending'`),
    check("run_queue_unfinished", sql`state IN ('pending', 'running', 'dead')`),
  ],
);

/**
 * The attempts that are not a first-attempt success: retries, failures, timeouts, releases and
 * leases lost. A run that succeeded on its first attempt, the common case, writes no row here: its
 * one attempt is on the run row (worker_id, started_at, finished_at, duration_ms), which keeps the
 * finish at one bulk UPDATE. Read the complete history from the `run_attempts` view, which adds
 * those rows back (lib/db/sql/views/run_attempts.sql).
 */
export const attempts = pgTable(
  "attempts",
  {
    runId: bigint("run_id", { mode: "number" })
      .notNull()
      .references(() => runs.id, { onDelete: "cascade" }),
    attempt: integer("attempt").notNull(),
    workerId: text("worker_id").notNull(),
    startedAt: ts("started_at").notNull(),
    finishedAt: ts("finished_at"),
    outcome: attemptOutcome("outcome").notNull(),
    error: text("error"),
    durationMs: integer("duration_ms"),
  },
  (t) => [primaryKey({ columns: [t.runId, t.attempt] })],
);

/**
 * What an attempt left behind for an operator: the handler's returned result, the tail of its
 * `ctx.log` lines and, for programs (`command`), the tails of stdout and stderr; each bounded and
 * masked by the worker (lib/runs/output.ts). A row exists only for an attempt that produced some
 * output, written by the same finish statement as the attempt's outcome: an attempt without
 * output (a no-op at the top of the hour) writes nothing here, so its finish stays one UPDATE.
 */
export const attemptOutput = pgTable(
  "attempt_output",
  {
    runId: bigint("run_id", { mode: "number" })
      .notNull()
      .references(() => runs.id, { onDelete: "cascade" }),
    attempt: integer("attempt").notNull(),
    /** The handler's return value as JSON, or a `{ "truncated": true, … }` marker when it was larger than the bound. */
    result: jsonb("result"),
    /** The last ctx.log lines, oldest first: [{ time, level, msg, …fields }]. */
    log: jsonb("log"),
    stdout: text("stdout"),
    stderr: text("stderr"),
  },
  (t) => [primaryKey({ columns: [t.runId, t.attempt] })],
);

/** Worker processes: registered on start, heartbeated, marked stopped on a clean exit. */
export const workers = pgTable(
  "workers",
  {
    id: text("id").primaryKey(),
    hostname: text("hostname").notNull(),
    pid: integer("pid").notNull(),
    concurrency: integer("concurrency").notNull(),
    /** Handlers this worker can run: [{ name, idempotent, description }]. */
    handlers: jsonb("handlers").notNull().default([]),
    startedAt: ts("started_at").notNull().defaultNow(),
    lastHeartbeatAt: ts("last_heartbeat_at").notNull().defaultNow(),
    stoppedAt: ts("stopped_at"),
    inFlight: integer("in_flight").notNull().default(0),
    version: text("version").notNull().default(""),
    /** SLOTKEEPER_COMMANDS of the worker: "all", a list of executables, or null when it does not run programs. */
    commands: jsonb("commands"),
    /** The queues it serves: [{ name, concurrency, inFlight }], the counts as of its last heartbeat. */
    queues: jsonb("queues").notNull().default([]),
  },
  (t) => [index("workers_heartbeat_idx").on(t.lastHeartbeatAt)],
);

/**
 * Fleet-wide concurrency limits per handler: at most max_concurrent runs of the handler run at once
 * across every worker (PUT /api/handlers/{name}/limit). A handler without a row is unlimited.
 */
export const handlerLimits = pgTable(
  "handler_limits",
  {
    handler: text("handler").primaryKey(),
    maxConcurrent: integer("max_concurrent").notNull(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  () => [check("handler_limits_positive", sql`max_concurrent >= 1`)],
);

/** Expiring, fenced leases on partitions: a worker ticks and claims only in partitions it holds. */
export const partitionLeases = pgTable("partition_leases", {
  partition: integer("partition").primaryKey(),
  owner: text("owner"),
  leaseExpiresAt: ts("lease_expires_at"),
  /** Fencing token: rises whenever the lease changes hands. */
  token: bigint("token", { mode: "number" }).notNull().default(0),
  /**
   * When the holder last renewed or took the lease (sk_now()). A partition whose holder has been
   * silent for PARTITION_ORPHANED_AFTER_SECONDS is orphaned: every live worker ticks and claims in
   * it until someone holds it again (lib/partitions/leases.ts), so a dead worker's pending runs
   * start within the stated lateness bound, not after its partition lease runs out.
   */
  renewedAt: ts("renewed_at"),
});

/** Who changed what. Never updated or deleted by the application. */
export const auditLog = pgTable(
  "audit_log",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    at: ts("at").notNull().defaultNow(),
    actor: text("actor").notNull(),
    actorKind: text("actor_kind").notNull(),
    action: text("action").notNull(),
    targetType: text("target_type").notNull(),
    targetId: text("target_id"),
    /** No foreign key: the entry outlives the schedule it describes. */
    scheduleId: bigint("schedule_id", { mode: "number" }),
    before: jsonb("before"),
    after: jsonb("after"),
  },
  (t) => [index("audit_log_at_idx").on(t.at.desc()), index("audit_log_schedule_idx").on(t.scheduleId, t.at.desc())],
);

/** API tokens for automation, stored as hashes; the secret is shown once. */
export const apiTokens = pgTable(
  "api_tokens",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    name: text("name").notNull(),
    /** What the token may do: read, operate or admin (lib/auth/scopes.ts). */
    scope: text("scope").notNull().default("read"),
    /** When it stops working by itself; null: until revoked. */
    expiresAt: ts("expires_at"),
    /** When non-empty, the token sees and changes only schedules with at least one of these tags. */
    scheduleTags: text("schedule_tags").array().notNull().default(sql`'{}'::text[]`),
    tokenHash: text("token_hash").notNull().unique(),
    createdBy: text("created_by").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
    lastUsedAt: ts("last_used_at"),
    revokedAt: ts("revoked_at"),
  },
  () => [check("api_tokens_scope_known", sql`scope IN ('read', 'operate', 'admin')`)],
);

/**
 * People who sign in to the console (lib/auth/people.ts). The environment accounts `operator` and
 * `viewer` are not rows here; their names are reserved.
 */
export const people = pgTable(
  "people",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    /** The login name, unique. */
    name: text("name").notNull().unique(),
    displayName: text("display_name"),
    /** viewer, operator or admin (lib/auth/scopes.ts). */
    role: text("role").notNull(),
    /** `scrypt$<N>$<r>$<p>$<salt>$<hash>` (lib/auth/password-hash.ts): the parameters travel with the hash. */
    passwordHash: text("password_hash"),
    createdAt: ts("created_at").notNull().defaultNow(),
    disabledAt: ts("disabled_at"),
    /** A person who signs in with OpenID Connect (lib/auth/oidc.ts): the provider's issuer and the `sub` it gives them; such a person may have no password. */
    oidcIssuer: text("oidc_issuer"),
    oidcSubject: text("oidc_subject"),
  },
  (t) => [
    check("people_role_known", sql`role IN ('viewer', 'operator', 'admin')`),
    check("people_oidc_pair", sql`(oidc_issuer IS NULL) = (oidc_subject IS NULL)`),
    check("people_password_or_oidc", sql`password_hash IS NOT NULL OR oidc_subject IS NOT NULL`),
    uniqueIndex("people_oidc_key").on(t.oidcIssuer, t.oidcSubject).where(sql`oidc_subject IS NOT NULL`),
  ],
);

/**
 * OpenID Connect sign-ins under way (lib/auth/oidc.ts): the state's sha256, with the nonce and
 * PKCE verifier the callback needs. A callback deletes its row, so a state is good once; rows
 * live 10 minutes by the database clock.
 */
export const oidcLogins = pgTable(
  "oidc_logins",
  {
    stateHash: text("state_hash").primaryKey(),
    nonce: text("nonce").notNull(),
    codeVerifier: text("code_verifier").notNull(),
    /** The console path to land on after signing in. */
    nextPath: text("next_path").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
    expiresAt: ts("expires_at").notNull(),
  },
  (t) => [index("oidc_logins_expires_idx").on(t.expiresAt)],
);

/**
 * Console sessions (lib/auth/sessions.ts): the cookie holds a random id, the row its sha256. A
 * person's session names the person; an environment account's (operator, viewer) has no person.
 */
export const sessions = pgTable(
  "sessions",
  {
    idHash: text("id_hash").primaryKey(),
    personId: bigint("person_id", { mode: "number" }).references(() => people.id, { onDelete: "cascade" }),
    /** The person's name or the environment account's (operator, viewer). */
    account: text("account").notNull(),
    role: text("role").notNull(),
    /** For an environment account: a stamp of its password then, so changing the password ends its sessions. */
    passwordStamp: text("password_stamp"),
    createdAt: ts("created_at").notNull().defaultNow(),
    expiresAt: ts("expires_at").notNull(),
    lastSeenAt: ts("last_seen_at").notNull().defaultNow(),
  },
  (t) => [
    index("sessions_person_idx").on(t.personId),
    index("sessions_account_idx").on(t.account),
    index("sessions_expires_idx").on(t.expiresAt),
    check("sessions_role_known", sql`role IN ('viewer', 'operator', 'admin')`),
  ],
);

/**
 * Failed sign-ins (lib/auth/throttle.ts), counted per client address and per account in the
 * database, so every web process reads and adds to the same counts. A row is live while its last
 * failure is within the throttle's window by the database clock; the retention sweep deletes the rest.
 */
export const loginFailures = pgTable(
  "login_failures",
  {
    /** `address` (the client address, or "unknown") or `account` (the user name tried). */
    kind: text("kind").notNull(),
    subject: text("subject").notNull(),
    failures: integer("failures").notNull(),
    lastFailureAt: ts("last_failure_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.kind, t.subject] }),
    index("login_failures_last_failure_idx").on(t.lastFailureAt),
    check("login_failures_kind_known", sql`kind IN ('address', 'account')`),
    check("login_failures_failures_positive", sql`failures > 0`),
  ],
);

/** Notification channels (webhook, slack, email). */
export const alertChannels = pgTable("alert_channels", {
  id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
  name: text("name").notNull().unique(),
  kind: text("kind").notNull(),
  config: jsonb("config").notNull().default({}),
  enabled: boolean("enabled").notNull().default(true),
  /** When non-empty, the channel hears only alerts of schedules carrying at least one of these tags. */
  tags: text("tags").array().notNull().default(sql`'{}'::text[]`),
  createdAt: ts("created_at").notNull().defaultNow(),
});

/** Current state of each (schedule, rule): the transition detector. */
export const alertStates = pgTable(
  "alert_states",
  {
    scheduleId: bigint("schedule_id", { mode: "number" })
      .notNull()
      .references(() => schedules.id, { onDelete: "cascade" }),
    rule: text("rule").notNull(),
    firing: boolean("firing").notNull().default(false),
    since: ts("since").notNull().defaultNow(),
    lastNotifiedAt: ts("last_notified_at"),
  },
  (t) => [primaryKey({ columns: [t.scheduleId, t.rule] })],
);

/**
 * The alert pass's watch list: per schedule, the earliest instant at which one of its rule verdicts
 * could change with no write to its runs or to the schedule (the "would be late at", "would be
 * backlogged at", "would be stuck at" instants, or the next pass while an alert fires). A pass reads
 * only the rows whose instant has come (alert_watch_check_idx). Every live schedule has a row: the
 * statement that makes a schedule makes its row, due at once and not evaluated yet
 * (lib/db/sql/triggers/schedules_alert_watch_insert.sql); otherwise only the pass writes here,
 * under its advisory lock. lib/alerts/watch.ts works the instants out.
 */
export const alertWatch = pgTable(
  "alert_watch",
  {
    scheduleId: bigint("schedule_id", { mode: "number" }).primaryKey(),
    checkAt: ts("check_at").notNull(),
    /**
     * What the pass that last evaluated the schedule found: its status, its handler then, the rules
     * that held (late, failing, backlogged, unserved, stuck) and the instant it passed, or will
     * pass, the first of its late and backlog thresholds (the metrics' `worst:N` order). All null
     * until its first evaluation: a new schedule's row is made with it, not evaluated yet.
     * schedule_counts and rule_counts count these (lib/db/sql/functions/alert_watch_counts.sql).
     */
    status: healthStatus("status"),
    handler: text("handler"),
    rules: text("rules").array(),
    overdueAt: ts("overdue_at"),
  },
  (t) => [
    index("alert_watch_check_idx").on(t.checkAt),
    // The worst first, as of the last pass: `worst:N` walks this and stops after N.
    index("alert_watch_worst_idx").on(t.status, t.overdueAt, t.scheduleId).where(sql`status IS NOT NULL`),
    // The schedules not evaluated yet: as many as were made since the last pass.
    index("alert_watch_unevaluated_idx").on(t.scheduleId).where(sql`status IS NULL`),
  ],
);

/**
 * Evaluated schedules by the status and handler the alert pass last found, kept exact by a
 * statement-level trigger on alert_watch (lib/db/sql/triggers/alert_watch_counts_*.sql) that adds
 * each statement's change: the Overview's counts and `slotkeeper_schedules` read these few rows,
 * not the fleet. A count that falls to 0 keeps its row.
 */
export const scheduleCounts = pgTable(
  "schedule_counts",
  {
    status: healthStatus("status").notNull(),
    handler: text("handler").notNull(),
    n: bigint("n", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.status, t.handler] })],
);

/** Evaluated schedules for which each rule held when the alert pass last looked, kept like schedule_counts. */
export const ruleCounts = pgTable("rule_counts", {
  rule: text("rule").primaryKey(),
  n: bigint("n", { mode: "number" }).notNull(),
});

/**
 * The last alert pass that finished: the database clock reading it took before it read the log of
 * changes. schedule_counts and rule_counts are at least that recent. No row until a pass finishes.
 */
export const alertPass = pgTable(
  "alert_pass",
  {
    id: integer("id").primaryKey().default(1),
    startedAt: ts("started_at").notNull(),
  },
  () => [check("alert_pass_single_row", sql`id = 1`)],
);

/**
 * Schedules whose runs or alert settings were written since the alert pass last looked: one row
 * per writing statement, with the schedules it wrote as an array, appended by triggers
 * (lib/db/sql/triggers/*_alert_changes*.sql), read by the pass with the instants that have come
 * and deleted once their schedules are evaluated (lib/alerts/watch.ts). A
 * finish of 500 runs of 500 schedules (the top of the hour) appends one row, not 500.
 * Insert-only for writers: no key, no index, no row another writer waits on.
 */
export const alertChanges = pgTable("alert_changes", {
  scheduleIds: bigint("schedule_ids", { mode: "number" }).array().notNull(),
});

/**
 * The runs of each schedule by the hour of their slot (date_bin to the epoch, so independent of the
 * session's time zone), counted by the state they are in now, with the latest finish of the done
 * ones: what the long chart windows read instead of the runs (lib/health/charts.ts). Rolled up from
 * the runs of each hour listed in chart_changes (lib/health/chart-hours.ts); a chart reads the hours
 * still listed there from runs, so it is exact whatever the roll-up has done so far.
 */
export const chartHours = pgTable(
  "chart_hours",
  {
    scheduleId: bigint("schedule_id", { mode: "number" }).notNull(),
    hour: ts("hour").notNull(),
    done: integer("done").notNull().default(0),
    dead: integer("dead").notNull().default(0),
    /** Skipped slots (a coalesced run counts each slot it stands for: its skipped_count). */
    skipped: integer("skipped").notNull().default(0),
    /** Runs still pending or running (runs.state pending). */
    waiting: integer("waiting").notNull().default(0),
    lastDoneAt: ts("last_done_at"),
  },
  (t) => [primaryKey({ columns: [t.scheduleId, t.hour] })],
);

/**
 * How long the finished runs of each schedule and slot hour had been waiting (slot to start) at each
 * 7-day chart sample they waited across (every 2 hours on the epoch, strictly between slot and
 * start): the oldest-pending-age chart's numbers for runs that no longer change. Rolled up with
 * chart_hours (lib/health/chart-hours.ts); unfinished runs are read from run_queue by the chart.
 */
export const chartWaits = pgTable(
  "chart_waits",
  {
    scheduleId: bigint("schedule_id", { mode: "number" }).notNull(),
    hour: ts("hour").notNull(),
    sampleAt: ts("sample_at").notNull(),
    seconds: doublePrecision("seconds").notNull(),
  },
  (t) => [primaryKey({ columns: [t.scheduleId, t.hour, t.sampleAt] })],
);

/**
 * The (schedule, slot hour) pairs whose runs were written since chart_hours last counted them: one
 * row per writing statement, the pairs as two arrays (read one pair a row through the view
 * chart_changed_hours), appended by the triggers on runs (lib/db/sql/functions/runs_log_changes.sql, triggers/runs_chart_changes_delete.sql)
 * and drained by the roll-up. Insert-only for writers: no key, no index, no row another writer
 * waits on.
 */
export const chartChanges = pgTable("chart_changes", {
  scheduleIds: bigint("schedule_ids", { mode: "number" }).array().notNull(),
  hours: ts("hours").array().notNull(),
});

/** Alert history: one row per transition (firing, resolved) or reminder. */
export const alertEvents = pgTable(
  "alert_events",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    scheduleId: bigint("schedule_id", { mode: "number" }),
    scheduleName: text("schedule_name").notNull(),
    rule: text("rule").notNull(),
    kind: text("kind").notNull(),
    at: ts("at").notNull().defaultNow(),
    details: jsonb("details").notNull().default({}),
  },
  (t) => [index("alert_events_at_idx").on(t.at.desc())],
);

/** One delivery of an alert event to a channel, retried with backoff. */
export const alertDeliveries = pgTable(
  "alert_deliveries",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    eventId: bigint("event_id", { mode: "number" })
      .notNull()
      .references(() => alertEvents.id, { onDelete: "cascade" }),
    channelId: bigint("channel_id", { mode: "number" })
      .notNull()
      .references(() => alertChannels.id, { onDelete: "cascade" }),
    state: text("state").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: ts("next_attempt_at").notNull().defaultNow(),
    lastError: text("last_error"),
    deliveredAt: ts("delivered_at"),
  },
  (t) => [index("alert_deliveries_due_idx").on(t.nextAttemptAt).where(sql`state = 'pending'`)],
);

/** Example target for the `sql-ledger` handler: one row per slot, fenced. */
export const ledger = pgTable("ledger", {
  idempotencyKey: text("idempotency_key").primaryKey(),
  scheduleId: bigint("schedule_id", { mode: "number" }).notNull(),
  scheduledFor: ts("scheduled_for").notNull(),
  fencingToken: integer("fencing_token").notNull(),
  workerId: text("worker_id").notNull(),
  writes: integer("writes").notNull().default(1),
  createdAt: ts("created_at").notNull().defaultNow(),
});

/**
 * Cluster-wide settings every process must agree on (one row, id = 1). The partition count lives
 * here, not in each process's environment, so web and workers always hash schedules the same way.
 */
export const cluster = pgTable(
  "cluster",
  {
    id: integer("id").primaryKey().default(1),
    partitions: integer("partitions").notNull().default(16),
    /**
     * When a worker last looked for expired run leases (sk_now()): one look per poll interval for
     * the whole cluster, not one per worker (lib/runs/claim/rescue.ts, the gate).
     */
    rescuedAt: timestamp("rescued_at", { withTimezone: true }),
  },
  () => [check("cluster_single_row", sql`id = 1`), check("cluster_partitions_positive", sql`partitions >= 1`)],
);

/**
 * The database clock's test override (one row, id = 1). `sk_now()` (lib/db/sql/functions/sk_now.sql)
 * returns `frozen_at` when set, else `now() + shift`. Production leaves it at (0, null): every due/expired/late comparison then
 * reads the database's own `now()`.
 */
export const clock = pgTable(
  "sk_clock",
  {
    id: integer("id").primaryKey().default(1),
    shift: interval("shift").notNull().default("0"),
    frozenAt: ts("frozen_at"),
  },
  () => [check("sk_clock_single_row", sql`id = 1`)],
);

export type Schedule = InferSelectModel<typeof schedules>;
export type NewSchedule = InferInsertModel<typeof schedules>;
export type Run = InferSelectModel<typeof runs>;
export type QueuedRun = InferSelectModel<typeof runQueue>;
export type NewRun = InferInsertModel<typeof runs>;
export type Attempt = InferSelectModel<typeof attempts>;
export type AttemptOutputRow = InferSelectModel<typeof attemptOutput>;
export type Worker = InferSelectModel<typeof workers>;
export type PartitionLease = InferSelectModel<typeof partitionLeases>;
export type AuditEntry = InferSelectModel<typeof auditLog>;
export type ApiToken = InferSelectModel<typeof apiTokens>;
export type AlertChannel = InferSelectModel<typeof alertChannels>;
export type AlertEvent = InferSelectModel<typeof alertEvents>;
export type RunState = Run["state"];
export type CatchUpPolicy = Schedule["catchUp"];
export type OverlapPolicy = Schedule["overlap"];
