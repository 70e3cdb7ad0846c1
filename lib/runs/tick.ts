/**
 * The tick: turn schedules into slot rows a short horizon ahead. Every worker may tick at any time;
 * they cannot collide, because
 * - the unique key runs(schedule_id, scheduled_for, slot_seq), slot_seq being 0 for every run but a
 *   manual one, lets each slot exist once (promise: each slot exists once), and the insert says
 *   ON CONFLICT DO NOTHING;
 * - due schedules are taken FOR UPDATE SKIP LOCKED, so two tickers work on different schedules;
 * - the high-water mark (schedules.next_slot_at) advances in the same transaction as the insert,
 *   and lives in the database, so a worker that restarts every hour never loses a weekly slot;
 * - what is due is decided by sk_now() alone (promise: one clock decides).
 * Per batch: one SELECT … FOR UPDATE SKIP LOCKED (an index scan per partition), one INSERT … SELECT FROM unnest, one UPDATE … FROM unnest.
 */
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import type { CatchUpPolicy } from "../db/schema";
import { planSlots, type PlannedRun, type PlannedSkip } from "../schedules/catch-up";
import { runLatenessPassRounds } from "./lateness-pass";

export type TickOptions = {
  /** Partitions this ticker holds; null = all partitions. */
  partitions: number[] | null;
  /** Materialise slots up to sk_now() + this. */
  horizonSeconds: number;
  /** A slot whose due time is older than sk_now() - this when first seen unclaimed is missed. */
  graceSeconds: number;
  /** Schedules per transaction. */
  batchSize?: number;
  /** Slots looked at one by one per schedule per tick; the rest continue next tick. */
  maxSlotsPerSchedule?: number;
  /** Batches per call, so one call stays bounded when many schedules are due. */
  maxBatches?: number;
  /** Run the lateness pass after materialising (default true); the worker's tick loop runs it every few seconds. */
  latenessPass?: boolean;
};

/** What one tick did: schedules advanced, runs created, and slots skipped by reason. */
export type TickResult = { schedules: number; created: number; skipped: number; coalesced: number; tooLate: number };

type DueRow = {
  id: number;
  partition: number;
  cron: string | null;
  every_seconds: number | null;
  timezone: string;
  catch_up: CatchUpPolicy;
  max_lateness_seconds: number | null;
  jitter_seconds: number;
  retry_max_attempts: number;
  // db.execute hands timestamptz back as text.
  next_slot_at: string | Date;
  now: string | Date;
};

/**
 * Materialise due slots of the given partitions in bulk batches, then run the lateness pass over
 * the runs already written. In that order: a late run coalesced under `latest` goes into the
 * schedule's newest due slot, and after an outage that slot is one this tick has just written.
 */
export async function tickOnce(db: Db, opts: TickOptions): Promise<TickResult> {
  const batchSize = opts.batchSize ?? 200;
  const total: TickResult = { schedules: 0, created: 0, skipped: 0, coalesced: 0, tooLate: 0 };
  // A worker that holds no partition (yet, or any more) has nothing to tick; its per-partition
  // share of a batch would be batchSize / 0.
  if (opts.partitions !== null && opts.partitions.length === 0) return total;
  const add = (r: Partial<TickResult>) => {
    for (const k of Object.keys(total) as (keyof TickResult)[]) total[k] += r[k] ?? 0;
  };
  for (let i = 0; i < (opts.maxBatches ?? 10); i++) {
    const batch = await materialiseBatch(db, opts, batchSize);
    add(batch);
    if (!batch.more) break;
  }
  if (opts.latenessPass !== false) {
    add(await runLatenessPassRounds(db, { partitions: opts.partitions, graceSeconds: opts.graceSeconds }));
  }
  return total;
}

type BatchResult = TickResult & { more: boolean };

/** Where the next multi-partition tick starts, so a backlog in one partition cannot hold the others back. */
let rotation = 0;

