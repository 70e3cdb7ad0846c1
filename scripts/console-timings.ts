/**
 * How long the console's fleet-scale reads take: a database of its own, migrated and seeded with
 * N schedules (lib/testing/fleet.ts, default 200,000), then each list query (first page and the
 * next), the Overview and one metrics scrape (what GET /api/metrics runs: collect, then render, with
 * its bytes), R times each (default 3), p50 and p95 (nearest rank) printed. Before the Overview and
 * the scrape it runs the alert pass twice, timed, as the workers would have: the first evaluates
 * every schedule (the counts by status are the last pass's), the second only what came due since.
 * The first pass, having rewritten every watch row, vacuums and analyses alert_watch itself
 * (lib/alerts/watch-vacuum.ts).
 * The "pending log" cases time a schedule's health (one schedule, as a search with one result reads it,
 * and a page of 50) with a success log of 320,000 finishes not applied yet (4,000 statements' worth,
 * as between two passes of a worker whose alert pass runs seldom), then empty that log again.
 * Drops its database at the end. ONLY, when given, keeps the cases whose label contains one of its
 * comma-separated parts ("overview" for the Overview alone, "overview,metrics" for both).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node --import tsx scripts/console-timings.ts [N] [R] [ONLY]
 */
import pg from "pg";
import { createDb } from "../lib/db/client";
import { migrateDatabase } from "../lib/db/migrate";
import { evaluateAlerts } from "../lib/alerts/evaluate";
import { getOverview } from "../lib/health/overview";
import { getScheduleHealth } from "../lib/health/schedule-health";
import { searchSchedules, type ScheduleListQuery } from "../lib/schedules/list";
import { toScheduleViewsWithHealth } from "../lib/schedules/queries";
import { seedFleet } from "../lib/testing/fleet";
import { scrapeMetrics } from "./bench/fleet-reads";
import { timed, timeRounds } from "./bench/timing";

const CASES: [string, ScheduleListQuery][] = [
  ["by name", {}],
  ["search, 1 in 1,000 match", { search: "needle" }],
  ["search, no match", { search: "no-such-text" }],
  ["search, two in three match", { search: "sync job" }],
  ["search, one name", { search: "fleet-0123457" }],
  ["handler", { handler: "h3" }],
  ["queue", { queue: "bulk" }],
  ["tag", { tag: "team-2" }],
  ["managed by", { managedBy: "fleet.yaml" }],
  ["paused", { paused: true }],
  ["sort next slot", { sort: "nextDue" }],
  ["sort last success", { sort: "lastSuccess" }],
  ["sort last success, handler + queue", { sort: "lastSuccess", handler: "h2", queue: "bulk" }],
  ["status failing", { status: ["failing"] }],
  ["status late", { status: ["late"] }],
  ["status healthy", { status: ["healthy"] }],
  ["status backlogged (rare)", { status: ["backlogged"] }],
  ["sort status", { sort: "status" }],
];

/** p50 and p95 (nearest rank) of `repeats` timed calls in a row, in ms, as "p50 / p95". */
async function percentiles(fn: () => Promise<unknown>, repeats: number): Promise<string> {
  const ms = (await timeRounds(repeats, fn)).sort((x, y) => x - y);
  const at = (p: number) => ms[Math.max(0, Math.ceil((p / 100) * ms.length) - 1)].toFixed(0);
  return `${at(50).padStart(5)} / ${at(95).padStart(5)}`;
}

async function main() {
  const n = Number(process.argv[2] ?? 200_000);
  const repeats = Number(process.argv[3] ?? 3);
  const only = process.argv[4]?.split(",");
  const wanted = (label: string) => !only || only.some((part) => label.includes(part));
  const admin = process.env.DATABASE_URL;
  if (!admin) throw new Error("set DATABASE_URL to a server this script may create a database on");
  const name = `sk_console_timings_${Date.now().toString(36)}`;
  const a = new pg.Client({ connectionString: admin });
  await a.connect();
  await a.query(`CREATE DATABASE ${name}`);
  const u = new URL(admin);
  u.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: u.toString(), max: 4 });
  // An idle connection ended by the server (the drop at the end, or an operator) is not a failure of the timing.
  pool.on("error", () => {});
  try {
    await migrateDatabase(u.toString());
    const seeded = await timed(() => seedFleet(pool, n));
    console.log(`seeded ${n} schedules in ${(seeded.ms / 1000).toFixed(1)} s`);
    const db = createDb(pool);
    console.log(`p50 / p95 ms of ${repeats} reads each`);
    for (const [label, q] of CASES) {
      if (!wanted(label)) continue;
      const page = async (cursor?: string) => {
        const p = await searchSchedules(db, { limit: 50, ...q, cursor });
        await toScheduleViewsWithHealth(db, p.schedules);
        return p;
      };
      const first = await page();
      const firstMs = await percentiles(() => page(), repeats);
      const nextMs = first.nextCursor ? await percentiles(() => page(first.nextCursor!), repeats) : null;
      console.log(`${label.padEnd(36)} rows ${String(first.schedules.length).padStart(3)}  first page ${firstMs}  next page ${nextMs ?? "    -"}`);
    }
    if (wanted("pending")) {
      // 4,000 log rows of 80 finishes each, spread over the fleet as a statement's finishes are.
      await pool.query(
        `INSERT INTO last_success_changes (schedule_ids, finished_ats)
         SELECT array_agg(1 + (g::bigint * 7919) % $1::bigint), array_agg(now() - make_interval(secs => g % 600)) FROM generate_series(1, 320000) g GROUP BY g % 4000`,
        [n],
      );
      for (const [label, ids] of [["pending log, one schedule's health", [1 + Math.floor(n / 2)]], ["pending log, 50 schedules' health", Array.from({ length: 50 }, (_, i) => 1 + i * Math.floor(n / 50))]] as const) {
        console.log(`${label.padEnd(36)}          ${await percentiles(() => getScheduleHealth(db, [...ids]), repeats)}`);
      }
      await pool.query("DELETE FROM last_success_changes");
    }
    if (wanted("overview") || wanted("metrics")) {
      for (const label of ["alert pass, first", "alert pass, again"]) {
        const pass = await timed(() => evaluateAlerts(db, { publicUrl: "http://localhost:3000", reminderSeconds: 0 }));
        console.log(`${label.padEnd(36)} ${(pass.ms / 1000).toFixed(2)} s, ${pass.value.checked} schedules checked`);
      }
    }
    if (wanted("overview")) {
      await getOverview(db);
      console.log(`${"overview".padEnd(36)}          ${await percentiles(() => getOverview(db), repeats)}`);
    }
    if (wanted("metrics")) {
      const first = await scrapeMetrics(db);
      console.log(`${"metrics scrape".padEnd(36)} bytes ${first.bytes}  ${await percentiles(() => scrapeMetrics(db), repeats)}`);
    }
  } finally {
    await pool.end();
    await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await a.end();
  }
}

void main();
