/**
 * Reading runs for the console and the API: a schedule's history, runs across schedules, one run
 * with its attempts. Histories hold millions of rows, so every list is keyset-paginated on
 * (scheduled_for, slot_seq) — the order of runs_slot_key — and never counts the whole table.
 */
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { z } from "zod";
import { maskSecrets } from "../security/mask";
import { attemptOutcome, runOrigin, runState, skipReason, type RunState } from "../db/schema";
import { idempotencyKey } from "./idempotency";
import { logLineSchema, type LogLine } from "./output";
import { stuckRuns, type StuckRun } from "./stuck";
import { unservedHandlers, unservedHandlerSchema } from "./unserved";
import { carriesAnyTag } from "../schedules/tag-reach";

const instant = z.string();

/** A run as the API returns it. Instants are ISO strings. */
export const runViewSchema = z
  .object({
    id: z.number().int(),
    scheduleId: z.number().int(),
    scheduleName: z.string(),
    scheduledFor: instant,
    dueAt: instant,
    runAfter: instant,
    state: z.enum(runState.enumValues),
    origin: z.enum(runOrigin.enumValues),
    attempts: z.number().int(),
    maxAttempts: z.number().int(),
    leaseOwner: z.string().nullable(),
    leaseExpiresAt: instant.nullable(),
    startedAt: instant.nullable(),
    finishedAt: instant.nullable(),
    lastError: z.string().nullable(),
    /** `cancelled` and `discarded`: an operator settled the run by hand (lib/runs/operator-skip.ts). */
    skipReason: z.enum(skipReason.enumValues).nullable(),
    skippedUntil: instant.nullable(),
    skippedCount: z.number().int().nullable(),
    coalescedInto: instant.nullable(),
    createdAt: instant,
    /** The worker of the latest attempt, if any. */
    workerId: z.string().nullable(),
    /**
     * Set while the run is due and pending but no live worker serves its handler (routing: it waits,
     * no attempt used, until one does): the handler and when the run started waiting (its run_after).
     */
    unservedHandler: unservedHandlerSchema.nullable(),
    /**
     * Running with a live lease far past its schedule's timeout or usual duration (lib/runs/stuck.ts),
     * and since when; false and null otherwise.
     */
    stuck: z.boolean(),
    stuckSince: instant.nullable(),
  })
  .strict();
export type RunView = z.infer<typeof runViewSchema>;

/** An attempt's output as the API shows it: the handler's result (JSON), its ctx.log lines, a program's stdout and stderr tails. */
export const attemptOutputViewSchema = z.object({ result: z.unknown(), log: z.array(logLineSchema), stdout: z.string().nullable(), stderr: z.string().nullable() }).strict();
export type AttemptOutputView = z.infer<typeof attemptOutputViewSchema>;

export const attemptViewSchema = z
  .object({
    attempt: z.number().int(),
    workerId: z.string(),
    startedAt: instant,
    finishedAt: instant.nullable(),
    outcome: z.enum(attemptOutcome.enumValues),
    error: z.string().nullable(),
    durationMs: z.number().nullable(),
    /** What the attempt left for an operator (lib/runs/output.ts), masked and bounded; null when it left nothing. */
    output: attemptOutputViewSchema.nullable(),
  })
  .strict();
export type AttemptView = z.infer<typeof attemptViewSchema>;

/** GET /api/runs/{id}: a run with its idempotency key, its schedule's handler and every attempt, oldest first. */
export const runDetailSchema = runViewSchema
  .extend({
    idempotencyKey: z.string(),
    scheduleHandler: z.string(),
    scheduleDeleted: z.boolean(),
    /** A manual run's own payload (run now with a payload), secrets masked; null when it runs with the schedule's. */
    payloadOverride: z.unknown(),
    attemptsList: z.array(attemptViewSchema),
  })
  .strict();
export type RunDetail = z.infer<typeof runDetailSchema>;

/** One page of a run list, newest slot first; `nextCursor` fetches the next. */
export const runPageSchema = z.object({ runs: z.array(runViewSchema), nextCursor: z.string().nullable() }).strict();
export type RunPage = z.infer<typeof runPageSchema>;

