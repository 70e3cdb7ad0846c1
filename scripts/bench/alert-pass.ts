// `BENCH_DATABASE_URL=… BENCH_PASSES=n node --import tsx scripts/bench/alert-pass.ts`: run the
// product's alert pass (lib/alerts/evaluate.ts) n times in a row and print
// { seconds: [each pass], checked: [schedules each pass read], peakRssMb } as JSON. The fleet
// bench runs it in a process of its own so the peak RSS is the pass's.
import { evaluateAlerts } from "../../lib/alerts/evaluate";
import { configDefaults } from "../../lib/config";
import { createDb, createPool } from "../../lib/db/client";

async function main() {
  const pool = createPool(process.env.BENCH_DATABASE_URL!, { max: 4, applicationName: "slotkeeper:bench-alerts" });
  const db = createDb(pool);
  const seconds: number[] = [];
  const checked: number[] = [];
  try {
    for (let i = 0; i < Number(process.env.BENCH_PASSES ?? 1); i++) {
      const t0 = performance.now();
      const r = await evaluateAlerts(db, { publicUrl: "http://localhost:3000", reminderSeconds: configDefaults.alertReminderMinutes * 60 });
      if (!r.evaluated) throw new Error("alert pass: another evaluator holds the lock");
      seconds.push(Math.round((performance.now() - t0) / 10) / 100);
      checked.push(r.checked);
    }
  } finally {
    await pool.end();
  }
  // maxRSS is the process's high-water mark in kB.
  console.log(JSON.stringify({ seconds, checked, peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024) }));
}

main().catch((err) => {
  console.error(`alert pass: ${err?.stack ?? err}`);
  process.exit(1);
});
