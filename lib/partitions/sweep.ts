import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { fullInQueue, servesHandler, servesQueue } from "../workers/serves";
import { silentLease } from "./leases";

/**
 * Routing across partitions. A partition is held by one worker (lib/partitions/leases.ts), but a
 * worker claims only runs of the handlers and queues it serves (lib/runs/claim/served.ts): in a
 * partition whose holder lacks some of them, those runs would wait for nobody. So every worker
 * also claims there, in the partition's own due order, for exactly what the holder lacks and it
 * has: a SWEEP partition. Where the holder serves everything a worker serves (every worker of a
 * fleet alike, the common case) there is no sweep at all, so the hot path is what it was.
 *
 * The same goes for a holder with no free slot in a queue (long runs, a burst): its due runs of that
 * queue would wait for one of its own runs to end, beyond the stated lateness bound, while other
 * workers have room. So a queue where the holder was full at its last report counts as one it lacks.
 *
 * Safe for the reason two claimers in one partition always are: SKIP LOCKED and the run's fencing
 * token; and a worker still claims only runs it serves. A silent holder's partition is not a
 * sweep partition but an orphaned one, where every worker claims whatever it serves.
 */
export type SweepPartition = {
  partition: number;
  /** This worker's handlers that the holder does not serve: claim runs of these in any of this worker's queues. */
  handlers: string[];
  /**
   * This worker's queues that the holder does not serve, or in which it had no free slot at its
   * last report: claim runs of any of this worker's handlers in these.
   */
  queues: string[];
};

/**
 * The sweep partitions of worker `workerId` (partitions below `partitions` held by someone else
 * who renews them and lacks one of its handlers or queues, or is full in one of its queues), ascending. Empty when the worker has no
 * workers row (it serves nothing it registered) or every holder serves all it does.
 */
export async function listSweepPartitions(db: Pick<Db, "execute">, workerId: string, partitions: number): Promise<SweepPartition[]> {
  const r = await db.execute<SweepPartition>(sql`
    WITH me AS (SELECT handlers, queues FROM workers WHERE id = ${workerId}),
    my_handlers AS (SELECT e->>'name' AS name FROM me, jsonb_array_elements(me.handlers) e),
    my_queues AS (SELECT e->>'name' AS name FROM me, jsonb_array_elements(me.queues) e),
    lacking AS (
      SELECT pl.partition,
        ARRAY(SELECT h.name FROM my_handlers h WHERE NOT ${servesHandler("hw", sql`h.name`)} ORDER BY h.name) AS handlers,
        ARRAY(SELECT q.name FROM my_queues q WHERE NOT ${servesQueue("hw", sql`q.name`)} OR ${fullInQueue("hw", sql`q.name`)} ORDER BY q.name) AS queues
      FROM partition_leases pl
      JOIN workers hw ON hw.id = pl.owner
      WHERE pl.partition < ${partitions} AND pl.owner <> ${workerId} AND pl.lease_expires_at > sk_now()
        AND hw.stopped_at IS NULL AND NOT ${silentLease("pl")}
    )
    SELECT partition, handlers, queues FROM lacking
    WHERE cardinality(handlers) > 0 OR cardinality(queues) > 0
    ORDER BY partition`);
  return r.rows.map((x) => ({ partition: x.partition, handlers: x.handlers, queues: x.queues }));
}