export const RUN_STATES: RunState[] = ["pending", "running", "done", "dead", "skipped"];
export const MAX_PAGE = 200;

/** Filters for `listRuns`; all optional. */
export type RunFilter = {
  /** Only these schedules (ids); all schedules, live or deleted-with-history, when absent. */
  scheduleIds?: number[];
  /** Only schedules carrying at least one of these tags (a tag-restricted token's reach); with scheduleIds, both hold. */
  tags?: string[];
  states?: RunState[];
  /** Slot time window: scheduled_for >= from and < to. */
  from?: Date;
  to?: Date;
  cursor?: string | null;
  limit?: number;
  /** false: only slots at or before the database clock (hides the tick's slots materialised ahead). */
  upcoming?: boolean;
};

/**
 * Cursor: the last row's (scheduled_for, slot_seq, id), the list's order. The slot is kept as
 * PostgreSQL's own text so that microseconds survive the round trip (a JS Date would cut them and
 * skip or repeat rows). The id breaks ties between schedules that share a slot (every hourly
 * schedule's runs at minute zero): without it a page boundary inside such a slot would skip the
 * rest of that slot's runs.
 */
export function encodeCursor(scheduledForText: string, slotSeq: number, id: number): string {
  return Buffer.from(JSON.stringify([scheduledForText, slotSeq, id])).toString("base64url");
}

const PG_TIMESTAMPTZ = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:?\d{2}){0,2}|Z)$/;

/** A cursor of two numbers (before ids broke ties) continues after every run of its slot: id 0. */
export function decodeCursor(cursor: string): { scheduledFor: string; slotSeq: number; id: number } {
  try {
    const [sf, seq, id = 0] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (typeof sf !== "string" || !Number.isSafeInteger(seq) || seq < 0 || !Number.isSafeInteger(id) || id < 0 || !PG_TIMESTAMPTZ.test(sf)) throw new Error("shape");
    return { scheduledFor: sf, slotSeq: seq, id };
  } catch {
    throw new AppError("invalid", "cursor is not one this API returned", "cursor");
  }
}

type RunRow = {
  id: number;
  schedule_id: number;
  schedule_name: string;
  scheduled_for: Date;
  sf_text: string;
  slot_seq: number;
  due_at: Date;
  run_after: Date;
  state: RunState;
  origin: RunView["origin"];
  attempts: number;
  max_attempts: number;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
  last_error: string | null;
  skip_reason: RunView["skipReason"];
  skipped_until: Date | null;
  skipped_count: number | null;
  coalesced_into: Date | null;
  created_at: Date;
  worker_id: string | null;
  /** The schedule's handler (the queue row's copy is the same), and whether the run is due and pending. */
  handler: string;
  waiting: boolean;
};

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

function toRunView(r: RunRow, unserved: Set<string>, stuck: Map<number, StuckRun>): RunView {
  const stuckRun = stuck.get(Number(r.id));
  return {
    id: Number(r.id),
    scheduleId: Number(r.schedule_id),
    scheduleName: r.schedule_name,
    scheduledFor: iso(r.scheduled_for)!,
    dueAt: iso(r.due_at)!,
    runAfter: iso(r.run_after)!,
    state: r.state,
    origin: r.origin,
    attempts: r.attempts,
    maxAttempts: r.max_attempts,
    leaseOwner: r.lease_owner,
    leaseExpiresAt: iso(r.lease_expires_at),
    startedAt: iso(r.started_at),
    finishedAt: iso(r.finished_at),
    lastError: r.last_error,
    skipReason: r.skip_reason,
    skippedUntil: iso(r.skipped_until),
    skippedCount: r.skipped_count,
    coalescedInto: iso(r.coalesced_into),
    createdAt: iso(r.created_at)!,
    workerId: r.worker_id,
    unservedHandler: r.waiting && unserved.has(r.handler) ? { handler: r.handler, since: iso(r.run_after) } : null,
    stuck: stuckRun !== undefined,
    stuckSince: stuckRun?.since ?? null,
  };
}

