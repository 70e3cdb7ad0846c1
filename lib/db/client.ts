import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import pg from "pg";
import * as schema from "./schema";

// timestamptz → Date is pg's default; bigint (int8) counts come back as strings unless parsed.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number.parseInt(v, 10));

export type Db = NodePgDatabase<typeof schema> & { $client: pg.Pool };

/** Options for a connection pool; `application_name` shows up in pg_stat_activity. */
export type PoolOptions = {
  max?: number;
  applicationName?: string;
  idleInTransactionTimeoutMs?: number;
  statementTimeoutMs?: number;
  /**
   * Client-side: a statement with no answer for this long fails ("Query read timeout"), its
   * connection is destroyed, and so is every other connection the pool had then: idle ones at
   * once, checked-out ones when released (they went the same way, and each would otherwise cost
   * one more timeout). This is what notices a silent network — a
   * path that drops packets, or a proxy that stops forwarding, with no reset — where TCP itself
   * (keepalives included: the nearest hop still answers them) may never say anything.
   */
  queryTimeoutMs?: number;
  /** How long opening a connection may take (default 10 s). */
  connectTimeoutMs?: number;
  /** max_parallel_workers_per_gather for its sessions; unset: the server's (2 by default). */
  maxParallelWorkersPerGather?: number;
};

/**
 * The web process's pools (lib/server/db.ts), and what the fleet bench's console readers use to
 * read as it does. One read is one backend: no parallel query. The console's reads are index walks
 * bounded by a page (keyset pages, counts kept by triggers, charts from hourly buckets), so a
 * parallel plan for one is a misestimate, and each of its workers is one more process on the cores
 * the claims need. Measured in the fleet bench (docs/benchmarks.md): with 20 consoles open at the
 * top of the hour, the Runs page, the search and the Overview started parallel workers.
 */
export const WEB_POOL_OPTIONS = { max: 10, statementTimeoutMs: 15_000, maxParallelWorkersPerGather: 0 } satisfies PoolOptions;

/** What a timed-out statement's error says (node-postgres's query_timeout). */
export const QUERY_READ_TIMEOUT = "Query read timeout";

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
  if (opts.maxParallelWorkersPerGather !== undefined) options.push(`-c max_parallel_workers_per_gather=${opts.maxParallelWorkersPerGather}`);
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? "slotkeeper",
    options: options.join(" "),
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
    query_timeout: opts.queryTimeoutMs,
    // For a peer host that vanished (no RST ever comes): the kernel probes idle connections.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  if (opts.queryTimeoutMs) dropSilentConnections(pool);
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

/**
 * When a statement times out, every connection the pool had then is suspect: they share the
 * network path that went quiet. The timed-out one is closed at once (a late answer must never
 * reach the next statement); the idle ones are closed too; one checked out at the time is
 * destroyed when it is released, not put back; and the pool never hands out a connection opened
 * before the last timeout. Without the last two a caller could draw a second silent connection
 * (one someone else held through the timeout) and wait a second full timeout.
 *
 * Only node-postgres's public API is used: pool events to know which connections are idle,
 * `client.end()` (which destroys the socket of a client with a statement outstanding) and
 * `release(true)`, which removes a client from the pool and ends it.
 */
function dropSilentConnections(pool: pg.Pool) {
  // A timeout bumps the epoch; a connection opened in an earlier epoch is stale.
  let epoch = 0;
  const openedIn = new WeakMap<pg.PoolClient, number>();
  const stale = (c: pg.PoolClient) => (openedIn.get(c) ?? -1) < epoch;
  const idle = new Set<pg.PoolClient>();
  pool.on("acquire", (c) => idle.delete(c));
  pool.on("release", (err, c) => {
    if (!err) idle.add(c);
  });
  pool.on("remove", (c) => idle.delete(c));

  const end = (c: pg.PoolClient) => void c.end().catch(() => {});
  const onTimeout = (client: pg.PoolClient) => {
    epoch++;
    end(client);
    // Closed idle clients stay in the pool's list until handed out (then they are discarded
    // below) or its idle timer removes them; they cost no wait either way.
    for (const c of idle) end(c);
    idle.clear();
  };
  const isTimeout = (err: unknown) => err instanceof Error && err.message === QUERY_READ_TIMEOUT;
  pool.on("connect", (client) => {
    openedIn.set(client, epoch);
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const last = args.at(-1);
      if (typeof last === "function") {
        args[args.length - 1] = (err: unknown, res: unknown) => {
          if (isTimeout(err)) onTimeout(client);
          return (last as (e: unknown, r: unknown) => unknown)(err, res);
        };
        return query(...args);
      }
      const result = query(...args);
      if (result instanceof Promise) result.catch((err: unknown) => isTimeout(err) && onTimeout(client));
      return result;
    };
  });

  // pool.query checks out through pool.connect too, so every checkout passes here.
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  const checkout = async (): Promise<pg.PoolClient> => {
    for (;;) {
      const c = await connect();
      if (stale(c)) {
        c.release(true);
        continue;
      }
      const release = c.release.bind(c);
      c.release = (err?: Error | boolean) => release(err || stale(c) || undefined);
      return c;
    }
  };
  type Done = (err?: Error | boolean) => void;
  type Callback = (err: Error | undefined, client: pg.PoolClient | undefined, done: Done) => void;
  (pool as unknown as { connect: (cb?: Callback) => Promise<pg.PoolClient> | undefined }).connect = (cb?: Callback) => {
    if (!cb) return checkout();
    checkout().then(
      (c) => cb(undefined, c, c.release),
      (err: Error) => cb(err, undefined, () => {}),
    );
    return undefined;
  };
}

/** Wrap a pool in Drizzle with the shared schema. */
export function createDb(pool: pg.Pool): Db {
  return drizzle(pool, { schema }) as Db;
}

export { schema };
