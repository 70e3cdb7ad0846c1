// Test-only: a worker process with custom handlers (spawnWorker(..., { script })). It serves the
// handlers named in SK_TEST_HANDLERS (comma-separated), each of which POSTs
// { handler, workerId, runId } to SK_TEST_RECEIVER: the receiver, outside the product, is the
// witness of which process ran which run. Built-ins are left out, so the handler sets differ.
// Each report also carries the attempt. With SK_TEST_DELAY_MS, each handler first waits that long
// ignoring its signal (a handler that does not honour an abort), and its report also says whether
// the signal had fired.
import { defineHandler, runWorker } from "../../worker/index";

const receiver = process.env.SK_TEST_RECEIVER!;
const names = (process.env.SK_TEST_HANDLERS ?? "").split(",").filter(Boolean);
const delayMs = Number(process.env.SK_TEST_DELAY_MS ?? 0);
const handlers = names.map((name) =>
  defineHandler({
    name,
    idempotent: true,
    description: `test handler ${name}`,
    async run(ctx) {
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      const report = delayMs > 0 ? { attempt: ctx.attempt, signalAborted: ctx.signal.aborted } : { attempt: ctx.attempt };
      const res = await fetch(receiver, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ handler: name, workerId: ctx.workerId, runId: ctx.runId, ...report }) });
      if (!res.ok) throw new Error(`receiver answered ${res.status}`);
    },
  }),
);
// No top-level await: tsx loads this file as CommonJS.
void runWorker({ handlers, withoutBuiltins: true }).then((worker) => {
  process.on("SIGTERM", () => void worker.stop().then(() => process.exit(0)));
});