/**
 * The due schedules of one batch, locked (FOR UPDATE SKIP LOCKED). With partitions, one index scan
 * per partition (LATERAL, in rotating order, stopping at the batch size) rather than
 * `partition = ANY(…)`: that is a bitmap scan, and a bitmap scan never marks dead index entries.
 * Every tick that advances a schedule leaves a dead entry in schedules_tick_idx (next_slot_at is
 * in it), so after the top of the hour's tick each bitmap scan would re-read every schedule
 * advanced, until vacuum, on every tick of the spike. A plain index scan marks them dead on the
 * first pass.
 *
 * Each partition gives at most its share of the batch (`perPartition`), so a batch holds runs of
 * every held partition and, written in schedule order, each page of runs ends up with a few runs
 * of each partition rather than a few dozen of one. That is what lets the finish be a HOT update:
 * a finish rewrites the runs of one claim, which all come from one partition, and a page has room
 * (fillfactor, lib/db/sql/tables/runs.sql) for the new versions of some of its rows before a prune,
 * not of all of them.
 */
function selectDue(opts: TickOptions, batchSize: number, perPartition: number): SQL {
  const columns = sql`s.id, s.partition, s.cron, s.every_seconds, s.timezone, s.catch_up, s.max_lateness_seconds,
             s.jitter_seconds, s.retry_max_attempts, s.next_slot_at, sk_now() AS now`;
  const due = sql`s.enabled AND s.deleted_at IS NULL
        AND s.next_slot_at <= (SELECT sk_now()) + make_interval(secs => ${opts.horizonSeconds})`;
  if (opts.partitions === null) {
    return sql`
      SELECT ${columns} FROM schedules s WHERE ${due}
      ORDER BY s.next_slot_at LIMIT ${batchSize}
      FOR UPDATE SKIP LOCKED`;
  }
  const parts = opts.partitions;
  const start = rotation++ % Math.max(1, parts.length);
  const ordered = [...parts.slice(start), ...parts.slice(0, start)];
  return sql`
      SELECT s.* FROM unnest(${sql.param(ordered)}::int[]) AS p(partition)
      CROSS JOIN LATERAL (
        SELECT ${columns} FROM schedules s
        WHERE s.partition = p.partition AND ${due}
        ORDER BY s.next_slot_at LIMIT ${perPartition}
        FOR UPDATE SKIP LOCKED) s
      LIMIT ${batchSize}`;
}

