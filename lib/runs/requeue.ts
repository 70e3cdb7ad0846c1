import { sql } from "drizzle-orm";
import { z } from "zod";
import { recordAudit, type Actor } from "../audit/record";
import type { Db } from "../db/client";

/** The channel workers LISTEN on to wake early when a run becomes due (they never rely on it). */
export const RUNS_CHANNEL = "slotkeeper_runs";

/** POST /api/runs/requeue's body: the runs to re-queue, 1 to 1000 of them. */
export const requeueBodySchema = z.object({ ids: z.array(z.number().int().positive()).min(1).max(1000) });
/** What a re-queue of a selection did: which runs it re-queued, which were not dead, which do not exist. */
export const requeueResultSchema = z.object({ requeued: z.array(z.number().int()), notDead: z.array(z.number().int()), missing: z.array(z.number().int()) }).strict();
export type RequeueResult = z.infer<typeof requeueResultSchema>;

/**
 * Put dead runs back to pending, due now, with a fresh allowance of attempts (the schedule's
 * retry max on top of those used). The fencing token keeps rising: attempts is never reset. One
 * transaction, with one audit entry per run. Ids that are not dead (or do not exist) come back
 * in `notDead`; `missing` lists the ones that do not exist at all.
 */
export async function requeueRuns(db: Db, ids: number[], actor: Actor): Promise<RequeueResult> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return { requeued: [], notDead: [], missing: [] };
  return db.transaction(async (tx) => {
    const existing = await tx.execute<{ id: number }>(sql`SELECT id FROM runs WHERE id = ANY(${sql.param(unique)}::bigint[])`);
    const found = new Set(existing.rows.map((r) => Number(r.id)));
    // The dead run's queue row is locked first (every writer of an unfinished run locks it), then
    // both halves move back to pending together.
    const result = await tx.execute<{ id: number; schedule_id: number; attempts: number; max_attempts: number; last_error: string | null }>(sql`
      WITH dead AS (
        SELECT q.ctid, r.id, r.schedule_id, r.attempts + s.retry_max_attempts AS allowed
        FROM runs r
        JOIN schedules s ON s.id = r.schedule_id
        CROSS JOIN LATERAL (
          SELECT q.ctid FROM run_queue q
          WHERE q.state = 'dead' AND q.schedule_id = r.schedule_id AND q.scheduled_for = r.scheduled_for AND q.run_id = r.id
          FOR UPDATE
        ) q
        WHERE r.id = ANY(${sql.param(unique)}::bigint[]) AND r.state = 'dead'
      ),
      queued AS (
        UPDATE run_queue q SET state = 'pending', run_after = sk_now(), max_attempts = d.allowed, lease_owner = NULL, lease_expires_at = NULL, started_at = NULL
        FROM dead d WHERE q.ctid = d.ctid
      )
      UPDATE runs r SET
        state = 'pending',
        max_attempts = d.allowed,
        run_after = sk_now(),
        finished_at = NULL
      FROM dead d
      WHERE r.id = d.id
      RETURNING r.id, r.schedule_id, r.attempts, r.max_attempts, r.last_error`);
    for (const row of result.rows) {
      await recordAudit(tx, actor, {
        action: "run.requeue",
        targetType: "run",
        targetId: row.id,
        scheduleId: Number(row.schedule_id),
        before: { state: "dead", lastError: row.last_error },
        after: { state: "pending", attempts: row.attempts, maxAttempts: row.max_attempts },
      });
    }
    if (result.rows.length > 0) await tx.execute(sql`SELECT pg_notify(${RUNS_CHANNEL}, 'requeue')`);
    const requeued = result.rows.map((r) => Number(r.id));
    const done = new Set(requeued);
    return {
      requeued,
      notDead: unique.filter((id) => !done.has(id)),
      missing: unique.filter((id) => !found.has(id)),
    };
  });
}
