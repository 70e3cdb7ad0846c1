import { sql, type SQL } from "drizzle-orm";

/**
 * The one rule for what a worker serves, as SQL over the workers row `alias`: a handler named in
 * its `handlers` ([{ name, … }]) and a queue named in its `queues` ([{ name, concurrency, … }]),
 * both as it registered them (lib/workers/registry.ts). Routing asks it twice: which handlers no
 * live worker serves (lib/runs/unserved.ts), and which partitions are held by a worker that cannot
 * claim some of another worker's runs there (lib/partitions/sweep.ts).
 */
export function servesHandler(alias: string, handler: SQL): SQL {
  return sql`${sql.identifier(alias)}.handlers @> jsonb_build_array(jsonb_build_object('name', ${handler}))`;
}

/** SQL: true when the workers row `alias` serves the queue named by `queue` (a text expression). */
export function servesQueue(alias: string, queue: SQL): SQL {
  return sql`${sql.identifier(alias)}.queues @> jsonb_build_array(jsonb_build_object('name', ${queue}))`;
}