async function materialiseBatch(db: Db, opts: TickOptions, batchSize: number): Promise<BatchResult> {
  const parts = opts.partitions?.length ?? 1;
  const perPartition = Math.max(1, Math.ceil(batchSize / parts));
  return db.transaction(async (tx) => {
    const due = await tx.execute<DueRow>(selectDue(opts, batchSize, perPartition));
    // More may be due when the batch filled, or when some partition gave its whole share.
    const counts = new Map<number, number>();
    for (const s of due.rows) counts.set(s.partition, (counts.get(s.partition) ?? 0) + 1);
    const more = due.rows.length >= batchSize || [...counts.values()].some((n) => n >= perPartition);
    const result: BatchResult = { schedules: due.rows.length, created: 0, skipped: 0, coalesced: 0, tooLate: 0, more };
    if (due.rows.length === 0) return result;
    // Schedule order interleaves the partitions on each page of runs (see selectDue).
    due.rows.sort((a, b) => Number(a.id) - Number(b.id));

    const rows = new RowColumns();
    const advanced: { ids: number[]; next: Date[] } = { ids: [], next: [] };
    for (const s of due.rows) {
      const plan = planSlots(
        {
          id: s.id,
          cron: s.cron,
          everySeconds: s.every_seconds,
          timezone: s.timezone,
          catchUp: s.catch_up,
          maxLatenessSeconds: s.max_lateness_seconds,
          jitterSeconds: s.jitter_seconds,
          nextSlotAt: new Date(s.next_slot_at),
        },
        { now: new Date(s.now), horizonSeconds: opts.horizonSeconds, graceSeconds: opts.graceSeconds, maxSlots: opts.maxSlotsPerSchedule ?? 1000 },
      );
      for (const run of plan.runs) rows.addRun(s, run);
      for (const skip of plan.skips) rows.addSkip(s, skip);
      advanced.ids.push(s.id);
      advanced.next.push(plan.nextSlotAt);
    }

    if (rows.length > 0) {
      const inserted = await tx.execute<{ state: string; origin: string; skip_reason: string | null; skipped_count: number | null }>(sql`
        INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, origin, max_attempts,
                          skip_reason, skipped_until, skipped_count, coalesced_into, finished_at)
        SELECT u.schedule_id, u.partition, u.scheduled_for, u.due_at, u.due_at, u.state::run_state, u.origin::run_origin,
               u.max_attempts, u.skip_reason::skip_reason, u.skipped_until, u.skipped_count, u.coalesced_into,
               CASE WHEN u.state = 'skipped' THEN sk_now() END
        FROM unnest(${sql.param(rows.scheduleId)}::bigint[], ${sql.param(rows.partition)}::int[],
                    ${sql.param(rows.scheduledFor)}::timestamptz[], ${sql.param(rows.dueAt)}::timestamptz[],
                    ${sql.param(rows.state)}::text[], ${sql.param(rows.origin)}::text[], ${sql.param(rows.maxAttempts)}::int[],
                    ${sql.param(rows.skipReason)}::text[], ${sql.param(rows.skippedUntil)}::timestamptz[],
                    ${sql.param(rows.skippedCount)}::int[], ${sql.param(rows.coalescedInto)}::timestamptz[])
          AS u(schedule_id, partition, scheduled_for, due_at, state, origin, max_attempts,
               skip_reason, skipped_until, skipped_count, coalesced_into)
        ON CONFLICT (schedule_id, scheduled_for, slot_seq) DO NOTHING
        RETURNING state, origin, skip_reason, skipped_count`);
      for (const r of inserted.rows) {
        if (r.state === "pending") result.created++;
        else if (r.skip_reason === "missed") result.skipped += r.skipped_count ?? 1;
        else if (r.skip_reason === "coalesced") result.coalesced += r.skipped_count ?? 1;
        else if (r.skip_reason === "too_late") result.tooLate += r.skipped_count ?? 1;
      }
    }

    // Advance the high-water mark with the insert, in the same transaction: a slot is written once.
    await tx.execute(sql`
      UPDATE schedules SET next_slot_at = u.next_slot_at
      FROM unnest(${sql.param(advanced.ids)}::bigint[], ${sql.param(advanced.next)}::timestamptz[]) AS u(id, next_slot_at)
      WHERE schedules.id = u.id`);
    return result;
  });
}

/** Column arrays for one unnest() insert. */
class RowColumns {
  scheduleId: number[] = [];
  partition: number[] = [];
  scheduledFor: Date[] = [];
  dueAt: Date[] = [];
  state: string[] = [];
  origin: string[] = [];
  maxAttempts: number[] = [];
  skipReason: (string | null)[] = [];
  skippedUntil: (Date | null)[] = [];
  skippedCount: (number | null)[] = [];
  coalescedInto: (Date | null)[] = [];

  get length(): number {
    return this.scheduleId.length;
  }

  private push(s: DueRow, scheduledFor: Date, dueAt: Date, state: string, origin: string) {
    this.scheduleId.push(s.id);
    this.partition.push(s.partition);
    this.scheduledFor.push(scheduledFor);
    this.dueAt.push(dueAt);
    this.state.push(state);
    this.origin.push(origin);
    // runs.max_attempts = the schedule's retry policy at materialisation.
    this.maxAttempts.push(s.retry_max_attempts);
  }

  addRun(s: DueRow, run: PlannedRun) {
    this.push(s, run.scheduledFor, run.dueAt, "pending", run.origin);
    this.skipReason.push(null);
    this.skippedUntil.push(null);
    this.skippedCount.push(null);
    this.coalescedInto.push(null);
  }

  addSkip(s: DueRow, skip: PlannedSkip) {
    this.push(s, skip.scheduledFor, skip.scheduledFor, "skipped", "schedule");
    this.skipReason.push(skip.reason);
    this.skippedUntil.push(skip.skippedUntil);
    this.skippedCount.push(skip.skippedCount);
    this.coalescedInto.push(skip.coalescedInto);
  }
}
