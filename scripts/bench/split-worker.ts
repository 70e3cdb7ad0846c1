// `npm run bench -- --handlers 2`: a worker serving one handler only (SK_BENCH_HANDLER), which does
// nothing and succeeds like the built-in noop. Half the workers serve `bench-a`, half `bench-b`, and
// every partition holds both, so the runs of the handler its holder does not serve are taken by the
// workers serving it, in their sweep partitions (lib/partitions/sweep.ts, lib/runs/claim/index.ts).
import { ConfigError } from "../../lib/config";
import { defineHandler, runWorker } from "../../worker/index";

const name = process.env.SK_BENCH_HANDLER;
if (!name) throw new ConfigError("SK_BENCH_HANDLER is not set");
const handler = defineHandler({ name, idempotent: true, description: "bench: does nothing and succeeds", run: () => undefined });
// No top-level await: tsx loads this file as CommonJS.
void runWorker({ handlers: [handler], withoutBuiltins: true }).then((worker) => {
  let stopping = false;
  process.on("SIGTERM", () => {
    if (stopping) return;
    stopping = true;
    void worker.stop().finally(() => process.exit(0));
  });
});
