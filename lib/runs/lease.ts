import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { executePrepared } from "../db/prepared";

/** One in-flight run to renew: its id and the fencing token this worker claimed it with. */
export type HeldRun = { id: number; attempt: number; leaseSeconds?: number };

/**
 * Renew the leases of all of a worker's in-flight runs in one statement, fenced on the token.
 * Returns the ids still held; a run missing from the set was taken over (or finished elsewhere),
 * so its handler must be aborted. Touches only lease_expires_at, an unindexed column: a HOT update.
 */
export async function heartbeatRuns(db: Db, workerId: string, runs: HeldRun[]): Promise<Set<number>> {
  if (runs.length === 0) return new Set();
  const ids = runs.map((r) => r.id);
  const tokens = runs.map((r) => r.attempt);
  const leases = runs.map((r) => r.leaseSeconds ?? null);
  // One clock: the new expiry is sk_now() + lease; fencing: only the current token's holder renews.
  const result = await executePrepared<{ id: number }>(db, "sk_heartbeat", sql`
    UPDATE runs r
    SET lease_expires_at = (SELECT sk_now()) + make_interval(secs => coalesce(h.lease_seconds, s.lease_seconds))
    FROM unnest(${sql.param(ids)}::bigint[], ${sql.param(tokens)}::int[], ${sql.param(leases)}::int[]) AS h(id, attempt, lease_seconds),
      schedules s
    WHERE r.id = h.id AND r.attempts = h.attempt AND r.state = 'running' AND r.lease_owner = ${workerId}
      AND s.id = r.schedule_id
    RETURNING r.id`);
  return new Set(result.rows.map((r) => Number(r.id)));
}
