import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { intArray, prepare, runPrepared } from "../db/prepared";
import { QUEUED, queuesParam, SERVED, servedParam } from "./claim/served";

/**
 * How long until the next pending run in these partitions (null = every partition), of the handlers
 * and queues the worker serves (null = all), comes due, in
 * milliseconds of the database's clock, or null when none is pending ahead of it. The claim loop
 * asks after a pass that found less than it could take, and sleeps until then when that is sooner
 * than its poll interval: the top of the hour starts at its due instant, not up to a poll interval
 * after it.
 *
 * One probe per partition of run_queue_claim_idx (partition, run_after) WHERE pending, from the
 * clock on: the runs already due (claimed, or waiting on an overlap) lie before where it starts.
 * The delay is the database's own arithmetic, so a worker's clock running ahead or behind the
 * server's does not move it.
 */
const NEXT_DUE = prepare("sk_next_due", sql`
  WITH clock AS (SELECT sk_now() AS now)
  SELECT ceil(extract(epoch FROM min(n.run_after) - (SELECT now FROM clock)) * 1000)::int AS in_ms
  FROM unnest(coalesce(${sql.placeholder("partitions")}::int[],
    ARRAY(SELECT generate_series(0, coalesce((SELECT partitions FROM cluster WHERE id = 1), 16) - 1)))) AS p(partition)
  CROSS JOIN LATERAL (
    SELECT q.run_after FROM run_queue q
    WHERE q.state = 'pending' AND q.partition = p.partition AND q.run_after > (SELECT now FROM clock) AND ${SERVED} AND ${QUEUED}
    ORDER BY q.run_after
    LIMIT 1
  ) n`);

export async function nextDueInMs(db: Db, partitions: number[] | null, handlers?: readonly string[] | null, queues?: readonly string[] | null): Promise<number | null> {
  const { rows } = await runPrepared<{ in_ms: number | null }>(db, NEXT_DUE, {
    partitions: partitions === null ? null : intArray(partitions),
    handlers: servedParam(handlers),
    queues: queuesParam(queues),
  });
  return rows[0]?.in_ms ?? null;
}
