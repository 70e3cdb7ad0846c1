// The worker process: `npm run worker`. Parses config, opens the database, migrates, starts the
// worker's loops with the built-in handlers and wires signals. Everything else lives in lib/ and
// worker/worker.ts; worker/index.ts is the same thing as a library call with your own handlers.
import { ConfigError, loadConfig } from "../lib/config";
import { DatabaseUnreachableError } from "../lib/db/connect";
import { EmbeddedDatabaseError } from "../lib/db/embedded";
import { createLogger } from "../lib/log";
import { runWorker } from "./index";

async function main() {
  const config = loadConfig();
  const log = createLogger("worker", config.logLevel);
  const worker = await runWorker({ config, log });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ event: "worker:signal", signal });
    try {
      // Stops claiming, lets in-flight handlers finish within the grace period, then aborts and releases them.
      await worker.stop();
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
