// `node --import tsx scripts/bench/sweep-cost.ts [S] [ROUNDS]`: what one claim statement of one
// handler's runs costs in one partition (the worker's claim, in its own partitions and its sweep
// partitions alike: lib/runs/claim/plain.ts `sk_claim_handlers`) and across every partition (the
// claim of tools, which reads and sorts every due row).
// Materialises S minute-zero slots split over two handlers (as `npm run bench -- --handlers 2`),
// then alternates the two claims of 500 runs of one handler, ROUNDS times each, and prints the
// median and max milliseconds of each; drops the scratch database. Each claim takes its runs, so
// the due rows shrink by ROUNDS × 1,000 over the measurement.
import { claimPlain } from "../../lib/runs/claim/plain";
import { runClockFrom } from "../../lib/testing/clock";
import { runScript, withScratchDatabase } from "./scratch";
import { BENCH_DUE, materialise, SPLIT_HANDLERS } from "./spike";
import { medianMax, timed } from "./timing";

runScript(() =>
  withScratchDatabase("sk_bench_sweep", { poolMax: 2, partitions: 16 }, async ({ pool, db }) => {
    const s = Number(process.argv[2] ?? 20_000);
    const rounds = Number(process.argv[3] ?? 10);
    const mat = await materialise(pool, db, { schedules: s, partitions: 16, handlers: 2 });
    await runClockFrom(pool, new Date(BENCH_DUE.getTime() + 1000));
    const handlers = [SPLIT_HANDLERS[0]];
    const times: Record<string, number[]> = { onePartition: [], everyPartition: [] };
    const claimed: Record<string, number> = { onePartition: 0, everyPartition: 0 };
    for (let i = 0; i < rounds; i++) {
      for (const [kind, partition] of [["onePartition", i % 16], ["everyPartition", null]] as const) {
        const { ms, value } = await timed(() => claimPlain(db, "sweep-cost", partition, 500, handlers, "default"));
        times[kind].push(ms);
        claimed[kind] += value.claimed.length;
      }
    }
    console.log(JSON.stringify({ schedules: s, materialise: mat, rounds, claimed, onePartition: medianMax(times.onePartition), everyPartition: medianMax(times.everyPartition) }));
  }),
);
