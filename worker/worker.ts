import type { Config } from "../lib/config";
import type { Db } from "../lib/db/client";
import type { Logger } from "../lib/log";
import { heartbeatWorker, markWorkerStopped, registerWorker, type HandlerInfo } from "../lib/workers/registry";
import { startLoop, type Loop } from "./loops/loop";

/** How often a worker stamps its own row (the console's "last heartbeat"). */
export const WORKER_HEARTBEAT_MS = 5_000;

export type WorkerDeps = { db: Db; config: Config; log: Logger; workerId: string; handlers: HandlerInfo[]; version: string };

export type RunningWorker = { id: string; stop: () => Promise<void> };

/** Register the worker and start its loops; `stop()` ends them and marks the worker stopped. */
export async function startWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const { db, log, workerId } = deps;
  await registerWorker(db, { id: workerId, concurrency: deps.config.workerConcurrency, handlers: deps.handlers, version: deps.version });
  log.info({ event: "worker:start", workerId, concurrency: deps.config.workerConcurrency, handlers: deps.handlers.map((h) => h.name) });

  const loops: Loop[] = [
    startLoop({
      name: "worker:heartbeat",
      intervalMs: WORKER_HEARTBEAT_MS,
      log,
      run: async () => {
        await heartbeatWorker(db, workerId, 0);
      },
    }),
  ];

  return {
    id: workerId,
    stop: async () => {
      await Promise.all(loops.map((l) => l.stop()));
      await markWorkerStopped(db, workerId).catch((err) => log.warn({ event: "worker:stop:unrecorded", err }));
      log.info({ event: "worker:stop", workerId });
    },
  };
}
