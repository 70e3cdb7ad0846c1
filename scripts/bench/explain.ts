// `node --import tsx scripts/bench/explain.ts [S]`: materialise S minute-zero slots on a scratch
// database and print the claim plans (all partitions via ANY vs one partition), then drop it.
import { runClockFrom } from "../../lib/testing/clock";
import { runScript, withScratchDatabase } from "./scratch";
import { BENCH_DUE, materialise } from "./spike";

runScript(() =>
  withScratchDatabase("sk_bench_explain", { poolMax: 4, partitions: 16 }, async ({ pool, db }) => {
    const s = Number(process.argv[2] ?? 100_000);
    console.log(JSON.stringify(await materialise(pool, db, { schedules: s, partitions: 16 })));
    await runClockFrom(pool, new Date(BENCH_DUE.getTime() + 1000));
    // The claim's due scan over run_queue (the live part of unfinished runs).
    const overlap = `(s.overlap = 'allow' OR NOT EXISTS (SELECT 1 FROM run_queue p WHERE p.schedule_id = r.schedule_id AND p.scheduled_for < r.scheduled_for AND p.state = 'pending'))`;
    const variants: Record<string, string> = {
      "join, partition = ANY(8)": `SELECT r.run_id FROM run_queue r JOIN schedules s ON s.id = r.schedule_id
        WHERE r.state = 'pending' AND r.run_after <= sk_now() AND r.partition = ANY('{0,2,4,6,8,10,12,14}'::int[]) AND ${overlap}
        ORDER BY r.run_after LIMIT 500 FOR UPDATE OF r SKIP LOCKED`,
      "join, partition = $1": `SELECT r.run_id FROM run_queue r JOIN schedules s ON s.id = r.schedule_id
        WHERE r.state = 'pending' AND r.run_after <= sk_now() AND r.partition = 0 AND ${overlap}
        ORDER BY r.run_after LIMIT 500 FOR UPDATE OF r SKIP LOCKED`,
      "no join, partition = $1": `SELECT r.run_id FROM run_queue r
        WHERE r.state = 'pending' AND r.run_after <= sk_now() AND r.partition = 0
        ORDER BY r.run_after LIMIT 500 FOR UPDATE OF r SKIP LOCKED`,
    };
    for (const [label, q] of Object.entries(variants)) {
      const plan = await pool.query(`EXPLAIN (ANALYZE, BUFFERS) ${q}`);
      console.log(`--- ${label}\n` + plan.rows.map((r) => r["QUERY PLAN"]).join("\n"));
    }
  }),
);
