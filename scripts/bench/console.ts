// `DATABASE_URL=… node --import tsx scripts/bench/console.ts`: server time of the console's two
// heaviest reads on whatever the database holds (seed it with `npm run seed:demo -- --runs 5000000`):
// the Overview (what GET /api/overview runs) and one schedule's history page (GET
// /api/schedules/{name}/runs), for the schedule with the most runs. Median and max of 7 calls.
import { createDb, createPool } from "../../lib/db/client";
import { getOverview } from "../../lib/health/overview";
import { listRuns } from "../../lib/runs/history";
import { medianMax, timeRounds } from "./timing";

/** Median and max of `n` calls in a row. */
const time = async (fn: () => Promise<unknown>, n = 7) => medianMax(await timeRounds(n, fn));

async function main() {
  const pool = createPool(process.env.DATABASE_URL!, { max: 4 });
  const db = createDb(pool);
  try {
    const { rows } = await pool.query<{ runs: string; schedule_id: string }>(
      `SELECT (SELECT count(*) FROM runs) AS runs,
              (SELECT schedule_id FROM runs GROUP BY 1 ORDER BY count(*) DESC LIMIT 1) AS schedule_id`,
    );
    const scheduleId = Number(rows[0].schedule_id);
    const overview = await time(() => getOverview(db));
    const history = await time(() => listRuns(db, { scheduleIds: [scheduleId] }));
    const { rows: n } = await pool.query(`SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1`, [scheduleId]);
    console.log(JSON.stringify({ runsInTable: Number(rows[0].runs), overview, history: { scheduleRuns: n[0].n, ...history } }, null, 2));
  } finally {
    await pool.end();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
