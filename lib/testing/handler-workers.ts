// Test-only: worker processes with custom handlers (lib/testing/handler-worker.ts) whose every call
// lands on one receiver (lib/testing/receiver.ts) kept for the test file's lifetime: the witness,
// outside the product, of which process ran which run.
import { afterAll, beforeAll } from "vitest";
import { startReceiver, type ReceiverOptions } from "./receiver";
import { startWorkers, type WorkerProcess } from "./spawn";

/** What each handler of lib/testing/handler-worker.ts POSTs to the receiver. */
export type HandlerCall = { handler: string; workerId: string; runId: number; attempt: number; signalAborted?: boolean };

/** The worker entry point that serves the handlers named in SK_TEST_HANDLERS. */
export const HANDLER_WORKER_SCRIPT = "lib/testing/handler-worker.ts";

/**
 * Start the receiver before the file's tests and close it after them. `db` is the file's test
 * database (its url is read when a worker starts); `env` is every worker's, under what `start`
 * adds.
 */
export function handlerWorkers(db: { readonly url: string }, opts: { env?: Record<string, string>; receiver?: ReceiverOptions } = {}) {
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
  beforeAll(async () => {
    receiver = await startReceiver(undefined, opts.receiver);
  });
  afterAll(async () => {
    await receiver?.close();
  });
  const started = () => {
    if (!receiver) throw new Error("handlerWorkers: the receiver starts in beforeAll; use it inside a hook or a test");
    return receiver;
  };
  return {
    /** Start worker `id` serving `handlers` (comma-separated); resolves once it has started. */
    start: async (id: string, handlers: string, env: Record<string, string> = {}): Promise<WorkerProcess> =>
      (await startWorkers(db.url, [id], { ...opts.env, ...env, SK_TEST_HANDLERS: handlers, SK_TEST_RECEIVER: started().url }, { script: HANDLER_WORKER_SCRIPT }))[0],
    /** Every call the receiver has had, in arrival order. */
    calls: (): HandlerCall[] => started().received.map((r) => r.body as HandlerCall),
  };
}
