// Test-only factories: a schedule, its runs and their attempts, inserted directly (no API
// validation). Each takes only what a test cares about; everything else gets a harmless default.
import { randomBytes } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { runs, schedules, type NewRun, type NewSchedule, type Run, type Schedule } from "../db/schema";
import { firstSlotAtOrAfter } from "../schedules/timing";

/** Schedule fields a test may set; everything else gets a default. */
export type ScheduleOverrides = Partial<Omit<NewSchedule, "id" | "partition" | "settingsId">> & { partition?: number };

/**
 * For a schedule whose runs only the test makes, beside a real worker or tick: it makes no slots of
 * its own (disabled) and the lateness pass leaves its late runs alone (catch-up all).
 */
export const RUNS_BY_HAND = { enabled: false, catchUp: "all" } as const satisfies ScheduleOverrides;

async function dbNow(db: Db): Promise<Date> {
  const { rows } = await db.execute<{ now: string }>(sql`SELECT sk_now() AS now`);
  return new Date(rows[0].now);
}

let names = 0;

/**
 * Insert a schedule. Defaults: a unique name, handler "noop", every 60 s in UTC, enabled, created
 * at sk_now(), next_slot_at = the first slot at or after sk_now(), partition 0 (a test that claims or ticks by
 * partition names the one it means).
 */
export async function makeSchedule(db: Db, o: ScheduleOverrides = {}): Promise<Schedule> {
  const cron = o.cron ?? null;
  const everySeconds = cron ? null : (o.everySeconds ?? 60);
  let nextSlotAt = o.nextSlotAt;
  if (!nextSlotAt) {
    const timing = cron ? { cron, timezone: o.timezone ?? "UTC" } : { everySeconds: everySeconds as number };
    nextSlotAt = firstSlotAtOrAfter(timing, await dbNow(db)) ?? new Date("9999-12-31T00:00:00Z");
  }
  const name = o.name ?? `sched-${++names}-${randomBytes(3).toString("hex")}`;
  const createdAt = o.createdAt ?? (await dbNow(db));
  const [row] = await db
    .insert(schedules)
    .values({ handler: "noop", updatedAt: createdAt, ...o, name, cron, everySeconds, nextSlotAt, createdAt, partition: o.partition ?? 0 })
    .returning();
  return row;
}

/** Run fields a test may set; a running run also takes its lease. `scheduleId` defaults to a new schedule. */
export type RunOverrides = Partial<Omit<NewRun, "id" | "slotSeq" | "state">> & {
  state?: Run["state"];
  /** Running runs: who holds the lease (default "w1") and until when (default sk_now() + the schedule's lease). */
  leaseOwner?: string;
  leaseExpiresAt?: Date;
};

/**
 * Insert a run. Defaults: a new schedule, state pending, origin schedule, scheduled_for = due_at =
 * run_after = sk_now() (claimable now), attempts 0 (1 for a run that is running or settled), the
 * schedule's partition and retry allowance.
 *
 * A running run is made as a claim makes it: its record is a pending run with the attempts that
 * ended, and its queue row holds the state, the token and the lease (`runs` never says running).
 * Returned as run_status reads it (state and attempts from the queue).
 */
