// `node --import tsx scripts/bench/profile.ts [S] [batch]`: one connection, no workers: time
// claimRunsDetailed and finishRuns per batch on S materialised minute-zero slots (scratch database).
// PROFILE_RESCUE=0 claims as a worker does between its looks for expired leases (see runner.ts).
import { claimRunsDetailed } from "../../lib/runs/claim";
import { finishRuns } from "../../lib/runs/finish";
import { runClockFrom } from "../../lib/testing/clock";
import { runScript, withScratchDatabase } from "./scratch";
import { BENCH_DUE, materialise } from "./spike";
import { timed } from "./timing";

runScript(() =>
  withScratchDatabase("sk_bench_profile", { poolMax: 1, partitions: 16 }, async ({ pool, db }) => {
    const s = Number(process.argv[2] ?? 20_000);
    const batch = Number(process.argv[3] ?? 500);
    await materialise(pool, db, { schedules: s, partitions: 16 });
    // PROFILE_SQL: a statement run before timing, to try a schema change (an index dropped or altered).
    if (process.env.PROFILE_SQL) await pool.query(process.env.PROFILE_SQL);
    await runClockFrom(pool, new Date(BENCH_DUE.getTime() + 1000));
    if (process.env.EXPLAIN) {
      // Plans of the slow statements go to the server log (auto_explain; needs a superuser).
      await pool.query(`LOAD 'auto_explain'`);
      await pool.query(`SET auto_explain.log_min_duration = ${Number(process.env.EXPLAIN)}`);
      await pool.query(`SET auto_explain.log_analyze = on`);
    }
    const parts = Array.from({ length: 8 }, (_, i) => i * 2);
    let claimMs = 0;
    let finishMs = 0;
    let n = 0;
    for (;;) {
      const claim = await timed(() => claimRunsDetailed(db, { workerId: "p", partitions: parts, limit: batch, rescueExpired: process.env.PROFILE_RESCUE !== "0" }));
      const claimed = claim.value.claimed;
      if (claimed.length === 0) break;
      const finish = await timed(() =>
        finishRuns(db, "p", claimed.map((r) => ({ id: r.id, scheduleId: r.scheduleId, queueTid: r.queueTid, attempt: r.attempt, outcome: "succeeded" as const, durationMs: 0 }))),
      );
      claimMs += claim.ms;
      finishMs += finish.ms;
      n += claimed.length;
    }
    console.log(JSON.stringify({ runs: n, batch, claimMsPerBatch: (claimMs / (n / batch)).toFixed(1), finishMsPerBatch: (finishMs / (n / batch)).toFixed(1), runsPerSecond: Math.round(n / ((claimMs + finishMs) / 1000)) }));
  }),
);
