// `slotkeeper/worker`: run a worker with your own handlers from another project.
//
//   import { defineHandler, NonRetryableError, runWorker } from "slotkeeper/worker";
//   const report = defineHandler({ name: "nightly-report", idempotent: true, description: "…", run: async (ctx) => { … } });
//   const worker = await runWorker({ handlers: [report] });   // DATABASE_URL and SLOTKEEPER_* as for `npm run worker`
//   process.on("SIGTERM", () => void worker.stop().then(() => process.exit(0)));
//
// Built to dist/worker.js by scripts/build-package.ts (npm pack runs it).
import { fileURLToPath } from "node:url";
import { runWorker as runWorkerIn, type RunWorkerOptions } from "./index";
import type { RunningWorker } from "./worker";

export { defineHandler, NonRetryableError, NOT_IDEMPOTENT_WARNING, type Handler, type HandlerContext } from "../lib/handlers/types";
export { waitFor } from "../lib/handlers/wait";
export { loadConfig, ConfigError, type Config, type CommandsPolicy } from "../lib/config";
export type { RunWorkerOptions, RunningWorker };

/**
 * The migrations shipped in the package (`drizzle/` beside `dist/`, this module's folder once
 * bundled), not whatever the working directory holds.
 */
const PACKAGE_MIGRATIONS = fileURLToPath(new URL("../drizzle", import.meta.url));

/**
 * Open the database (DATABASE_URL, or the embedded server), apply the package's migrations, and
 * start a worker with the built-in handlers plus yours; `stop()` drains and closes everything.
 */
export function runWorker(opts: RunWorkerOptions = {}): Promise<RunningWorker> {
  return runWorkerIn({ migrationsFolder: PACKAGE_MIGRATIONS, ...opts });
}
