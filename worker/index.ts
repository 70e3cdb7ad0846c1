// The programmatic API: run a worker with your own handlers.
//
//   import { defineHandler, runWorker } from "slotkeeper/worker";
//   const report = defineHandler({ name: "nightly-report", idempotent: true, description: "…", run: async (ctx) => { … } });
//   const worker = await runWorker({ handlers: [report] });
//   process.on("SIGTERM", () => void worker.stop().then(() => process.exit(0)));
import { loadConfig, totalConcurrency, validateQueues, type Config } from "../lib/config";
import { createDb, createPool } from "../lib/db/client";
import { openDatabase } from "../lib/db/connect";
import { migrateDatabase } from "../lib/db/migrate";
import type { Handler } from "../lib/handlers/types";
import { createLogger, type Logger } from "../lib/log";
import { newWorkerId } from "../lib/workers/registry";
import { version } from "../package.json";
import { builtinHandlers } from "./handlers/registry";
import { startWorker, type RunningWorker } from "./worker";

export { defineHandler, NonRetryableError, type Handler, type HandlerContext } from "../lib/handlers/types";
export { waitFor } from "../lib/handlers/wait";

export type RunWorkerOptions = {
  /** Your handlers; a handler named like a built-in replaces it. */
  handlers?: Handler<never>[];
  /** Defaults to loadConfig() (the environment). */
  config?: Config;
  log?: Logger;
  workerId?: string;
  /** Leave out the built-in handlers (noop, sleep, http, sql-ledger, fail, and command when allowed). */
  withoutBuiltins?: boolean;
  /** Where the database migrations are (the package passes its own folder); defaults to `drizzle/` in the working directory. */
  migrationsFolder?: string;
  /** Which partitions to tick and claim in; null = all. */
  partitionsProvider?: () => number[] | null;
  /**
   * The queues to serve, each with its concurrency: `{ default: 10, reports: 2 }`. Overrides
   * SLOTKEEPER_QUEUES; default: the config's (`default` with SLOTKEEPER_CONCURRENCY when unset).
   */
  queues?: Record<string, number>;
};

/** Open the database (migrating it), start a worker with the built-ins plus your handlers, and return it; `stop()` drains and closes everything. */
export async function runWorker(opts: RunWorkerOptions = {}): Promise<RunningWorker> {
  const base = opts.config ?? loadConfig();
  // Checked before anything starts: a bad queue name or concurrency is a ConfigError naming it.
  const config: Config = opts.queues ? { ...base, queues: validateQueues(opts.queues, "runWorker queues") } : base;
  const log = opts.log ?? createLogger("worker", config.logLevel);
  const database = await openDatabase(config);
  await migrateDatabase(database.url, { migrationsFolder: opts.migrationsFolder });
  // Two pools: the worker's own loops (claim, lease renewal, finish, tick, partitions) on one, the
  // built-in handlers' statements (sql-ledger) on the other, so a handler that holds connections
  // — however many, however long — can never starve the claim or the renewal of the leases.
  // Every statement gives up after SLOTKEEPER_DB_QUERY_TIMEOUT_MS without an answer (a silent
  // network) and drops its connection; the loop retries on a fresh one.
  //
  // A transaction of the worker's own loops is never idle longer than one statement's round trip.
  // One left open on the server by a worker cut off mid-way (a silent network: the server does not
  // know the client is gone) holds its row locks, and a tick of the same schedules or a lease pass
  // by another worker would wait behind them: the server ends such a session after the query
  // timeout, the time the cut-off worker itself takes to give its connections up.
  const poolOptions = { idleInTransactionTimeoutMs: 30_000, queryTimeoutMs: config.dbQueryTimeoutMs };
  const pool = createPool(database.url, { ...poolOptions, idleInTransactionTimeoutMs: Math.min(30_000, Math.max(2_000, config.dbQueryTimeoutMs)), max: totalConcurrency(config.queues ?? { default: config.workerConcurrency }) + 4, applicationName: "slotkeeper:worker" });
  const handlerPool = createPool(database.url, { ...poolOptions, max: totalConcurrency(config.queues ?? { default: config.workerConcurrency }) + 2, applicationName: "slotkeeper:worker:handlers" });
  // A client checked out of the pool (inside a transaction) whose connection dies between two
  // statements emits 'error' with nobody listening, which would kill the process. The statement
  // that uses it fails anyway and its loop retries: the worker never exits on a lost database.
  for (const p of [pool, handlerPool]) p.on("connect", (client) => client.on("error", (err) => log.debug({ event: "db:client:error", err })));
  const db = createDb(pool);
  const handlers = [...(opts.withoutBuiltins ? [] : builtinHandlers(createDb(handlerPool), { commands: config.commands })), ...((opts.handlers ?? []) as Handler[])];
  const worker = await startWorker({
    db,
    config,
    log,
    workerId: opts.workerId ?? config.workerId ?? newWorkerId(),
    handlers,
    version,
    databaseUrl: database.url,
    partitionsProvider: opts.partitionsProvider,
    commands: opts.withoutBuiltins ? null : config.commands,
  });
  return {
    ...worker,
    stop: async () => {
      try {
        await worker.stop();
      } finally {
        await Promise.all([pool.end().catch(() => {}), handlerPool.end().catch(() => {})]);
        await database.stop();
      }
    },
  };
}