/** The runs' views, with which of the waiting ones' handlers no live worker serves and which running ones are stuck (a query each). */
async function toRunViews(db: Db, rows: RunRow[]): Promise<RunView[]> {
  const unserved = await unservedHandlers(db, rows.filter((r) => r.waiting).map((r) => r.handler));
  const running = rows.filter((r) => r.state === "running").map((r) => ({ id: Number(r.id), scheduleId: Number(r.schedule_id), scheduledForText: r.sf_text }));
  const stuck = await stuckRuns(db, running);
  return rows.map((r) => toRunView(r, unserved, stuck));
}

/** The columns every run read adds to run_status's: its handler and whether it is due and pending. */
const WAITING = sql`s.handler, (r.state = 'pending' AND r.run_after <= sk_now()) AS waiting`;

/** States whose runs have a row in run_queue: a filter on only these reads the queue's partial indexes. */
const QUEUED_STATES: RunState[] = ["pending", "running", "dead"];

/**
 * The schedules carrying one of `tags`, when they are few enough to read a page of runs each; null
 * when they are more. A page each reads about reach × page rows; one walk of every schedule's runs
 * filtered by tag about page × fleet / reach (runs spread over the schedules alike), so a page each
 * is the cheaper while reach² ≤ fleet. The fleet is the planner's count of schedules rows (0 before
 * their first analyse: the walk), and at most √fleet + 1 ids are read (schedules_tags_idx).
 */
async function narrowTagReach(db: Db, tags: string[]): Promise<number[] | null> {
  return db.transaction(async (tx) => {
    // Planned for these tags and this limit, not generically (the pool's default): a rare tag is
    // then read through schedules_tags_idx, where a generic plan scans the table for the limit.
    await tx.execute(sql`SET LOCAL plan_cache_mode = force_custom_plan`);
    const fleet = await tx.execute<{ n: number }>(sql`SELECT greatest(reltuples, 0)::float8 AS n FROM pg_class WHERE oid = 'schedules'::regclass`);
    const cap = Math.ceil(Math.sqrt(Number(fleet.rows[0].n)));
    const r = await tx.execute<{ id: string }>(sql`SELECT s.id FROM schedules s WHERE ${carriesAnyTag(tags)} LIMIT ${cap + 1}`);
    return r.rows.length > cap ? null : r.rows.map((x) => Number(x.id));
  });
}

/**
 * Runs newest slot first (a manual run before the scheduled run of the same instant, then by id),
 * as they stand now (`run_status`: a running run's live part comes from run_queue).
 *
 * - Named schedules (one schedule's history, a name, a narrow tag scope): each schedule's runs are
 *   read through runs_slot_key, or, when the filter names only unfinished states, through
 *   run_queue's partial index of each state; at most one page per schedule, and the pages are
 *   merged. The cost is bounded by the schedules named × page size, not by the size of the runs table.
 * - Every schedule (the Runs page, a wide tag scope): one walk of runs_time_idx (scheduled_for,
 *   slot_seq, id, newest first) that stops after a page, so the fleet's size does not enter; or,
 *   when the filter names only unfinished states, those states' queue rows (bounded by what is
 *   unfinished), sorted. A tag scope filters the walk's schedules.
 */
