// The worker process: `npm run worker`. Parses config, opens the database, migrates, starts the
// worker's loops and wires signals. Everything it does lives in lib/ and worker/worker.ts.
import { ConfigError, loadConfig } from "../lib/config";
import { createDb, createPool } from "../lib/db/client";
import { DatabaseUnreachableError, openDatabase } from "../lib/db/connect";
import { EmbeddedDatabaseError } from "../lib/db/embedded";
import { migrateDatabase } from "../lib/db/migrate";
import { createLogger } from "../lib/log";
import { newWorkerId } from "../lib/workers/registry";
import { startWorker } from "./worker";
import { version } from "../package.json";

async function main() {
  const config = loadConfig();
  const log = createLogger("worker", config.logLevel);
  const database = await openDatabase(config);
  await migrateDatabase(database.url);
  const pool = createPool(database.url, {
    max: config.workerConcurrency + 4,
    applicationName: "slotkeeper:worker",
    idleInTransactionTimeoutMs: 30_000,
  });
  const db = createDb(pool);
  const worker = await startWorker({ db, config, log, workerId: config.workerId ?? newWorkerId(), handlers: [], version });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ event: "worker:signal", signal });
    try {
      await worker.stop();
      await pool.end();
      await database.stop();
    } finally {
      process.exit(0);
    }
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

main().catch((err) => {
  const known = err instanceof ConfigError || err instanceof DatabaseUnreachableError || err instanceof EmbeddedDatabaseError;
  console.error(`slotkeeper worker: ${known ? err.message : (err?.stack ?? String(err))}`);
  process.exit(1);
});
