// The programmatic API: run a worker with your own handlers.
//
//   import { defineHandler, runWorker } from "slotkeeper/worker";
//   const report = defineHandler({ name: "nightly-report", idempotent: true, description: "…", run: async (ctx) => { … } });
//   const worker = await runWorker({ handlers: [report] });
//   process.on("SIGTERM", () => void worker.stop().then(() => process.exit(0)));
import { loadConfig, type Config } from "../lib/config";
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
};

/** Open the database (migrating it), start a worker with the built-ins plus your handlers, and return it; `stop()` drains and closes everything. */
export async function runWorker(opts: RunWorkerOptions = {}): Promise<RunningWorker> {
  const config = opts.config ?? loadConfig();
  const log = opts.log ?? createLogger("worker", config.logLevel);
  const database = await openDatabase(config);
  await migrateDatabase(database.url, { migrationsFolder: opts.migrationsFolder });
  const pool = createPool(database.url, { max: config.workerConcurrency + 4, applicationName: "slotkeeper:worker", idleInTransactionTimeoutMs: 30_000 });
  // A client checked out of the pool (inside a transaction) whose connection dies between two
  // statements emits 'error' with nobody listening, which would kill the process. The statement
  // that uses it fails anyway and its loop retries: the worker never exits on a lost database.
  pool.on("connect", (client) => client.on("error", (err) => log.debug({ event: "db:client:error", err })));
  const db = createDb(pool);
  const handlers = [...(opts.withoutBuiltins ? [] : builtinHandlers(db, { commands: config.commands })), ...((opts.handlers ?? []) as Handler[])];
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
        await pool.end().catch(() => {});
        await database.stop();
      }
    },
  };
}
