import type pg from "pg";
import { createDb, createPool, type Db } from "../db/client";
import { waitUntil, within } from "./wait";

/** How long any one wait here may take before it fails naming itself (a pool handing out a connection, backends exiting). */
const WAIT_MS = 30_000;

/**
 * What `fn` read from `tables`, in tuples, from the counters PostgreSQL keeps
 * (pg_stat_user_tables: sequential tuples read plus index tuples fetched; for a name in `tables`
 * that is an index, the entries its scans returned, whether their rows were live or dead, from
 * pg_stat_user_indexes): an oracle outside the
 * code under test for "this reads a page, not the fleet". `fn` runs on a pool of its own. A backend
 * reports its counters when it exits, so that pool is closed and its backends waited out (by pid)
 * before the counters are read; the test pool's own connections report theirs first.
 */
export async function tupleReadsOf<T>(url: string, testPool: pg.Pool, tables: string[], fn: (db: Db) => Promise<T>, poolSize = 2): Promise<{ result: T; reads: Record<string, number> }> {
  const max = testPool.options.max ?? 1;
  const own = await within(Promise.all(Array.from({ length: max }, () => testPool.connect())), WAIT_MS, `all ${max} connections of the test's pool (one is held elsewhere)`);
  for (const c of own) {
    await c.query("SELECT pg_stat_force_next_flush()");
    await c.query("SELECT 1");
  }
  own.forEach((c) => c.release());
  const before = await counters(testPool, tables);
  const db = createDb(createPool(url, { max: poolSize }));
  let pids: number[] = [];
  let result: T;
  try {
    result = await fn(db);
    const clients = await within(Promise.all(Array.from({ length: poolSize }, () => db.$client.connect())), WAIT_MS, `all ${poolSize} connections of the measured pool (fn left one checked out)`);
    pids = await Promise.all(clients.map(async (c) => (await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0].pid));
    clients.forEach((c) => c.release());
  } finally {
    // end() waits for every checked-out client to come back.
    await within(db.$client.end(), WAIT_MS, "the measured pool to close");
  }
  await waitUntil(
    async () => (await testPool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY($1)", [pids])).rows[0].n === 0,
    WAIT_MS,
    `the measured pool's backends (${pids.join(", ")}) to exit`,
    10,
  );
  await testPool.query("SELECT pg_stat_clear_snapshot()");
  const after = await counters(testPool, tables);
  return { result, reads: Object.fromEntries(tables.map((t) => [t, after[t] - before[t]])) };
}

async function counters(pool: pg.Pool, tables: string[]): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ relname: string; n: string }>(
    `SELECT relname, (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::text AS n FROM pg_stat_user_tables WHERE relname = ANY($1)
     UNION ALL SELECT indexrelname, idx_tup_read::text FROM pg_stat_user_indexes WHERE indexrelname = ANY($1)`,
    [tables],
  );
  return Object.fromEntries(tables.map((t) => [t, Number(rows.find((r) => r.relname === t)?.n ?? 0)]));
}
