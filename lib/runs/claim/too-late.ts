import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { tidArray } from "../../db/prepared";
import type { ClaimOutcome } from "./answer";

/**
 * Max lateness, kept by the claim: no slot's first attempt starts later than its due time + its
 * schedule's max lateness. The bound is on the queue row (run_queue.latest_start_at, written by
 * sk_latest_start when the slot is queued and when max lateness is edited; null for manual runs,
 * backfills and schedules without one), so every claim statement tests it on the row it reads
 * anyway, against the statement's one reading of sk_now() (the clock CTE). Only a never-attempted
 * run is refused: a retry's first attempt started in time, and the promise is about that start.
 * Exactly at the bound a run may still start: the same rule as isTooLate (lib/schedules/missed.ts).
 *
 * True or false, never null (latest_start_at is null for most runs).
 */
export const TOO_LATE = sql`(q.attempts = 0 AND q.latest_start_at < (SELECT now FROM clock)) IS TRUE`;

/**
 * Record as skipped `too_late` the queue rows at `tids` that are still too late now: the runs the
 * plain claim found past their bound and left pending (lib/runs/claim/plain.ts says why the claim
 * itself does not write them). One statement: it locks the rows FOR UPDATE SKIP LOCKED, tests each
 * again (TOO_LATE: a row that moved or changed is judged as it is now, and one that is not too late
 * any more stays), takes it out of the queue and marks its run skipped. A row it does not reach is
 * still refused by every claim, and the lateness pass records it.
 */
export async function skipTooLateRuns(db: Pick<Db, "execute">, tids: string[]): Promise<ClaimOutcome[]> {
  if (tids.length === 0) return [];
  const r = await db.execute<{ id: number }>(sql`
    WITH clock AS (SELECT sk_now() AS now),
    locked AS (
      SELECT q.ctid, q.run_id FROM run_queue q
      WHERE q.ctid = ANY(${tidArray(tids)}::tid[]) AND q.state = 'pending' AND ${TOO_LATE}
      FOR UPDATE SKIP LOCKED
    ),
    unqueued AS (
      DELETE FROM run_queue q WHERE q.ctid = ANY(ARRAY(SELECT ctid FROM locked))
    )
    UPDATE runs r SET state = 'skipped', skip_reason = 'too_late', finished_at = (SELECT now FROM clock),
      skipped_until = r.scheduled_for, skipped_count = 1
    WHERE r.id = ANY(ARRAY(SELECT run_id FROM locked))
    RETURNING r.id`);
  return r.rows.map((row) => ({ id: Number(row.id), state: "skipped" as const }));
}
