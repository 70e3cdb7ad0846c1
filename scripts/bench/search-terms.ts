// `BENCH_DATABASE_URL=… node --import tsx scripts/bench/search-terms.ts TERM…`: time what
// `GET /api/schedules?search=TERM&limit=50` reads (CONSOLE_READS.search, the fleet bench's own
// reader) on one connection with the web pool's settings, 15 times per term, and print one JSON line per term:
// { term, results, ms: { min, median, max } }. Run it on a fleet bench's database (`--keep`).
import { createDb, createPool, WEB_POOL_OPTIONS } from "../../lib/db/client";
import { CONSOLE_READS } from "./fleet-reads";

const CALLS = 15;

async function main() {
  const pool = createPool(process.env.BENCH_DATABASE_URL!, { ...WEB_POOL_OPTIONS, max: 1, applicationName: "slotkeeper:bench-search" });
  const db = createDb(pool);
  try {
    for (const term of process.argv.slice(2)) {
      const ms: number[] = [];
      let results = 0;
      for (let i = 0; i < CALLS; i++) {
        const t0 = performance.now();
        const page = (await CONSOLE_READS.search(db, { search: term, historyScheduleId: 0 })) as unknown[];
        ms.push(performance.now() - t0);
        results = page.length;
      }
      ms.sort((a, b) => a - b);
      const round = (x: number) => Math.round(x * 10) / 10;
      console.log(JSON.stringify({ term, results, ms: { min: round(ms[0]), median: round(ms[Math.floor(CALLS / 2)]), max: round(ms[CALLS - 1]) } }));
    }
  } finally {
    await pool.end();
  }
}

main().catch((err) => {
  console.error(`search terms: ${err?.stack ?? err}`);
  process.exit(1);
});
