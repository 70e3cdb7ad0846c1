import { sql, type SQL } from "drizzle-orm";

/** A worker is alive when it heartbeated within this many seconds (and has not stopped). */
export const WORKER_ALIVE_SECONDS = 30;

/**
 * The one rule for a live worker, as SQL over the workers row `alias`: not stopped, and a heartbeat
 * within WORKER_ALIVE_SECONDS of sk_now(). The workers page (status "alive") and routing (which
 * handlers a live worker serves, lib/runs/unserved.ts) both use it.
 */
export function liveWorker(alias: string): SQL {
  const w = sql.identifier(alias);
  return sql`(${w}.stopped_at IS NULL AND ${w}.last_heartbeat_at > sk_now() - make_interval(secs => ${WORKER_ALIVE_SECONDS}))`;
}
