/**
 * Schedule mutations. Each is ONE transaction that includes its audit record, so nothing is ever
 * half-saved. Times come from sk_now() (promise: one clock decides).
 */
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { schedules, type Run, type Schedule } from "../db/schema";
import { isUniqueViolation } from "../db/sql-errors";
import { AppError } from "../errors";
import { diffFields, recordAudit, type Actor } from "../audit/record";
import { maskSecrets, refuseMaskedPayload, restoreMasked } from "../security/mask";
import { NEVER, timingOf } from "./catch-up";
import { validateConcurrency, validateHandlerPayload, validateTiming, type ScheduleCreateInput, type SchedulePatch } from "./input";
import { firstSlotAtOrAfter } from "./timing";
import { requireScheduleByName } from "./queries";
import { retimedNextSlotAt } from "./retime-start";
import { toScheduleView } from "./view";
import { RUNS_CHANNEL } from "../runs/requeue";

type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
type Executor = Pick<Db, "execute">;
/** A transaction the caller holds (schedules as code runs several mutations in one). */
export type ScheduleTx = Tx;
/** Set by an apply of a schedules file (lib/schedules/as-code/): the file's source and the body applied. */
export type ManagedBy = { by: string; spec: unknown };

/** sk_now() inside the caller's transaction. */
export async function dbNow(tx: Executor): Promise<Date> {
  const { rows } = await tx.execute<{ now: string }>(sql`SELECT sk_now() AS now`);
  return new Date(rows[0].now);
}

function nameTaken(err: unknown): boolean {
  return isUniqueViolation(err) || isUniqueViolation((err as { cause?: unknown })?.cause);
}

/** The first slot at or after sk_now(): where a new schedule's high-water mark starts (a re-timed one's: ./retime-start.ts). */
function firstSlotFrom(s: Pick<Schedule, "cron" | "everySeconds" | "timezone">, now: Date): Date {
  return firstSlotAtOrAfter(timingOf(s), now) ?? NEVER;
}

/** Create a schedule: partition = sk_partition_of(id, cluster.partitions), high-water mark = first slot from sk_now(). */
export async function createSchedule(db: Db, input: ScheduleCreateInput, actor: Actor): Promise<Schedule> {
  try {
    return await db.transaction((tx) => createScheduleIn(tx, input, actor));
  } catch (err) {
    if (nameTaken(err)) throw new AppError("conflict", `a schedule named "${input.name}" already exists`, "name", { cause: err });
    throw err;
  }
}

