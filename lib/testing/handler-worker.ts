// Test-only: a worker process with custom handlers (spawnWorker(..., { script })). It serves the
// handlers named in SK_TEST_HANDLERS (comma-separated), each of which POSTs
// { handler, workerId, runId } to SK_TEST_RECEIVER: the receiver, outside the product, is the
// witness of which process ran which run. Built-ins are left out, so the handler sets differ.
import { defineHandler, runWorker } from "../../worker/index";

const receiver = process.env.SK_TEST_RECEIVER!;
const names = (process.env.SK_TEST_HANDLERS ?? "").split(",").filter(Boolean);
const handlers = names.map((name) =>
  defineHandler({
    name,
    idempotent: true,
    description: `test handler ${name}`,
    async run(ctx) {
      const res = await fetch(receiver, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ handler: name, workerId: ctx.workerId, runId: ctx.runId }) });
      if (!res.ok) throw new Error(`receiver answered ${res.status}`);
    },
  }),
);
// No top-level await: tsx loads this file as CommonJS.
void runWorker({ handlers, withoutBuiltins: true }).then((worker) => {
  process.on("SIGTERM", () => void worker.stop().then(() => process.exit(0)));
});
