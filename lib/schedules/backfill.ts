import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/client";
import { recordAudit, type Actor } from "../audit/record";
import { AppError } from "../errors";
import { timingOf } from "./catch-up";
import { dbNow } from "./mutations";
import { requireScheduleByName } from "./queries";
import { countSlotsBetween, slotsBetween } from "./timing";

/** A backfill request: every slot in [from, to]; dryRun only counts. */
export type BackfillRequest = { from: string | Date; to: string | Date; dryRun?: boolean };
/** What a backfill did (or, with dryRun, would do). */
/** POST /api/schedules/{name}/backfill's body. */
export const backfillBodySchema = z.object({ from: z.string({ error: "from is required (ISO 8601)" }), to: z.string({ error: "to is required (ISO 8601)" }), dryRun: z.boolean().optional() }).strict();

export const backfillResultSchema = z.object({ dryRun: z.boolean(), slots: z.number().int(), existing: z.number().int(), created: z.number().int(), from: z.string(), to: z.string() }).strict();
export type BackfillResult = z.infer<typeof backfillResultSchema>;
/** The route's answer: on a dry run `created` is 0 and `wouldCreate` the count. */
export const backfillAnswerSchema = backfillResultSchema.extend({ wouldCreate: z.number().int().optional() }).strict();

function instant(v: unknown, field: "from" | "to"): Date {
  const d = typeof v === "string" || v instanceof Date ? new Date(v) : new Date(Number.NaN);
  if (Number.isNaN(d.getTime())) throw new AppError("invalid", `${field} must be an ISO 8601 date-time`, field);
  return d;
}

/**
 * Backfill: one run (origin 'backfill') per slot in [from, to] that has no row yet (a run, or the
 * first slot of a skipped range, counts as a row; slots inside a skipped range do not). Refuses
 * (400, field "to") ranges that would create more than `maxRuns`; refuses `to` after sk_now(),
 * since future slots belong to the tick. Backfill runs are due at once: due_at = run_after = sk_now().
 */
export async function backfillSchedule(db: Db, name: string, req: BackfillRequest, actor: Actor, maxRuns: number): Promise<BackfillResult> {
  const from = instant(req.from, "from");
  const to = instant(req.to, "to");
  if (to < from) throw new AppError("invalid", "to must not be before from", "to");
  const dryRun = req.dryRun === true;
  return db.transaction(async (tx) => {
    const s = await requireScheduleByName(tx, name, { lock: true });
    const now = await dbNow(tx);
    if (to > now) throw new AppError("invalid", `to must not be in the future (database time is ${now.toISOString()})`, "to");
    const timing = timingOf(s);
    const end = new Date(to.getTime() + 1); // [from, to] inclusive
    const { rows: ex } = await tx.execute<{ n: number }>(sql`
      SELECT count(*)::int AS n FROM runs
      WHERE schedule_id = ${s.id} AND origin <> 'manual' AND scheduled_for BETWEEN ${from} AND ${to}`);
    const existing = ex[0].n;
    const total = countSlotsBetween(timing, from, end, maxRuns + existing);
    const tooMany = () =>
      new AppError("invalid", `this range has ${total.exact ? total.count : `more than ${total.count}`} slots; a backfill may create at most ${maxRuns} runs`, "to");
    if (!total.exact || total.count - existing > maxRuns) throw tooMany();
    const slots = slotsBetween(timing, from, end, total.count);
    const { rows: missing } = await tx.execute<{ n: number }>(sql`
      SELECT count(*)::int AS n FROM unnest(${sql.param(slots)}::timestamptz[]) AS u(slot)
      WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.schedule_id = ${s.id} AND r.origin <> 'manual' AND r.scheduled_for = u.slot)`);
    if (missing[0].n > maxRuns) throw tooMany();
    let created = missing[0].n;
    if (!dryRun) {
      // Slot uniqueness: ON CONFLICT on the slot key, so a slot that has a row keeps it.
      const { rows } = await tx.execute<{ n: number }>(sql`
        WITH ins AS (
          INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, origin, max_attempts)
          SELECT ${s.id}, ${s.partition}, u.slot, sk_now(), sk_now(), 'pending', 'backfill', ${s.retryMaxAttempts}
          FROM unnest(${sql.param(slots)}::timestamptz[]) AS u(slot)
          ON CONFLICT (schedule_id, scheduled_for, slot_seq) DO NOTHING
          RETURNING 1)
        SELECT count(*)::int AS n FROM ins`);
      created = rows[0].n;
      await recordAudit(tx, actor, {
        action: "schedule.backfill",
        targetType: "schedule",
        targetId: s.name,
        scheduleId: s.id,
        after: { from: from.toISOString(), to: to.toISOString(), created },
      });
    }
    return { dryRun, slots: slots.length, existing: slots.length - created, created, from: from.toISOString(), to: to.toISOString() };
  });
}