export async function listRuns(db: Db, f: RunFilter = {}): Promise<RunPage> {
  const limit = Math.min(Math.max(f.limit ?? 50, 1), MAX_PAGE);
  // A tag scope: its schedules named when few (read a page each), else its tags filter the walk.
  let scheduleIds = f.scheduleIds;
  const scheduleConds: SQL[] = [];
  if (f.tags) {
    const narrow = await narrowTagReach(db, f.tags);
    if (narrow) scheduleIds = scheduleIds ? scheduleIds.filter((id) => narrow.includes(id)) : narrow;
    else scheduleConds.push(carriesAnyTag(f.tags));
  }
  const cursor = f.cursor ? decodeCursor(f.cursor) : null;
  // The same slot conditions on runs (r) and on the queue (q, with its run's slot_seq from the runs row rs).
  // `perSchedule`: one schedule's runs, whose (scheduled_for, slot_seq) is unique, so the cursor's
  // first two columns bound its index walk and its id only drops the cursor's own slot.
  const slotConds = (t: "r" | "q", perSchedule: boolean): SQL[] => {
    const sf = sql.raw(`${t}.scheduled_for`);
    const seq = t === "r" ? sql`r.slot_seq` : sql`rs.slot_seq`;
    const id = t === "r" ? sql`r.id` : sql`q.run_id`;
    const conds: SQL[] = [];
    if (f.from) conds.push(sql`${sf} >= ${f.from.toISOString()}::timestamptz`);
    if (f.to) conds.push(sql`${sf} < ${f.to.toISOString()}::timestamptz`);
    if (f.upcoming === false) conds.push(sql`${sf} <= sk_now()`);
    if (cursor) {
      const at = sql`${cursor.scheduledFor}::timestamptz`;
      if (perSchedule) conds.push(sql`(${sf}, ${seq}) <= (${at}, ${cursor.slotSeq}::bigint)`);
      conds.push(sql`(${sf}, ${seq}, ${id}) < (${at}, ${cursor.slotSeq}::bigint, ${cursor.id}::bigint)`);
    }
    return conds;
  };
  const and = (conds: SQL[]) => (conds.length ? sql` AND ${sql.join(conds, sql` AND `)}` : sql``);
  const onlyQueued = Boolean(f.states?.length && f.states.every((st) => QUEUED_STATES.includes(st)));
  // NULLS LAST as in the indexes (the columns are NOT NULL, but plain DESC means NULLS FIRST and
  // the planner would sort instead of walking the index).
  const order = sql`ORDER BY r.scheduled_for DESC NULLS LAST, r.slot_seq DESC NULLS LAST, r.id DESC NULLS LAST`;
  let from: SQL;
  if (scheduleIds) {
    let perSchedule: SQL;
    if (onlyQueued) {
      // One look-up per state, each through that state's partial index (the literal lets the planner
      // match it), newest first, with each run's slot_seq from its runs row (a primary-key probe);
      // then the runs themselves by primary key.
      const byState = [...new Set(f.states)].map(
        (st) => sql`(SELECT q.run_id FROM run_queue q JOIN runs rs ON rs.id = q.run_id
          WHERE q.schedule_id = s.id AND q.state = ${sql.raw(`'${st}'`)}${and(slotConds("q", true))}
          ORDER BY q.scheduled_for DESC, rs.slot_seq DESC LIMIT ${limit + 1})`,
      );
      perSchedule = sql`
        SELECT r.* FROM (${sql.join(byState, sql` UNION ALL `)}) x
        JOIN run_status r ON r.id = x.run_id
        WHERE r.state = ANY(${sql.param(f.states)}::run_state[])
        ORDER BY r.scheduled_for DESC NULLS LAST, r.slot_seq DESC NULLS LAST LIMIT ${limit + 1}`;
    } else {
      const conds = [sql`r.schedule_id = s.id`, ...slotConds("r", true)];
      if (f.states?.length) conds.push(sql`r.state = ANY(${sql.param(f.states)}::run_state[])`);
      perSchedule = sql`
        SELECT r.* FROM run_status r WHERE ${sql.join(conds, sql` AND `)}
        ORDER BY r.scheduled_for DESC NULLS LAST, r.slot_seq DESC NULLS LAST LIMIT ${limit + 1}`;
    }
    from = sql`schedules s CROSS JOIN LATERAL (${perSchedule}) r WHERE s.id = ANY(${sql.param(scheduleIds)}::bigint[])${and(scheduleConds)}`;
  } else if (onlyQueued) {
    from = sql`(
        SELECT r.* FROM run_queue q JOIN runs rs ON rs.id = q.run_id JOIN run_status r ON r.id = q.run_id
        WHERE q.state = ANY(${sql.param(f.states)}::run_state[]) AND r.state = ANY(${sql.param(f.states)}::run_state[])${and(slotConds("q", false))}
      ) r JOIN schedules s ON s.id = r.schedule_id WHERE true${and(scheduleConds)}`;
  } else {
    const conds = slotConds("r", false);
    if (f.states?.length) conds.push(sql`r.state = ANY(${sql.param(f.states)}::run_state[])`);
    from = sql`run_status r JOIN schedules s ON s.id = r.schedule_id WHERE true${and([...conds, ...scheduleConds])}`;
  }
  const result = await db.execute<RunRow>(sql`
    SELECT r.*, r.scheduled_for::text AS sf_text, s.name AS schedule_name, ${WAITING}
    FROM ${from}
    ${order}
    LIMIT ${limit + 1}`);
  const rows = result.rows;
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  return { runs: await toRunViews(db, page), nextCursor: more && last ? encodeCursor(last.sf_text, Number(last.slot_seq), Number(last.id)) : null };
}