export async function makeRun(db: Db, o: RunOverrides = {}): Promise<Run> {
  const { state = "pending", leaseOwner, leaseExpiresAt, ...fields } = o;
  const schedule = o.scheduleId
    ? (await db.select().from(schedules).where(eq(schedules.id, o.scheduleId)))[0]
    : await makeSchedule(db);
  const scheduledFor = o.scheduledFor ?? (await dbNow(db));
  const dueAt = o.dueAt ?? scheduledFor;
  const attempts = o.attempts ?? (state === "pending" ? 0 : 1);
  const running = state === "running";
  const [row] = await db
    .insert(runs)
    .values({
      partition: schedule.partition,
      maxAttempts: schedule.retryMaxAttempts,
      ...fields,
      startedAt: running ? null : o.startedAt,
      state: running ? "pending" : state,
      attempts: running ? attempts - 1 : attempts,
      scheduleId: schedule.id,
      scheduledFor,
      dueAt,
      runAfter: o.runAfter ?? dueAt,
    })
    .returning();
  if (!running) return row;
  await db.execute(sql`
    UPDATE run_queue q SET state = 'running', attempts = ${attempts}, lease_owner = ${leaseOwner ?? "w1"},
      lease_expires_at = coalesce(${leaseExpiresAt ?? null}::timestamptz, sk_now() + make_interval(secs => q.lease_seconds)),
      run_after = coalesce(${leaseExpiresAt ?? null}::timestamptz, sk_now() + make_interval(secs => q.lease_seconds)),
      started_at = coalesce(${o.startedAt ?? null}::timestamptz, sk_now())
    WHERE q.state = 'pending' AND q.schedule_id = ${schedule.id} AND q.scheduled_for = ${scheduledFor} AND q.run_id = ${row.id}`);
  return { ...row, state: "running", attempts };
}

/** One of the runs makeRuns inserts: its slot, and what differs from a due pending run. */
export type RunSpec = { scheduledFor: Date; runAfter?: Date; state?: "pending" | "done" | "dead" | "skipped"; attempts?: number; maxAttempts?: number; partition?: number };

/**
 * Insert many runs of one schedule in one statement (pending and due at their slot unless told
 * otherwise, the schedule's partition and retry allowance); returns their ids in order.
 */
export async function makeRuns(db: Db, scheduleId: number, specs: RunSpec[]): Promise<number[]> {
  if (specs.length === 0) return [];
  const col = <T>(f: (r: RunSpec) => T | undefined) => sql.param(specs.map((r) => f(r) ?? null));
  const { rows } = await db.execute<{ id: number }>(sql`
    INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts)
    SELECT s.id, coalesce(x.partition, s.partition), x.slot, x.slot, coalesce(x.run_after, x.slot), coalesce(x.state, 'pending')::run_state,
      coalesce(x.attempts, 0), coalesce(x.max_attempts, s.retry_max_attempts)
    FROM unnest(${col((r) => r.scheduledFor)}::timestamptz[], ${col((r) => r.runAfter)}::timestamptz[], ${col((r) => r.state)}::text[],
      ${col((r) => r.attempts)}::int[], ${col((r) => r.maxAttempts)}::int[], ${col((r) => r.partition)}::int[])
      WITH ORDINALITY AS x(slot, run_after, state, attempts, max_attempts, partition, n)
    JOIN schedules s ON s.id = ${scheduleId}
    ORDER BY x.n
    RETURNING id`);
  return rows.map((r) => Number(r.id));
}

/** Insert an attempts row of a run (default: attempt 1 by worker "w1", succeeded, at sk_now()). */
export async function makeAttempt(
  db: Db,
  o: { runId: number; attempt?: number; workerId?: string; outcome?: "succeeded" | "failed" | "timed_out" | "lease_expired" | "aborted"; startedAt?: Date; finishedAt?: Date; error?: string },
): Promise<void> {
  await db.execute(sql`
    INSERT INTO attempts (run_id, attempt, worker_id, started_at, finished_at, outcome, error)
    VALUES (${o.runId}, ${o.attempt ?? 1}, ${o.workerId ?? "w1"}, coalesce(${o.startedAt ?? null}::timestamptz, sk_now()),
      coalesce(${o.finishedAt ?? null}::timestamptz, ${o.startedAt ?? null}::timestamptz, sk_now()), ${o.outcome ?? "succeeded"}, ${o.error ?? null})`);
}

/** `count` slots `stepMs` apart (a minute unless told), starting at `from`. */
export function slots(from: Date | string | number, count: number, stepMs = 60_000): Date[] {
  const t0 = new Date(from).getTime();
  return Array.from({ length: count }, (_, i) => new Date(t0 + i * stepMs));
}
