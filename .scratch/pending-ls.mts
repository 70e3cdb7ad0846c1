// Times getScheduleHealth with a full last_success_changes log: 4,000 rows of 80 finishes.
import pg from "pg";
import { createDb } from "../lib/db/client";
import { migrateDatabase } from "../lib/db/migrate";
import { seedFleet } from "../lib/testing/fleet";
import { getScheduleHealth } from "../lib/health/schedule-health";

const url = process.env.URL!;
if (process.env.SETUP) {
  await migrateDatabase(url);
  const pool = new pg.Pool({ connectionString: url });
  await seedFleet(pool, 200_000);
  await pool.query(`INSERT INTO last_success_changes SELECT array_agg(1 + (random()*199999)::bigint), array_agg(now() - interval '1 minute' * random()) FROM generate_series(1, 4000*80) g GROUP BY g % 4000`);
  await pool.query("VACUUM ANALYZE");
  await pool.end();
  process.exit(0);
}
const pool = new pg.Pool({ connectionString: url, max: 2 });
const db = createDb(pool);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
for (const [label, ids] of [["one schedule", [12345]], ["50 schedules", Array.from({ length: 50 }, (_, i) => 1 + i * 3989)]] as const) {
  const ms: number[] = [];
  for (let i = 0; i < 21; i++) {
    const t0 = performance.now();
    await getScheduleHealth(db, [...ids]);
    if (i > 0) ms.push(performance.now() - t0);
  }
  console.log(`${label}: p50 ${pct(ms, 0.5).toFixed(1)} ms, p95 ${pct(ms, 0.95).toFixed(1)} ms`);
}
await pool.end();