/** One run with its attempts (oldest first) and the idempotency key its handler receives. */
export async function getRunDetail(db: Db, id: number): Promise<RunDetail> {
  const r = await db.execute<RunRow & { handler: string; deleted_at: Date | null; payload_override: unknown }>(sql`
    SELECT r.*, r.scheduled_for::text AS sf_text, s.name AS schedule_name, ${WAITING}, s.deleted_at,
      (SELECT x.payload_override FROM runs x WHERE x.id = r.id) AS payload_override
    FROM run_status r JOIN schedules s ON s.id = r.schedule_id
    WHERE r.id = ${id}`);
  const row = r.rows[0];
  if (!row) throw new AppError("not_found", `run ${id} not found`);
  const a = await db.execute<{
    attempt: number;
    worker_id: string;
    started_at: Date;
    finished_at: Date | null;
    outcome: AttemptView["outcome"];
    error: string | null;
    duration_ms: number | null;
    has_output: boolean;
    result: unknown;
    log: LogLine[] | null;
    stdout: string | null;
    stderr: string | null;
  }>(sql`
    SELECT a.*, o.run_id IS NOT NULL AS has_output, o.result, o.log, o.stdout, o.stderr
    FROM run_attempts a LEFT JOIN attempt_output o ON o.run_id = a.run_id AND o.attempt = a.attempt
    WHERE a.run_id = ${id} ORDER BY a.attempt`);
  const [view] = await toRunViews(db, [row]);
  return {
    ...view,
    idempotencyKey: idempotencyKey(view.scheduleId, new Date(row.scheduled_for), view.origin, view.id),
    scheduleHandler: row.handler,
    scheduleDeleted: row.deleted_at !== null,
    payloadOverride: row.payload_override === null || row.payload_override === undefined ? null : maskSecrets(row.payload_override),
    attemptsList: a.rows.map((x) => ({
      attempt: x.attempt,
      workerId: x.worker_id,
      startedAt: iso(x.started_at)!,
      finishedAt: iso(x.finished_at),
      outcome: x.outcome,
      error: x.error,
      durationMs: x.duration_ms,
      output: x.has_output ? { result: x.result ?? null, log: x.log ?? [], stdout: x.stdout, stderr: x.stderr } : null,
    })),
  };
}

/** Parse the query string of GET /api/runs and GET /api/schedules/{name}/runs. */
export function parseRunQuery(params: URLSearchParams): Omit<RunFilter, "scheduleIds"> {
  const states = params.getAll("state").flatMap((s) => s.split(",")).filter(Boolean);
  for (const s of states) if (!RUN_STATES.includes(s as RunState)) throw new AppError("invalid", `state must be one of ${RUN_STATES.join(", ")}`, "state");
  const date = (key: string) => {
    const v = params.get(key);
    if (!v) return undefined;
    const d = new Date(v);
    if (Number.isNaN(d.getTime())) throw new AppError("invalid", `${key} must be an ISO 8601 instant`, key);
    return d;
  };
  const limitText = params.get("limit");
  const limit = limitText === null ? undefined : Number(limitText);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE)) throw new AppError("invalid", `limit must be an integer from 1 to ${MAX_PAGE}`, "limit");
  const upcoming = params.get("upcoming");
  if (upcoming !== null && upcoming !== "true" && upcoming !== "false") throw new AppError("invalid", "upcoming must be true or false", "upcoming");
  return { states: states as RunState[], from: date("from"), to: date("to"), cursor: params.get("cursor"), limit, upcoming: upcoming !== "false" };
}
