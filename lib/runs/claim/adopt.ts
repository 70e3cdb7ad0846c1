import { sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { intArray, prepare, runPrepared } from "../../db/prepared";
import { CLAIMED_BY_QUEUE, RETURNING, toClaimed, type ClaimedRun, type Group } from "./answer";

/**
 * The runs a claim of this worker took whose answer never reached it. A claim commits, then its
 * answer travels back; when the connection breaks in between (a reset, a proxy, a failover) the
 * run is leased to the worker and nobody runs it until the lease runs out and the run is taken
 * over as a lost attempt. So after a claim that failed, the worker asks for the runs leased to it
 * that it does not hold, renews their leases and runs them with the token the claim gave them.
 *
 * Only live leases are adopted: an expired one is lost, as for a renewal (lib/runs/lease.ts), since
 * the run may already be someone else's. `known` lists the (run, token) pairs the worker holds or
 * has let go of while their lease may still be live (a result it could not write before its own
 * deadline): each of those attempts already ran its handler, so adopting it would run it twice.
 */
const ADOPT = prepare("sk_adopt", sql`
    WITH clock AS (SELECT sk_now() AS now),
    claimed AS (
      UPDATE run_queue q SET lease_expires_at = (SELECT now FROM clock) + make_interval(secs => q.lease_seconds)
      -- Running rows are few (at most the cluster's concurrency): run_queue_running_idx, read whole.
      WHERE q.state = 'running' AND q.lease_owner = ${sql.placeholder("workerId")}
        AND q.lease_expires_at > (SELECT now FROM clock)
        AND NOT EXISTS (
          SELECT 1 FROM unnest(${sql.placeholder("ids")}::bigint[], ${sql.placeholder("tokens")}::int[]) AS k(id, attempt)
          WHERE k.id = q.run_id AND k.attempt = q.attempts)
      RETURNING ${RETURNING}, q.queue
    )
    ${CLAIMED_BY_QUEUE}`);

/** Renew and return the runs leased to `workerId` with a live lease, except the `known` (run, token) pairs. */
export async function adoptUnansweredClaims(db: Db, workerId: string, known: readonly { id: number; attempt: number }[]): Promise<ClaimedRun[]> {
  const { rows } = await runPrepared<Group>(db, ADOPT, { workerId, ids: intArray(known.map((k) => k.id)), tokens: intArray(known.map((k) => k.attempt)) });
  return toClaimed(rows).claimed;
}
