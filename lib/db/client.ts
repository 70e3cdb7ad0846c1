import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import pg from "pg";
import * as schema from "./schema";

// timestamptz → Date is pg's default; bigint (int8) counts come back as strings unless parsed.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

export type Db = NodePgDatabase<typeof schema> & { $client: pg.Pool };

/** Options for a connection pool; `application_name` shows up in pg_stat_activity. */
export type PoolOptions = { max?: number; applicationName?: string; idleInTransactionTimeoutMs?: number; statementTimeoutMs?: number };

/** A pg pool for one process. Errors on idle clients are logged by the caller, never thrown. */
export function createPool(url: string, opts: PoolOptions = {}): pg.Pool {
  // Claim, finish and heartbeat run as named prepared statements (lib/db/prepared.ts), each planned
  // once per connection: a generic plan (plan_cache_mode = force_generic_plan). Each is written as
  // index probes or TID look-ups driven by its arrays, a plan that is right whatever the values; a
  // plan made for the values was not: with a large batch, or a small queue, the finish's custom
  // plan trusted statistics that say no row has this worker as lease owner and scanned run_queue
  // once per run. A generic plan also skips planning on every execution. lib/db/plans.test.ts
  // holds the hot statements to their plans. Only named statements are affected; plain ones are
  // planned for their values anyway.
  // No JIT: its compile step costs far more than our statements run (short OLTP ones whose row
  // estimates, a backlog or a whole partition, can still cross jit_above_cost). Servers built
  // without LLVM (the embedded one) ignore the setting.
  const options: string[] = ["-c plan_cache_mode=force_generic_plan", "-c jit=off"];
  // A transaction left open (say, by a bug) must not block vacuum on the runs table for long.
  if (opts.idleInTransactionTimeoutMs) options.push(`-c idle_in_transaction_session_timeout=${opts.idleInTransactionTimeoutMs}`);
  if (opts.statementTimeoutMs) options.push(`-c statement_timeout=${opts.statementTimeoutMs}`);
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? "slotkeeper",
    options: options.join(" "),
    connectionTimeoutMillis: 10_000,
  });
  // A checked-out client whose connection dies mid-transaction emits "error" too; without a
  // listener that would crash the process. The failing query still rejects for its caller.
  pool.on("connect", (client) => {
    client.on("error", () => {});
  });
  pool.on("error", () => {
    // An idle client lost its connection (database restart, network cut). The pool drops it and
    // the next query opens a new one; callers see errors on the queries they make.
  });
  return pool;
}

/** Wrap a pool in Drizzle with the shared schema. */
export function createDb(pool: pg.Pool): Db {
  return drizzle(pool, { schema }) as Db;
}

export { schema };
