/**
 * Where a timing edit restarts a schedule's high-water mark (promise: each slot exists once).
 *
 * Rule: each instant of schedule time is covered by at most one slot row. So the new timing's first
 * slot is the first one at or after the later of sk_now() and the end of the schedule time the
 * schedule's remaining rows already cover (after the edit withdrew the waiting ones, see
 * rewindPendingSlots). Without a clock step back that end is before sk_now() (a run starts only
 * once due) and the rule reads "the first new slot at or after sk_now()". After a step back the
 * schedule time up to the old sk_now() has been lived once: its slots ran, or were skipped in
 * compact ranges, under the old timing, and are not lived again on the new one. The unique key
 * alone cannot say so: a new-grid slot inside an old skipped range, or between two old slots, has
 * a slot time of its own.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { NEVER } from "./catch-up";
import { firstSlotAtOrAfter, type Timing } from "./timing";

type Executor = Pick<Db, "execute">;

/**
 * The end of the schedule time a schedule's slot rows cover (manual runs are no slot), or null.
 * Two index reads of runs_slot_key: the rows the tick writes cover disjoint stretches in slot
 * order, so the newest of them ends the coverage; a backfill row (it may sit inside a skipped
 * range, docs/schedules.md) adds only its own instant.
 */
export async function slotsCoveredUntil(tx: Executor, scheduleId: number): Promise<Date | null> {
  const { rows } = await tx.execute<{ until: string | null }>(sql`
    SELECT greatest(
      (SELECT coalesce(skipped_until, scheduled_for) FROM runs
       WHERE schedule_id = ${scheduleId} AND slot_seq = 0 AND origin <> 'backfill'
       ORDER BY scheduled_for DESC, slot_seq DESC LIMIT 1),
      (SELECT scheduled_for FROM runs WHERE schedule_id = ${scheduleId} AND slot_seq = 0
       ORDER BY scheduled_for DESC, slot_seq DESC LIMIT 1)) AS until`);
  return rows[0].until === null ? null : new Date(rows[0].until);
}

/** The high-water mark of a schedule whose timing was just changed to `timing`, at sk_now() = `now`. */
export async function retimedNextSlotAt(tx: Executor, scheduleId: number, timing: Timing, now: Date): Promise<Date> {
  const covered = await slotsCoveredUntil(tx, scheduleId);
  const from = covered !== null && covered.getTime() >= now.getTime() ? new Date(covered.getTime() + 1) : now;
  return firstSlotAtOrAfter(timing, from) ?? NEVER;
}
