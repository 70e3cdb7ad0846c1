import { sql, type SQL } from "drizzle-orm";

/**
 * The one rule for what a worker serves, as SQL over the workers row `alias`: a handler named in
 * its `handlers` ([{ name, … }]) and a queue named in its `queues` ([{ name, concurrency, … }]),
 * both as it registered them (lib/workers/registry.ts). Routing asks it twice: which handlers no
 * live worker serves (lib/runs/unserved.ts), and which partitions are held by a worker that cannot
 * claim some of another worker's runs there (lib/partitions/sweep.ts), which also asks whether the
 * holder is full in a queue (fullInQueue).
 */
export function servesHandler(alias: string, handler: SQL): SQL {
  return sql`${sql.identifier(alias)}.handlers @> jsonb_build_array(jsonb_build_object('name', ${handler}))`;
}

/** SQL: true when the workers row `alias` serves the queue named by `queue` (a text expression). */
export function servesQueue(alias: string, queue: SQL): SQL {
  return sql`${sql.identifier(alias)}.queues @> jsonb_build_array(jsonb_build_object('name', ${queue}))`;
}

/**
 * SQL: true when the workers row `alias` had no free slot in the queue named by `queue` at its last
 * report (lib/workers/registry.ts, every WORKER_HEARTBEAT_MS): a holder that cannot take more runs
 * of that queue, whose due runs there would otherwise wait for one of its own to end.
 */
export function fullInQueue(alias: string, queue: SQL): SQL {
  return sql`EXISTS (SELECT 1 FROM jsonb_array_elements(${sql.identifier(alias)}.queues) hq
    WHERE hq->>'name' = ${queue} AND (hq->>'inFlight')::int >= (hq->>'concurrency')::int)`;
}
