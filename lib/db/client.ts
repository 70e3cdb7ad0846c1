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
  // Claim, finish and heartbeat run as prepared statements (lib/db/prepared.ts) to skip parsing,
  // but their plans must stay custom, built for the actual arrays and limit: a generic plan for the
  // finish took 60-74 ms per 500 runs against 8.6 ms (scripts/bench/profile.ts). Only named
  // statements are affected; plain ones are planned for their values anyway.
  // No JIT: its compile step costs about half a second (measured: 495 ms of LLVM work for the
  // lateness pass, a statement that finds nothing and runs in 3 ms without it), and our statements
  // are short OLTP ones whose row estimates (a backlog, a whole partition) can still cross
  // jit_above_cost. Servers built without LLVM (the embedded one) ignore the setting.
  const options: string[] = ["-c plan_cache_mode=force_custom_plan", "-c jit=off"];
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
