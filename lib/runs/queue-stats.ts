import { sql } from "drizzle-orm";
import type { Db } from "../db/client";

/**
 * Analyse run_queue once this many runs have been queued since the last analysis, or as many as
 * the queue held then, whichever is more (so a queue growing to 400,000 is analysed ~10 times on
 * the way, not 40).
 */
export const ANALYZE_AFTER_RUNS = 10_000;

/** Whether the runs queued since the last analysis call for another one. */
export function queueNeedsAnalyze(queuedSince: number, queuedAtLastAnalyze: number): boolean {
  return queuedSince >= Math.max(ANALYZE_AFTER_RUNS, queuedAtLastAnalyze);
}

/**
 * ANALYZE run_queue and return the rows it counted. Why the worker does it rather than leave it to
 * autovacuum: the hot statements keep one generic plan per connection (lib/db/prepared.ts), made
 * with the statistics of the moment they were first run, and only an analysis of the table makes
 * PostgreSQL plan them again. A worker that connected while the queue was empty keeps a plan that
 * finds the claimed rows with a scan of the whole queue, on every claim (lib/runs/queue-stats.test.ts
 * shows the plan change): a top of the hour taking minutes on a server whose autovacuum is off or
 * behind.
 */
export async function analyzeQueue(db: Pick<Db, "execute">): Promise<number> {
  await db.execute(sql`ANALYZE run_queue`);
  const { rows } = await db.execute<{ n: number }>(sql`SELECT greatest(reltuples, 0)::int AS n FROM pg_class WHERE oid = 'run_queue'::regclass`);
  return rows[0]?.n ?? 0;
}
