import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { createDb, createPool } from "../db/client";
import type { Timing } from "../schedules/timing";
import { advanceClock, dbNow, setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { bruteForceCronSlots } from "../testing/cron-oracle";
import { makeSchedule } from "../testing/factories";
import { tickOnce } from "./tick";

const t = setupTestDatabase();

const HORIZON = 120;

/**
 * The slots a schedule must have from `from` to `to` (inclusive), worked out without Slotkeeper's
 * slot functions: an interval's slots are the multiples of it since the Unix epoch (the rule
 * docs/schedules.md states), a cron's come from the brute-force oracle (lib/testing/cron-oracle.ts).
 */
function expectedSlots(timing: Timing, from: Date, to: Date): string[] {
  const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19);
  if (timing.everySeconds) {
    const step = timing.everySeconds * 1000;
    const out: string[] = [];
    for (let t = Math.ceil(from.getTime() / step) * step; t <= to.getTime(); t += step) out.push(iso(t));
    return out;
  }
  return bruteForceCronSlots(timing.cron!, timing.timezone ?? "UTC", from.getTime(), to.getTime()).map(iso);
}
const START = new Date("2024-03-30T12:00:00Z"); // the simulated day crosses Europe's spring-forward

it("8 tickers on 8 connections over 500 schedules for a simulated day create every slot exactly once", async () => {
  await setClock(t.pool, START);
  const crons = ["*/15 * * * *", "0 * * * *", "30 2 * * *", "0 9 * * 1-5", "*/20 * * * *", "0 30 1 * * *"];
  const zones = ["UTC", "Europe/London", "America/New_York", "Asia/Kolkata", "Europe/Berlin"];
  const intervals = [300, 600, 900, 1800, 3600, 7200];
  const created: { id: number; timing: Timing }[] = [];
  for (let i = 0; i < 500; i++) {
    const timing: Timing = i % 2 ? { cron: crons[i % crons.length], timezone: zones[i % zones.length] } : { everySeconds: intervals[i % intervals.length] };
    const s = await makeSchedule(t.db, { ...timing, catchUp: "all" });
    created.push({ id: s.id, timing });
  }

  const pools = Array.from({ length: 8 }, () => createPool(t.url, { max: 1 }));
  const ticks = new Array(8).fill(0);
  let running = true;
  const tickers = pools.map(async (pool, i) => {
    const db = createDb(pool);
    while (running) {
      await tickOnce(db, { partitions: null, horizonSeconds: HORIZON, graceSeconds: 30, batchSize: 50 });
      ticks[i]++;
    }
  });
  const stepMs = 15 * 60_000; // some slots land inside the horizon, others are found late (catch-up: all)
  for (let elapsed = 0; elapsed < 86_400_000; elapsed += stepMs) {
    await advanceClock(t.pool, stepMs);
    const seen = [...ticks];
    while (ticks.some((n, i) => n < seen[i] + 2)) await new Promise((r) => setImmediate(r));
  }
  running = false;
  await Promise.all(tickers);
  await Promise.all(pools.map((p) => p.end()));

  const end = new Date((await dbNow(t.pool)).getTime() + HORIZON * 1000); // slots up to now + horizon, inclusive
  const { rows } = await t.db.execute<{ schedule_id: number; slots: string[]; n: number; bad: number }>(sql`
    SELECT schedule_id, array_agg(to_char(scheduled_for AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') ORDER BY scheduled_for) AS slots,
           count(*)::int AS n, count(*) FILTER (WHERE state <> 'pending')::int AS bad
    FROM runs GROUP BY schedule_id`);
  const byId = new Map(rows.map((r) => [r.schedule_id, r]));
  let expectedTotal = 0;
  for (const s of created) {
    const expected = expectedSlots(s.timing, START, end);
    expectedTotal += expected.length;
    const got = byId.get(s.id);
    expect(got?.slots ?? [], `schedule ${s.id} ${JSON.stringify(s.timing)}`).toEqual(expected);
    expect(got?.bad ?? 0).toBe(0);
  }
  const total = rows.reduce((a, r) => a + r.n, 0);
  expect(total).toBe(expectedTotal);
  expect(Math.min(...ticks)).toBeGreaterThan(100);
}, 300_000);

it("a weekly job still runs when every worker restarts hourly: the high-water mark is in the database", async () => {
  await setClock(t.pool, new Date("2024-04-01T00:00:00Z")); // a Monday
  const s = await makeSchedule(t.db, { cron: "0 9 * * 1", catchUp: "skip" });
  for (let hour = 0; hour < 15 * 24; hour++) {
    // A new worker process every hour: fresh pool, nothing carried over in memory.
    const pool = createPool(t.url, { max: 1 });
    const db = createDb(pool);
    await setClock(t.pool, new Date(Date.UTC(2024, 3, 1, hour, 30)));
    await tickOnce(db, { partitions: null, horizonSeconds: HORIZON, graceSeconds: 30 });
    await setClock(t.pool, new Date(Date.UTC(2024, 3, 1, hour, 59)));
    await tickOnce(db, { partitions: null, horizonSeconds: HORIZON, graceSeconds: 30 });
    // The worker runs whatever is due before it restarts (a stand-in for claim + finish).
    await setClock(t.pool, new Date(Date.UTC(2024, 3, 1, hour + 1, 0, 5)));
    await db.execute(sql`WITH done AS (UPDATE runs SET state = 'done', attempts = 1 WHERE state = 'pending' AND due_at <= sk_now() RETURNING id) DELETE FROM run_queue WHERE run_id IN (SELECT id FROM done)`);
    await pool.end();
  }
  const { rows } = await t.db.execute<{ slot: string; state: string; origin: string }>(sql`
    SELECT to_char(scheduled_for AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS slot, state, origin FROM runs
    WHERE schedule_id = ${s.id} ORDER BY scheduled_for`);
  expect(rows).toEqual([
    { slot: "2024-04-01 09:00", state: "done", origin: "schedule" },
    { slot: "2024-04-08 09:00", state: "done", origin: "schedule" },
    { slot: "2024-04-15 09:00", state: "done", origin: "schedule" },
  ]);
}, 120_000);
