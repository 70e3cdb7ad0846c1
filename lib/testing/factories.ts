import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { runs, schedules, type NewRun, type NewSchedule, type Run, type Schedule } from "../db/schema";
import { firstSlotAtOrAfter } from "../schedules/timing";

/** Schedule fields a test may set; everything else gets a sensible default. */
export type ScheduleOverrides = Partial<Omit<NewSchedule, "id" | "partition">> & { partition?: number };

/**
 * Insert a schedule directly (no API validation). Defaults: handler "noop", every 60 s in UTC,
 * next_slot_at = the first slot at or after sk_now(), partition hashed from the id as createSchedule does.
 */
export async function makeSchedule(db: Db, o: ScheduleOverrides = {}): Promise<Schedule> {
  const cron = o.cron ?? null;
  const everySeconds = cron ? null : (o.everySeconds ?? 60);
  let nextSlotAt = o.nextSlotAt;
  if (!nextSlotAt) {
    const { rows } = await db.execute<{ now: string }>(sql`SELECT sk_now() AS now`);
    const timing = cron ? { cron, timezone: o.timezone ?? "UTC" } : { everySeconds: everySeconds as number };
    nextSlotAt = firstSlotAtOrAfter(timing, new Date(rows[0].now)) ?? new Date("9999-12-31T00:00:00Z");
  }
  const [row] = await db
    .insert(schedules)
    .values({ name: `sched-${randomBytes(5).toString("hex")}`, handler: "noop", ...o, cron, everySeconds, nextSlotAt, partition: o.partition ?? 0 })
    .returning();
  if (o.partition !== undefined) return row;
  const { rows } = await db.execute<{ partition: number }>(sql`
    UPDATE schedules SET partition = ((hashtextextended(schedules.id::text, 0) % c.partitions) + c.partitions) % c.partitions
    FROM cluster c WHERE c.id = 1 AND schedules.id = ${row.id} RETURNING schedules.partition`);
  return { ...row, partition: rows[0].partition };
}

/** Run fields a test may set; `scheduleId` defaults to a fresh schedule. */
export type RunOverrides = Partial<Omit<NewRun, "id">>;

/**
 * Insert a run directly. Defaults: a new schedule, state pending, origin schedule, scheduled_for =
 * due_at = run_after = sk_now() (so it is claimable now), max_attempts 6, the schedule's partition.
 */
export async function makeRun(db: Db, o: RunOverrides = {}): Promise<Run> {
  const schedule = o.scheduleId
    ? (await db.select().from(schedules).where(sql`${schedules.id} = ${o.scheduleId}`))[0]
    : await makeSchedule(db);
  const { rows } = await db.execute<{ now: string }>(sql`SELECT sk_now() AS now`);
  const scheduledFor = o.scheduledFor ?? new Date(rows[0].now);
  const dueAt = o.dueAt ?? scheduledFor;
  const [row] = await db
    .insert(runs)
    .values({
      partition: schedule.partition,
      maxAttempts: schedule.retryMaxAttempts,
      ...o,
      scheduleId: schedule.id,
      scheduledFor,
      dueAt,
      runAfter: o.runAfter ?? dueAt,
    })
    .returning();
  return row;
}