/** createSchedule inside the caller's transaction (`managed`: the apply of a schedules file that makes it). */
export async function createScheduleIn(tx: Tx, input: ScheduleCreateInput, actor: Actor, managed?: ManagedBy): Promise<Schedule> {
  refuseMaskedPayload(input.payload);
  validateHandlerPayload(input.handler, input.payload);
  const now = await dbNow(tx);
  const timing = { cron: input.cron ?? null, everySeconds: input.everySeconds ?? null, timezone: input.timezone };
  const [row] = await tx
    .insert(schedules)
    .values({
      name: input.name,
      description: input.description,
      handler: input.handler,
      payload: input.payload,
      ...timing,
      catchUp: input.catchUp,
      maxLatenessSeconds: input.maxLatenessSeconds,
      jitterSeconds: input.jitterSeconds,
      overlap: input.overlap,
      retryMaxAttempts: input.retry.maxAttempts,
      retryBaseSeconds: input.retry.baseSeconds,
      retryCapSeconds: input.retry.capSeconds,
      leaseSeconds: input.leaseSeconds,
      enabled: input.enabled,
      lateAfterSeconds: input.lateAfterSeconds,
      lateGraceSeconds: input.lateGraceSeconds,
      backlogAfterSeconds: input.backlogAfterSeconds,
      tags: input.tags,
      owner: input.owner,
      timeoutSeconds: input.timeoutSeconds,
      queue: input.queue,
      maxConcurrent: input.maxConcurrent,
      ...(managed ? { managedBy: managed.by, managedSpec: managed.spec } : {}),
      nextSlotAt: firstSlotFrom(timing, now),
      partition: 0,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  // The id exists only now: its partition, by the one rule (sk_partition_of), in the same transaction.
  const { rows } = await tx.execute<{ partition: number }>(sql`
    UPDATE schedules SET partition = sk_partition_of(schedules.id, c.partitions)
    FROM cluster c WHERE c.id = 1 AND schedules.id = ${row.id} RETURNING schedules.partition`);
  const created = { ...row, partition: rows[0].partition };
  await recordAudit(tx, actor, { action: "schedule.create", targetType: "schedule", targetId: created.name, scheduleId: created.id, after: toScheduleView(created) });
  return created;
}

/**
 * Unmaterialise the future: delete never-attempted pending slot runs and move the high-water mark
 * back to the first of them, so the tick writes them again under the schedule's current timing
 * and catch-up policy (used by pause and by timing changes).
 */
async function rewindPendingSlots(tx: Tx, scheduleId: number): Promise<void> {
  // Waiting, not running: the queue says which (a running run reads 'pending' in runs).
  await tx.execute(sql`
    WITH unqueued AS (
      DELETE FROM run_queue
      WHERE schedule_id = ${scheduleId} AND state = 'pending' AND attempts = 0 AND origin IN ('schedule', 'catch_up')
      RETURNING run_id
    ),
    gone AS (
      DELETE FROM runs WHERE id IN (SELECT run_id FROM unqueued)
      RETURNING scheduled_for
    )
    UPDATE schedules SET next_slot_at = least(next_slot_at, (SELECT min(scheduled_for) FROM gone))
    WHERE id = ${scheduleId} AND EXISTS (SELECT 1 FROM gone)`);
}

/**
 * Apply a patch under optimistic concurrency: `expectedVersion` must be the stored version (else 409
 * on "version"). Changing the timing restarts the high-water mark at the first new slot at or after
 * sk_now() and after every slot time already covered (./retime-start.ts).
 */
export async function updateSchedule(db: Db, name: string, patch: SchedulePatch, expectedVersion: number | undefined, actor: Actor): Promise<Schedule> {
  try {
    return await db.transaction((tx) => updateScheduleIn(tx, name, patch, expectedVersion, actor));
  } catch (err) {
    if (nameTaken(err)) throw new AppError("conflict", `a schedule named "${patch.name}" already exists`, "name", { cause: err });
    throw err;
  }
}

/** updateSchedule inside the caller's transaction (`managed`: the apply of a schedules file that changes it). */
export async function updateScheduleIn(tx: Tx, name: string, patch: SchedulePatch, expectedVersion: number | undefined, actor: Actor, managed?: ManagedBy): Promise<Schedule> {
  if (expectedVersion === undefined) throw new AppError("invalid", "version is required: send the version you are editing", "version");
  const before = await requireScheduleByName(tx, name, { lock: true });
  // A form that showed a masked secret sends the mask back: keep the stored value there.
  if (patch.payload !== undefined) patch = { ...patch, payload: restoreMasked(patch.payload, before.payload) };
  refuseMaskedPayload(patch.payload);
  if (before.version !== expectedVersion) {
    throw new AppError("conflict", `the schedule changed since you loaded it (version ${before.version}, yours ${expectedVersion}); reload and try again`, "version");
  }
  const now = await dbNow(tx);
  const switchesToCron = typeof patch.cron === "string";
  const switchesToEvery = typeof patch.everySeconds === "number";
  const timing = {
    cron: switchesToCron ? (patch.cron as string) : switchesToEvery ? null : before.cron,
    everySeconds: switchesToEvery ? (patch.everySeconds as number) : switchesToCron ? null : before.everySeconds,
    timezone: patch.timezone ?? before.timezone,
  };
  validateTiming(timing);
  validateConcurrency({ overlap: patch.overlap ?? before.overlap, maxConcurrent: patch.maxConcurrent === undefined ? before.maxConcurrent : patch.maxConcurrent });
  if (patch.handler !== undefined || patch.payload !== undefined) validateHandlerPayload(patch.handler ?? before.handler, patch.payload ?? before.payload);
  const timingChanged = timing.cron !== before.cron || timing.everySeconds !== before.everySeconds || timing.timezone !== before.timezone;
  const values: Partial<Schedule> = {
    ...pick(patch, ["name", "description", "handler", "payload", "catchUp", "maxLatenessSeconds", "jitterSeconds", "overlap", "leaseSeconds", "enabled", "lateAfterSeconds", "lateGraceSeconds", "backlogAfterSeconds", "tags", "owner", "queue", "maxConcurrent"]),
    ...pick(patch, ["timeoutSeconds"]),
    ...timing,
    retryMaxAttempts: patch.retry?.maxAttempts ?? before.retryMaxAttempts,
    retryBaseSeconds: patch.retry?.baseSeconds ?? before.retryBaseSeconds,
    retryCapSeconds: patch.retry?.capSeconds ?? before.retryCapSeconds,
    updatedAt: now,
    version: before.version + 1,
    ...(managed ? { managedBy: managed.by, managedSpec: managed.spec } : {}),
  };
  // Switching a paused schedule on is a resume: its pause note and resume time go.
  if (!before.enabled && values.enabled === true) Object.assign(values, { pausedNote: null, resumeAt: null });
  if ((values.retryCapSeconds as number) < (values.retryBaseSeconds as number)) {
    throw new AppError("invalid", "retry.capSeconds must be at least retry.baseSeconds", "retry.capSeconds");
  }
  const pausing = before.enabled && values.enabled === false;
  if (timingChanged || pausing) await rewindPendingSlots(tx, before.id);
  // After the withdrawal: the rows left say how much schedule time is covered already.
  if (timingChanged) values.nextSlotAt = await retimedNextSlotAt(tx, before.id, timingOf(timing), now);
  const [after] = await tx.update(schedules).set(values).where(eq(schedules.id, before.id)).returning();
  // Diff the raw payloads so a changed secret is recorded as changed; recordAudit masks the values.
  const diff = diffFields({ ...toScheduleView(before), payload: before.payload } as Record<string, unknown>, { ...toScheduleView(after), payload: after.payload } as Record<string, unknown>);
  await recordAudit(tx, actor, { action: "schedule.update", targetType: "schedule", targetId: after.name, scheduleId: after.id, ...diff });
  return after;
}

function pick<T extends object, K extends keyof T>(o: T, keys: K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

/**
 * Delete a schedule. keepHistory: soft delete (deleted_at; the name is free again; pending runs
 * become skipped 'deleted'; history stays readable). Otherwise: hard delete, cascading runs and attempts.
 */
export async function deleteSchedule(db: Db, name: string, opts: { keepHistory: boolean }, actor: Actor): Promise<void> {
  await db.transaction((tx) => deleteScheduleIn(tx, name, opts, actor));
}

/** deleteSchedule inside the caller's transaction. */
export async function deleteScheduleIn(tx: Tx, name: string, opts: { keepHistory: boolean }, actor: Actor): Promise<void> {
  const s = await requireScheduleByName(tx, name, { lock: true });
  if (opts.keepHistory) {
    // Waiting runs are withdrawn; a running one finishes as it would have.
    await tx.execute(sql`
      WITH unqueued AS (
        DELETE FROM run_queue WHERE schedule_id = ${s.id} AND state = 'pending' RETURNING run_id
      )
      UPDATE runs SET state = 'skipped', skip_reason = 'deleted', finished_at = sk_now(),
             skipped_until = scheduled_for, skipped_count = 1
      WHERE id IN (SELECT run_id FROM unqueued)`);
    await tx.execute(sql`UPDATE schedules SET deleted_at = sk_now(), enabled = false, updated_at = sk_now(), version = version + 1 WHERE id = ${s.id}`);
  } else {
    await tx.execute(sql`DELETE FROM schedules WHERE id = ${s.id}`);
  }
  await recordAudit(tx, actor, {
    action: "schedule.delete",
    targetType: "schedule",
    targetId: s.name,
    scheduleId: s.id,
    before: toScheduleView(s),
    after: { history: opts.keepHistory ? "kept" : "deleted" },
  });
}

/** What a pause by hand may say: why (`note`: an apply leaves the schedule paused) and when the worker resumes it. */
export type PauseHold = { note?: string; resumeAt?: Date };

async function setEnabled(db: Db, name: string, enabled: boolean, actor: Actor, hold: PauseHold = {}): Promise<Schedule> {
  return db.transaction(async (tx) => setEnabledIn(tx, await requireScheduleByName(tx, name, { lock: true }), enabled, actor, hold));
}

/** Pause or resume a schedule the caller's transaction holds locked. Resuming clears the note and resume time. */
export async function setEnabledIn(tx: Tx, s: Schedule, enabled: boolean, actor: Actor, hold: PauseHold = {}): Promise<Schedule> {
  const noted = hold.note !== undefined || hold.resumeAt !== undefined;
  if (s.enabled === enabled && !(noted && !enabled)) return s;
  if (hold.resumeAt && hold.resumeAt.getTime() <= (await dbNow(tx)).getTime()) {
    throw new AppError("invalid", "resumeAt must be in the future (by the database clock)", "resumeAt");
  }
  // Pausing unwrites the future; resuming leaves next_slot_at where it stood, so the slots missed
  // while paused meet the catch-up policy on the next tick.
  if (!enabled && s.enabled) await rewindPendingSlots(tx, s.id);
  const pausedNote = enabled ? null : (hold.note ?? null);
  const resumeAt = enabled ? null : (hold.resumeAt ?? null);
  const [after] = await tx
    .update(schedules)
    .set({ enabled, pausedNote, resumeAt, updatedAt: sql`sk_now()`, version: sql`${schedules.version} + 1` })
    .where(eq(schedules.id, s.id))
    .returning();
  await recordAudit(tx, actor, {
    action: enabled ? "schedule.resume" : "schedule.pause",
    targetType: "schedule",
    targetId: s.name,
    scheduleId: s.id,
    before: { enabled: s.enabled, ...(s.pausedNote !== null ? { note: s.pausedNote } : {}) },
    after: { enabled, ...(pausedNote !== null ? { note: pausedNote } : {}), ...(resumeAt !== null ? { resumeAt: resumeAt.toISOString() } : {}) },
  });
  return after;
}

/** Pause: the tick stops writing slots; never-attempted pending slots are withdrawn. A note or resume time may be given. */
export function pauseSchedule(db: Db, name: string, actor: Actor, hold: PauseHold = {}): Promise<Schedule> {
  return setEnabled(db, name, false, actor, hold);
}

/** Resume: slots missed while paused follow the schedule's catch-up policy. */
export function resumeSchedule(db: Db, name: string, actor: Actor): Promise<Schedule> {
  return setEnabled(db, name, true, actor);
}

/**
 * Create one manual run now (origin 'manual', scheduled_for = sk_now()), distinct from every slot.
 * `payload`, when given, is this run's in place of the schedule's (checked by the caller against the
 * handler: lib/schedules/run-now-input.ts); the schedule and its cadence are left alone.
 */
export async function runNow(db: Db, name: string, actor: Actor, opts: { payload?: Record<string, unknown>; handler?: string } = {}): Promise<Run> {
  return db.transaction(async (tx) => {
    const s = await requireScheduleByName(tx, name, { lock: true });
    // The payload was checked against the handler the caller read; an edit since may have changed it.
    if (opts.payload !== undefined && opts.handler !== undefined && opts.handler !== s.handler) {
      throw new AppError("conflict", `the schedule's handler changed to ${s.handler} meanwhile; check the payload against it and try again`, "payload");
    }
    const override = opts.payload === undefined ? null : JSON.stringify(opts.payload);
    const { rows } = await tx.execute<{ id: number }>(sql`
      INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, origin, max_attempts, payload_override)
      VALUES (${s.id}, ${s.partition}, sk_now(), sk_now(), sk_now(), 'pending', 'manual', ${s.retryMaxAttempts}, ${override}::jsonb)
      RETURNING id`);
    const [run] = await tx.query.runs.findMany({ where: (r, { eq: e }) => e(r.id, rows[0].id) });
    // Wake idle workers at once rather than at their next poll (LISTEN is a hint, polling the rule).
    await tx.execute(sql`SELECT pg_notify(${RUNS_CHANNEL}, 'run-now')`);
    await recordAudit(tx, actor, {
      action: "schedule.run_now",
      targetType: "run",
      targetId: run.id,
      scheduleId: s.id,
      after: { runId: run.id, scheduledFor: run.scheduledFor, ...(opts.payload !== undefined ? { payload: maskSecrets(opts.payload) } : {}) },
    });
    return run;
  });
}
